// Chapter 1's held-back cases: other shapes than grader.cpp's, run only by the
// instructor's copy (never in the handout), so fitting the visible cases is not enough.
#include "checks.hpp"

TEST_CASE("exercise 1 (held back): col_major_trace on other sizes", "[held back][1 point]") {
    for (std::size_t n : {2u, 5u, 31u, 64u})
        for (std::size_t elem : {1u, 2u, 16u}) ch01_checks::check_trace(n, elem);
}

TEST_CASE("exercise 2 (held back): predicted misses on other arrays and lines", "[held back][1 point]") {
    using ch01_checks::Shape;
    for (const Shape s : {Shape{3, 16, 4, 32}, Shape{12, 8, 8, 32}, Shape{7, 64, 2, 128}, Shape{10, 4, 16, 64}})
        ch01_checks::check_column_walk(s, 2 * s.rows + 1);
}
