#pragma once
// Chapter 2: row or column. The miss arithmetic, where a column's lines fall in a
// set-associative cache, the power-of-two trap and its cure, and the two sums.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/walks.hpp"

namespace ch02 {

using cachebook::CacheConfig;  // a cache's geometry: sets, ways, line size, replacement

/// Misses per element of the two walks when the cache cannot keep a column's lines.
struct PerElement {
    std::size_t line_bytes = 0, elem_bytes = 0;
    std::size_t per_line = 0;  ///< B, elements in one line
    double row = 0;            ///< 1 / B: one miss per line
    double column = 0;         ///< 1: every access a new line
};
PerElement per_element(std::size_t line_bytes, std::size_t elem_bytes);

/// The 4 KiB 8-way cache of the matrix-read table: 4096 B, 8 sets x 8 ways x 64 B lines, LRU.
cachebook::CacheConfig matrix_read_cache();

/// Where the lines of one column of a rows x cols matrix land in a set-associative cache.
struct ColumnFootprint {
    std::size_t lines = 0;     ///< distinct lines the column touches
    std::size_t sets = 0;      ///< distinct sets those lines map to
    std::size_t capacity = 0;  ///< lines those sets can hold (sets x ways)
};
/// Column 0 of a matrix whose rows are `leading` elements apart.
ColumnFootprint column_footprint(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t leading,
                                 std::size_t elem);

/// One row of the matrix-read table (each cell of an n x n double matrix read once), with what explains it.
struct MatrixReadRow {
    std::size_t n = 0;
    std::uint64_t matrix_bytes = 0;
    bool fits = false;  ///< the whole matrix fits in the cache
    ColumnFootprint column;
    cachebook::OrderMisses misses;
};
MatrixReadRow matrix_read_row(const cachebook::CacheConfig& cache, std::size_t n);

/// The course notes' L1: 32 KiB, 8-way, 64-byte lines, so 64 sets, LRU.
cachebook::CacheConfig l1_32kib();

/// The first `cols_walked` columns of a rows x leading matrix, column by column.
struct ColumnWalk {
    std::size_t rows = 0, cols_walked = 0, leading = 0, elem = 0;
    ColumnFootprint column;
    std::vector<std::uint64_t> misses_per_column;
    std::uint64_t total = 0;
};
ColumnWalk column_walk(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t cols_walked,
                       std::size_t leading, std::size_t elem);

/// The power-of-two trap: double a[256][256] walked over its first 64 columns, with leading
/// dimension 256, 256 + 1 (one double of padding) and 256 + one line of doubles.
std::vector<ColumnWalk> power_of_two_trap(const cachebook::CacheConfig& cache, std::size_t n = 256,
                                          std::size_t cols_walked = 64);

/// The measured sums of an n x n int array, row by row and column by column (common/walks.hpp;
/// chapter 8 times them too).
using cachebook::sum_by_columns;
using cachebook::sum_by_rows;

}  // namespace ch02
