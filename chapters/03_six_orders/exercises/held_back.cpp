// Chapter 3's held-back cases: other line sizes and matrix sizes than grader.cpp's, run
// only by the instructor's copy (never in the handout).
#include "checks.hpp"

TEST_CASE("exercise 1 (held back): analytic_misses with other line sizes", "[held back][1 point]") {
    for (std::size_t per_line : {1u, 3u, 32u}) ch03_checks::check_analysis(per_line);
}

TEST_CASE("exercise 2 (held back): matmul_kij on other sizes", "[held back][1 point]") {
    for (std::size_t n : {2u, 16u, 50u}) ch03_checks::check_kij(n, -1.0);
}
