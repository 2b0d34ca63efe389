#pragma once
/// @file walks.hpp
/// @brief Row versus column walks through a simulated cache (chapters 2 and 4), and the two
/// walks as real code (chapters 2 and 8).

#include <cstddef>
#include <cstdint>

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

}  // namespace cachebook
