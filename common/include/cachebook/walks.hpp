#pragma once
/// @file walks.hpp
/// @brief Row versus column walks through a simulated cache (chapters 2 and 4), and the two
/// walks as real code (chapters 2 and 8).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"

namespace cachebook {

/// Misses of the two walks over an n x n matrix, each starting from an empty cache.
struct OrderMisses {
    std::uint64_t row = 0;     ///< row by row (j inner)
    std::uint64_t column = 0;  ///< column by column (i inner)
    /// column / row; 0 when the row walk did not miss.
    [[nodiscard]] double ratio() const {
        return row == 0 ? 0.0 : static_cast<double>(column) / static_cast<double>(row);
    }
};

/// Reads every cell of an n x n matrix of `elem`-byte values at address 0 once,
/// row by row and then (in a fresh cache) column by column.
OrderMisses compare_orders(std::size_t n, const CacheConfig& config, std::size_t elem = 8);

/// The sum of an n x n int array, row by row (j inner) and column by column (i inner), written
/// in that order and kept in it (chapter 2 times the two; chapter 8 prices them).
long long sum_by_rows(const int* a, std::size_t n);
long long sum_by_columns(const int* a, std::size_t n);
/// The first `cols` columns of an int array whose rows are `leading` elements apart, summed
/// column by column (i inner) over `rows` rows (chapter 2 times it at two leading dimensions).
long long sum_columns(const int* a, std::size_t rows, std::size_t cols, std::size_t leading);

/// Where a block of a row-major matrix lands in a set-associative cache, by address alone (the
/// virtual address: an L1 whose sets times line size is the page indexes by it; chapters 2, 3, 4, 9).
struct BlockSets {
    std::size_t lines = 0;          ///< distinct lines the block touches
    std::vector<std::size_t> sets;  ///< the distinct sets they fall into, in increasing order
    std::size_t room = 0;           ///< lines those sets can hold (sets x ways)
};
/// `rows` rows of `row_bytes` bytes each, `stride_bytes` apart, the first at `first_byte`.
BlockSets block_sets(const CacheConfig& cache, std::uint64_t first_byte, std::size_t rows, std::size_t row_bytes,
                     std::size_t stride_bytes);
/// A list of sets as ranges: "0-3", "0, 16, 32, 48", "0-63".
std::string set_list(const std::vector<std::size_t>& sets);

}  // namespace cachebook
