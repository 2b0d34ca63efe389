#pragma once
// How chapter 1's exercises are checked, against the book's own code; grader.cpp and the
// instructor's held-back cases hold only the cases.
#include <catch2/catch.hpp>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "row_major.hpp"

namespace ch01_checks {

// Exercise 1: the column-major trace equals the one common/ generates.
inline void check_trace(std::size_t n, std::size_t elem) {
    INFO("n = " << n << ", elem = " << elem);
    CHECK(ch01_exercise::col_major_trace(n, elem) == cachebook::col_major_trace(n, elem));
}

struct Shape {
    std::size_t rows, cols, elem, line;
};

// Exercise 2: the predicted misses of a column walk equal the simulator's, for every cache
// of 1 to MOST_LINES lines.
inline void check_column_walk(const Shape& s, std::size_t most_lines) {
    for (std::size_t cache_lines = 1; cache_lines <= most_lines; ++cache_lines) {
        INFO("array " << s.rows << " x " << s.cols << " of " << s.elem << "-byte values, " << s.line
                      << "-byte lines, cache of " << cache_lines << " lines");
        const auto simulated = ch01::run_stepper(false, cache_lines, s.rows, s.cols, s.elem, s.line).misses;
        CHECK(ch01_exercise::predict_column_walk_misses(s.rows, s.cols, s.elem, s.line, cache_lines) == simulated);
    }
}

}  // namespace ch01_checks
