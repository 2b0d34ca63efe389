#pragma once
// Chapter 1 exercises. Write the bodies in starter.cpp; `make grade CH=01` scores them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ch01_exercise {

/// Exercise 1 (the course notes' lab): the byte addresses an n x n matrix of
/// `elem`-byte values, row-major at address 0, is read at when walked column
/// by column (i inner). col_major_trace(4, 8) starts 0, 32, 64, 96, 8, ...
std::vector<std::uint64_t> col_major_trace(std::size_t n, std::size_t elem);

/// Exercise 2 (the cliff, predicted): without simulating, predict how many misses a
/// column-by-column walk of a rows x cols array of `elem`-byte values (row-major,
/// at address 0) takes in a fully associative LRU cache of `cache_lines` lines of
/// `line_bytes` bytes. You may assume one row fills a whole number of lines.
std::uint64_t predict_column_walk_misses(std::size_t rows, std::size_t cols, std::size_t elem, std::size_t line_bytes,
                                         std::size_t cache_lines);

}  // namespace ch01_exercise
