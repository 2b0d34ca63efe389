// Chapter 9's held-back cases: other counts, caches and kernels than grader.cpp's, run
// only by the instructor's copy (never in the handout).
#include "checks.hpp"

TEST_CASE("exercise 1 (held back): add_scaled_row on other counts", "[held back][2 points]") {
    if (ch09_checks::skip_without_avx2()) return;
    for (std::size_t count : {2u, 6u, 23u, 24u, 25u, 64u, 333u}) ch09_checks::check_row_update(count, 31337.0f, 11);
}

TEST_CASE("exercise 2 (held back): choose_blocks on other caches and kernels", "[held back][1 point]") {
    for (std::size_t l1 : {24u << 10, 80u << 10})
        for (std::size_t l2 : {128u << 10, 1280u << 10, 4u << 20})
            for (std::size_t l3 : {4u << 20, 12u << 20, 96u << 20})
                for (auto [mr, nr] : {std::pair<std::size_t, std::size_t>{8, 8}, {6, 8}, {16, 4}, {3, 40}})
                    ch09_checks::check_blocks(l1, l2, l3, mr, nr);
}

TEST_CASE("exercise 3 (held back): parallel_share on other speed-ups", "[held back][1 point]") {
    for (int workers : {5, 16, 128})
        for (double p : {0.25, 0.6, 0.95}) ch09_checks::check_share(p, workers);
    CHECK(ch09_exercise::parallel_share(0.5, 16) == 0.0);
    CHECK(ch09_exercise::parallel_share(20.0, 16) == 1.0);
}

TEST_CASE("exercise 4 (held back): multiply on other sizes", "[held back][1 point]") {
    for (std::size_t n : {3u, 65u, 129u}) ch09_checks::check_product(n, 23);
}
