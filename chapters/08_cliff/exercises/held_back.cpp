// Chapter 8's held-back cases: other sizes, seeds and probe curves than grader.cpp's,
// run only by the instructor's copy (never in the handout).
#include "checks.hpp"

TEST_CASE("exercise 1 (held back): random_cycle on other sizes and seeds", "[held back][1 point]") {
    for (std::size_t n : {4u, 5u, 255u, 256u, 10007u})
        for (std::uint64_t seed : {0u, 77u, 123456789u}) ch08_checks::check_cycle(n, seed);
    CHECK(ch08_exercise::random_cycle(500, 77) != ch08_exercise::random_cycle(500, 78));
}

TEST_CASE("exercise 2 (held back): line_size on other strides and curves", "[held back][1 point]") {
    ch08_checks::check_line_size({8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096}, {20.0, 300.0, 2.0, 40.0, 400}, 2024,
                                 300);
}
