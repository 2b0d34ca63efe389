// Chapter 1's held-back cases: other shapes than grader.cpp's, run only by the
// instructor's copy (never in the handout), so fitting the visible cases is not enough.
#include <catch2/catch.hpp>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "row_major.hpp"

TEST_CASE("exercise 1 (held back): col_major_trace on other sizes", "[held back][1 point]") {
    for (std::size_t n : {2u, 5u, 31u, 64u})
        for (std::size_t elem : {1u, 2u, 16u}) {
            INFO("n = " << n << ", elem = " << elem);
            CHECK(ch01_exercise::col_major_trace(n, elem) == cachebook::col_major_trace(n, elem));
        }
}

TEST_CASE("exercise 2 (held back): predicted misses on other arrays and lines", "[held back][1 point]") {
    struct Shape {
        std::size_t rows, cols, elem, line;
    };
    for (const Shape s : {Shape{3, 16, 4, 32}, Shape{12, 8, 8, 32}, Shape{7, 64, 2, 128}, Shape{10, 4, 16, 64}})
        for (std::size_t cache_lines = 1; cache_lines <= 2 * s.rows + 1; ++cache_lines) {
            INFO("array " << s.rows << " x " << s.cols << " of " << s.elem << "-byte values, " << s.line
                          << "-byte lines, cache of " << cache_lines << " lines");
            const auto simulated = ch01::run_stepper(false, cache_lines, s.rows, s.cols, s.elem, s.line).misses;
            CHECK(ch01_exercise::predict_column_walk_misses(s.rows, s.cols, s.elem, s.line, cache_lines) == simulated);
        }
}
