// Grades chapter 1's exercises against the book's own code: the trace must equal
// what common/ generates, and the prediction what the simulator counts.
#include "checks.hpp"

TEST_CASE("exercise 1: col_major_trace matches the book's trace", "[1 point]") {
    ch01_checks::check_trace(4, 8);
    for (std::size_t n : {1u, 3u, 16u, 73u})
        for (std::size_t elem : {4u, 8u}) ch01_checks::check_trace(n, elem);
}

TEST_CASE("exercise 2: predicted column-walk misses match the simulator", "[2 points]") {
    using ch01_checks::Shape;
    for (const Shape s : {Shape{4, 8, 4, 16}, Shape{8, 16, 4, 16}, Shape{16, 32, 8, 64}, Shape{5, 24, 8, 64}})
        ch01_checks::check_column_walk(s, 2 * s.rows);
}
