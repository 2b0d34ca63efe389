// Grades chapter 1's exercises against the book's own code: the trace must equal
// what common/ generates, and the prediction what the simulator counts.
#include <catch2/catch.hpp>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "row_major.hpp"

TEST_CASE("exercise 1: col_major_trace matches the book's trace", "[1 point]") {
    CHECK(ch01_exercise::col_major_trace(4, 8) == cachebook::col_major_trace(4, 8));
    for (std::size_t n : {1u, 3u, 16u, 73u})
        for (std::size_t elem : {4u, 8u}) {
            INFO("n = " << n << ", elem = " << elem);
            CHECK(ch01_exercise::col_major_trace(n, elem) == cachebook::col_major_trace(n, elem));
        }
}

TEST_CASE("exercise 2: predicted column-walk misses match the simulator", "[2 points]") {
    struct Shape {
        std::size_t rows, cols, elem, line;
    };
    for (const Shape s : {Shape{4, 8, 4, 16}, Shape{8, 16, 4, 16}, Shape{16, 32, 8, 64}, Shape{5, 24, 8, 64}})
        for (std::size_t cache_lines = 1; cache_lines <= 2 * s.rows; ++cache_lines) {
            INFO("array " << s.rows << " x " << s.cols << " of " << s.elem << "-byte values, " << s.line
                          << "-byte lines, cache of " << cache_lines << " lines");
            const auto simulated = ch01::run_stepper(false, cache_lines, s.rows, s.cols, s.elem, s.line).misses;
            CHECK(ch01_exercise::predict_column_walk_misses(s.rows, s.cols, s.elem, s.line, cache_lines) == simulated);
        }
}
