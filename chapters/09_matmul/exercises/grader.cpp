// Grades chapter 9's exercises: the row update must round exactly as step 4's kernel does
// (one rounding per FMA in whole groups of eight, two in the remainder) and leave everything
// past `count` alone; the blocks must be the ones the book's step 6 derives.
#include "checks.hpp"

TEST_CASE("exercise 1: add_scaled_row computes step 4's row update, remainder included", "[3 points]") {
    if (ch09_checks::skip_without_avx2()) return;
    for (std::size_t count : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 100u, 1023u})
        ch09_checks::check_row_update(count, -777.0f, 3);
}

TEST_CASE("exercise 2: choose_blocks derives step 6's blocks from the cache sizes", "[2 points]") {
    for (std::size_t l1 : {0u, 16u << 10, 32u << 10, 48u << 10, 64u << 10})
        for (std::size_t l2 : {0u, 256u << 10, 512u << 10, 1u << 20, 2u << 20})
            for (std::size_t l3 : {0u, 1u << 20, 8u << 20, 32u << 20, 300u << 20})
                for (auto [mr, nr] : {std::pair<std::size_t, std::size_t>{6, 16}, {4, 24}, {12, 32}, {14, 32}, {1, 1}})
                    ch09_checks::check_blocks(l1, l2, l3, mr, nr);
}

TEST_CASE("exercise 3: parallel_share reads Amdahl's law backwards", "[2 points]") {
    CHECK(ch09_exercise::parallel_share(1.6, 2) == Approx(0.75));
    CHECK(ch09_exercise::parallel_share(1.0, 4) == Approx(0.0).margin(1e-12));
    CHECK(ch09_exercise::parallel_share(4.0, 4) == Approx(1.0));
    for (int workers : {2, 3, 4, 8, 64})
        for (double p : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) ch09_checks::check_share(p, workers);
    // Measurements can fall outside the law: slower on more workers, or faster than ideal.
    CHECK(ch09_exercise::parallel_share(0.8, 2) == 0.0);
    CHECK(ch09_exercise::parallel_share(2.3, 2) == 1.0);
}

TEST_CASE("exercise 4: multiply computes C = A x B within the rounding bound", "[2 points]") {
    for (std::size_t n : {1u, 2u, 7u, 33u, 64u, 100u}) ch09_checks::check_product(n, 11);
}
