#pragma once
// Chapter 4: blocking. The blocked product against the naive one, the tile
// from the L1's size (R7), the tiled transpose (R6, R4), seed 002's lab
// (visit_order, misses_by_tile, best_tile) and its study on a real series.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/walks.hpp"

namespace ch04 {

/// C = A x B in T x T tiles: tiles ii, jj, kk; inside a tile i, k, j; edges clipped. C is zeroed first.
void matmul_blocked(std::size_t n, std::size_t tile, const double* a, const double* b, double* c);

/// R7: the largest tile whose three T x T tiles of `elem`-byte values fit in `cache_bytes`.
struct TileChoice {
    std::size_t cache_bytes = 0, elem = 0, n = 0;
    double bound = 0;              ///< sqrt(cache_bytes / (3 elem))
    std::size_t tile = 0;          ///< the largest power of two <= bound that divides n (at least 1)
    std::size_t three_tiles = 0;   ///< 3 tile^2 elem bytes
    double estimate = 0;           ///< misses per iteration 2 / (B tile), B = 64 / elem
};
TileChoice tile_from_cache(std::size_t cache_bytes, std::size_t n, std::size_t elem = 8);

/// Naive ijk against blocked, on integer-valued n x n doubles.
struct BlockedTiming {
    std::size_t n = 0, tile = 0;
    cachebook::Timing naive, blocked;
    bool identical = false;  ///< memcmp of the two results
    [[nodiscard]] double speedup() const { return naive.min() / blocked.min(); }
};
BlockedTiming time_blocked(std::size_t n, std::size_t tile, int runs);

/// The blocked product for each tile, timed; results checked against the first.
struct SweepPoint {
    std::size_t tile = 0;
    cachebook::Timing timing;
};
struct Sweep {
    std::vector<SweepPoint> points;
    bool identical = false;
    [[nodiscard]] std::size_t best() const;  ///< the tile with the smallest minimum time
};
Sweep tile_sweep(std::size_t n, const std::vector<std::size_t>& tiles, int runs);

/// Transpose misses per element of src (A, stream 1) and dst (B, stream 2).
struct TransposeRate {
    double src = 0, dst = 0;
    [[nodiscard]] double total() const { return src + dst; }
};
TransposeRate transpose_rate(std::size_t n, std::size_t tile, const cachebook::CacheConfig& cache);

/// Seed 002's lab: the misses of the transpose trace, for each tile (0: none), and the best tile.
std::uint64_t transpose_misses(std::size_t n, std::size_t tile, const cachebook::CacheConfig& cache);
std::vector<std::pair<std::size_t, std::uint64_t>> misses_by_tile(std::size_t n, const std::vector<std::size_t>& tiles,
                                                                  const cachebook::CacheConfig& cache);
/// The tile with the fewest misses (the first such, in the order given).
std::size_t best_tile(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache);

/// Real transposes: dst[j][i] = src[i][j].
void transpose_naive(std::size_t n, const double* src, double* dst);
void transpose_tiled(std::size_t n, std::size_t tile, const double* src, double* dst);
struct TransposeTiming {
    std::size_t n = 0, tile = 0;
    cachebook::Timing naive, tiled;
    bool identical = false;
    [[nodiscard]] double speedup() const { return naive.min() / tiled.min(); }
};
TransposeTiming time_transpose(std::size_t n, std::size_t tile, int runs);

/// A named column of numbers.
struct Series {
    std::string name;
    std::vector<double> values;
};
/// Reads the named columns of a CSV file (lines starting with '#' skipped,
/// first other line the header, empty cells skipped). Throws std::runtime_error
/// naming the file and the problem when it is missing, unreadable or malformed.
std::vector<Series> read_csv_columns(const std::string& path, const std::vector<std::string>& columns);
/// A seeded random walk starting at 100: data with no meaning, for comparison.
Series random_walk(std::size_t count, std::uint64_t seed);

/// Seed 002's study: an n x n matrix built from a series (the lag matrix
/// A[i][j] = s[i + j], so it needs 2n - 1 values), transposed for real while
/// every address it touches goes through the cache model.
struct Study {
    std::string name;
    std::size_t n = 0;
    double first = 0, last = 0;        ///< the values used, to show they differ between series
    cachebook::OrderMisses orders;     ///< compare_orders on the matrix's shape
    std::vector<std::pair<std::size_t, std::uint64_t>> by_tile;  ///< the traced real transposes
    std::size_t best = 0;
    bool transposed = false;           ///< dst[j][i] == src[i][j] everywhere
};
Study study(const Series& s, std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache);

}  // namespace ch04
