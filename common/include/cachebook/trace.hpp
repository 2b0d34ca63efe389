#pragma once
/// @file trace.hpp
/// @brief Address traces of the loop nests the book studies.
///
/// A `for_each_*` generator calls a function for every access without storing
/// anything (for large matrices); the plain walks also come as vectors (for
/// tables and tests). The matrices are
/// row-major: cell (i, j) of an n-column matrix of `elem`-byte values lives at
/// base + (i * n + j) * elem.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachebook/cache.hpp"

namespace cachebook {

/// One memory access of a trace.
struct Access {
    std::uint64_t address = 0;
    int stream = 0;  ///< which array (see each generator for the numbering)
    bool write = false;
    friend bool operator==(const Access&, const Access&) = default;
};

/// A cell of a matrix, (row, column).
using Cell = std::pair<std::size_t, std::size_t>;

/// Byte address of cell (i, j) in a row-major matrix with `cols` columns.
constexpr std::uint64_t row_major_address(std::uint64_t base, std::size_t i, std::size_t j, std::size_t cols,
                                          std::size_t elem) {
    return base + (static_cast<std::uint64_t>(i) * cols + j) * elem;
}

/// Cells of an n x n matrix in the order of a plain (tile = 0) or tiled walk:
/// tiles by rows of tiles, cells by rows inside a tile, ragged edges clipped.
std::vector<Cell> visit_order(std::size_t n, std::size_t tile = 0);

/// Addresses of an n x n matrix read row by row (j inner).
std::vector<std::uint64_t> row_major_trace(std::size_t n, std::size_t elem = 8, std::uint64_t base = 0);
/// Addresses of an n x n matrix read column by column (i inner).
std::vector<std::uint64_t> col_major_trace(std::size_t n, std::size_t elem = 8, std::uint64_t base = 0);

/// Calls f(address) for the first `cols_walked` columns of a rows x cols
/// matrix whose rows are `leading` elements apart, column by column.
template <class F>
void for_each_column_walk(std::size_t rows, std::size_t cols_walked, std::size_t leading, std::size_t elem, F&& f) {
    for (std::size_t j = 0; j < cols_walked; ++j)
        for (std::size_t i = 0; i < rows; ++i) f(row_major_address(0, i, j, leading, elem));
}

/// Calls f(Access) for the transpose B[j][i] = A[i][j] of an n x n matrix:
/// for each cell, a read of A (stream 1, base 0), then a write of B (stream 2,
/// base n*n*elem). Tiles walked as in visit_order().
template <class F>
void for_each_transpose_access(std::size_t n, std::size_t tile, std::size_t elem, F&& f) {
    const std::uint64_t base_b = static_cast<std::uint64_t>(n) * n * elem;
    const std::size_t step = tile == 0 ? n : tile;
    for (std::size_t ii = 0; ii < n; ii += step)
        for (std::size_t jj = 0; jj < n; jj += step)
            for (std::size_t i = ii; i < std::min(ii + step, n); ++i)
                for (std::size_t j = jj; j < std::min(jj + step, n); ++j) {
                    f(Access{row_major_address(0, i, j, n, elem), 1, false});
                    f(Access{row_major_address(base_b, j, i, n, elem), 2, true});
                }
}

/// The six orders of the triple loop of C = A x B.
enum class LoopOrder { ijk, ikj, jik, jki, kij, kji };
/// All six, in the book's order: ijk, jik, jki, kji, kij, ikj.
inline constexpr LoopOrder kAllOrders[] = {LoopOrder::ijk, LoopOrder::jik, LoopOrder::jki,
                                           LoopOrder::kji, LoopOrder::kij, LoopOrder::ikj};
/// "ijk", "ikj", ...
std::string_view order_name(LoopOrder o);
/// Parses "ijk" ... "kji"; throws std::invalid_argument otherwise.
LoopOrder parse_order(std::string_view name);

/// Where the three matrices of an n x n product start: A at 0, B and C each
/// after the previous one, rounded up to a whole `align`-byte line so that no
/// two matrices share a line.
struct MatmulLayout {
    std::uint64_t a = 0, b = 0, c = 0;
    static MatmulLayout packed(std::size_t n, std::size_t elem, std::size_t align);
};

/// Calls f(Access) for C = A x B in the given loop order; every iteration
/// touches A[i][k] (stream 1), then B[k][j] (stream 2), then C[i][j] (stream 3, a write).
template <class F>
void for_each_matmul_access(LoopOrder order, std::size_t n, std::size_t elem, const MatmulLayout& at, F&& f) {
    auto body = [&](std::size_t i, std::size_t j, std::size_t k) {
        f(Access{row_major_address(at.a, i, k, n, elem), 1, false});
        f(Access{row_major_address(at.b, k, j, n, elem), 2, false});
        f(Access{row_major_address(at.c, i, j, n, elem), 3, true});
    };
    // x, y, z are the outer, middle and inner loop variables.
    auto nest = [&](auto&& map) {
        for (std::size_t x = 0; x < n; ++x)
            for (std::size_t y = 0; y < n; ++y)
                for (std::size_t z = 0; z < n; ++z) map(x, y, z);
    };
    switch (order) {
        case LoopOrder::ijk:
            nest([&](auto i, auto j, auto k) { body(i, j, k); });
            break;
        case LoopOrder::ikj:
            nest([&](auto i, auto k, auto j) { body(i, j, k); });
            break;
        case LoopOrder::jik:
            nest([&](auto j, auto i, auto k) { body(i, j, k); });
            break;
        case LoopOrder::jki:
            nest([&](auto j, auto k, auto i) { body(i, j, k); });
            break;
        case LoopOrder::kij:
            nest([&](auto k, auto i, auto j) { body(i, j, k); });
            break;
        case LoopOrder::kji:
            nest([&](auto k, auto j, auto i) { body(i, j, k); });
            break;
    }
}

/// Tiled C = A x B: tiles walked ii, jj, kk; inside a tile i, k, j; edges clipped.
/// Same streams and per-iteration order as for_each_matmul_access().
template <class F>
void for_each_tiled_matmul_access(std::size_t n, std::size_t tile, std::size_t elem, const MatmulLayout& at, F&& f) {
    const std::size_t t = tile == 0 ? n : tile;
    for (std::size_t ii = 0; ii < n; ii += t)
        for (std::size_t jj = 0; jj < n; jj += t)
            for (std::size_t kk = 0; kk < n; kk += t)
                for (std::size_t i = ii; i < std::min(ii + t, n); ++i)
                    for (std::size_t k = kk; k < std::min(kk + t, n); ++k)
                        for (std::size_t j = jj; j < std::min(jj + t, n); ++j) {
                            f(Access{row_major_address(at.a, i, k, n, elem), 1, false});
                            f(Access{row_major_address(at.b, k, j, n, elem), 2, false});
                            f(Access{row_major_address(at.c, i, j, n, elem), 3, true});
                        }
}

/// Runs a trace of plain addresses through a fresh cache; returns the total counts.
Counts simulate(const CacheConfig& config, const std::vector<std::uint64_t>& addresses);

/// A cache with the three streams "A", "B", "C" registered as ids 1, 2, 3
/// (the matmul and transpose generators' numbering; a transpose uses A and B).
Cache abc_cache(const CacheConfig& config);

}  // namespace cachebook
