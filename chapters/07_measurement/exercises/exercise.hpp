#pragma once
// Chapter 7 exercises. Write the bodies in starter.cpp; `make grade CH=07` scores them.
#include <cstddef>
#include <cstdint>

namespace ch07_exercise {

/// Exercise 1 (when not to bother): a part of a program takes `fraction` of
/// its time (0 < fraction <= 1). How many times faster must that part become
/// for the whole program to become `target` times faster? Return 0 when no
/// speed-up of the part can do it (the target is at or beyond 1 / (1 - fraction)).
/// For fraction 0.5 and target 1.6 the answer is 4. The grader checks your
/// answer with the chapter's own Amdahl function.
double needed_speedup(double fraction, double target);

/// Exercise 2 (rule 6, and what cachegrind counted): predict, without
/// simulating, the misses of the column walk (a[j][i], i outer) of an n x n
/// array of `elem`-byte values, row-major from address 0, through an LRU cache
/// of `sets` sets x `ways` ways x `line_bytes`-byte lines. All of n, elem,
/// sets, line_bytes are powers of two, and a row is at least one line.
/// Hint: which sets do the n lines of one column fall into, and how many land
/// in each? The grader compares with the book's cache model.
std::uint64_t predict_column_misses(std::size_t n, std::size_t elem, std::size_t sets, std::size_t ways,
                                    std::size_t line_bytes);

}  // namespace ch07_exercise
