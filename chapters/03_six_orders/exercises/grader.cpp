// Grades chapter 3's exercises against the book's own code: the analysis must
// equal ch03::analytic for every order, and the product the book's ijk bit for bit.
#include "checks.hpp"

TEST_CASE("exercise 1: analytic_misses matches the book's analysis", "[1 point]") {
    for (std::size_t per_line : {2u, 4u, 8u, 16u}) ch03_checks::check_analysis(per_line);
}

TEST_CASE("exercise 2: matmul_kij gives the same bits as the book's ijk", "[1 point]") {
    for (std::size_t n : {1u, 7u, 32u, 65u}) ch03_checks::check_kij(n, 12345.0);
}
