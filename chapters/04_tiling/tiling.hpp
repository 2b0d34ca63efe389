#pragma once
// Chapter 4's lesson: blocking. The blocked product, the tile from the L1's size, the
// tiled transpose, the course notes' lab (misses_by_tile, best_tile) and its study on a
// real series, the prefetchers' walks, and the tile stepper. The experiment is in lab.hpp.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/prefetch.hpp"
#include "cachebook/trace.hpp"
#include "cachebook/walks.hpp"

namespace ch04 {

/// C = A x B in T x T tiles: tiles ii, jj, kk; inside a tile i, k, j; edges clipped. C is zeroed first.
void matmul_blocked(std::size_t n, std::size_t tile, const double* a, const double* b, double* c);

/// The tile rule (cachebook/tile_rule.hpp) on a cache: three T x T tiles of `elem`-byte values
/// take at most three quarters of `cache_bytes`.
struct TileChoice {
    std::size_t cache_bytes = 0, elem = 0, n = 0;
    double bound = 0;             ///< sqrt(cache_bytes / (4 elem)), from 3 T^2 S <= 3/4 L1
    std::size_t tile = 0;         ///< the largest power of two <= bound that divides n (at least 1)
    std::size_t three_tiles = 0;  ///< 3 tile^2 elem bytes
    double estimate = 0;          ///< misses per iteration 2 / (B tile), B = 64 / elem
};
TileChoice tile_from_cache(std::size_t cache_bytes, std::size_t n, std::size_t elem = 8);

/// The lab of the course notes' *Traversal order and loop tiling*: the misses of the transpose
/// trace, for each tile (0: none), and the best tile.
std::uint64_t transpose_misses(std::size_t n, std::size_t tile, const cachebook::CacheConfig& cache);
std::vector<std::pair<std::size_t, std::uint64_t>> misses_by_tile(std::size_t n, const std::vector<std::size_t>& tiles,
                                                                  const cachebook::CacheConfig& cache);
/// The tile with the fewest misses (the first such, in the order given).
std::size_t best_tile(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache);

/// Real transposes: dst[j][i] = src[i][j].
void transpose_naive(std::size_t n, const double* src, double* dst);
void transpose_tiled(std::size_t n, std::size_t tile, const double* src, double* dst);

/// Cache-oblivious blocking: halve the longest side until every side is at most kLeaf, and run the
/// plain loops on that block. A Span is the half-open range [begin, end) of rows, columns or k.
struct Span {
    std::size_t begin = 0, end = 0;
    [[nodiscard]] std::size_t size() const { return end - begin; }
};
/// The largest side of a block the recursion runs as plain loops. It pays for the calls only: three
/// blocks of 8 x 8 doubles take 1.5 KiB, less than any cache the book models.
inline constexpr std::size_t kLeaf = 8;
using TransposeLeaf = std::function<void(Span rows, Span cols)>;
using ProductLeaf = std::function<void(Span i, Span k, Span j)>;
/// Calls leaf(rows, cols) on the blocks of rows x cols, in the recursion's order.
void split_transpose(Span rows, Span cols, const TransposeLeaf& leaf);
/// Calls leaf(i, k, j) on the blocks of the product's i x k x j, in the recursion's order.
void split_product(Span i, Span k, Span j, const ProductLeaf& leaf);
/// The recursive transpose and product on n x n doubles; no tile. C is zeroed first.
void transpose_recursive(std::size_t n, const double* src, double* dst);
void matmul_recursive(std::size_t n, const double* a, const double* b, double* c);

/// A named column of numbers.
struct Series {
    std::string name;
    std::vector<double> values;
};
/// The course notes' study: an n x n matrix built from a series (the lag matrix
/// A[i][j] = s[i + j], so it needs 2n - 1 values), transposed for real while
/// every address it touches goes through the cache model.
struct Study {
    std::string name;
    std::size_t n = 0;
    double first = 0, last = 0;     ///< the values used, to show they differ between series
    cachebook::OrderMisses orders;  ///< compare_orders on the matrix's shape
    std::vector<std::pair<std::size_t, std::uint64_t>> by_tile;  ///< the traced real transposes
    std::size_t best = 0;
    bool transposed = false;  ///< dst[j][i] == src[i][j] everywhere
};
Study study(const Series& s, std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache);

/// The lab's last step: a prefetcher in front of the lab's cache. One walk over an n x n matrix of
/// doubles, as the accesses it makes (stream 1 is the matrix read, stream 2 the transpose's B).
struct Walk {
    std::string key;   ///< "row", "column", "tiled", "chase"
    std::string name;  ///< as the table prints it
    std::vector<cachebook::Access> accesses;
};
/// Row walk, column walk, the tiled transpose (tiles of `tile`) and a pointer chase through every
/// cell in the order of a random single cycle fixed by `seed`.
std::vector<Walk> prefetch_walks(std::size_t n, std::size_t tile, std::uint64_t seed);
/// The three prefetchers the chapter compares, in its table's order: none, next-line, stride.
inline constexpr cachebook::PrefetchKind kPrefetchKinds[] = {
    cachebook::PrefetchKind::none, cachebook::PrefetchKind::next_line, cachebook::PrefetchKind::stride};
/// Demand misses, prefetches issued and useful of `walk` through a fresh cache, keyed by stream.
cachebook::PrefetchCounts run_with_prefetcher(const Walk& walk, const cachebook::CacheConfig& cache,
                                              cachebook::PrefetchKind kind);

/// The tile stepper's cache, from the course notes' own proportions: a line holds one
/// row of a tile (the course notes' model: T = 8 doubles, 64-byte lines), and three
/// tiles fill three quarters of the cache (the course notes' model: 24 of 32 lines;
/// its L1 example: 24 of 32 KiB).
struct StepperCache {
    std::size_t tile = 0, elem = 0;
    std::size_t line_bytes = 0;         ///< tile x elem
    std::size_t three_tiles_lines = 0;  ///< 3 tile^2 elem / line_bytes = 3 tile
    std::size_t cache_lines = 0;        ///< three_tiles_lines x 4 / 3
    [[nodiscard]] std::size_t cache_bytes() const { return cache_lines * line_bytes; }
};
StepperCache stepper_cache(std::size_t tile, std::size_t elem = 8);

/// One access of the stepper's product: which matrix and cell, its line, hit or
/// miss, the lines held afterwards (way by way) and the tile step it belongs to.
struct MatmulStep {
    int matrix = 0;                      ///< 0 A (read), 1 B (read), 2 C (updated)
    std::size_t i = 0, j = 0;            ///< the cell of that matrix
    std::size_t ii = 0, jj = 0, kk = 0;  ///< the corners of the tiles (all 0 when untiled)
    std::size_t row = 0;                 ///< the row of C being built (i of the iteration)
    std::uint64_t line = 0;              ///< address / line_bytes
    bool hit = false;
    std::vector<std::uint64_t> cache_after;
};

/// Every access of C = A x B on n x n doubles, as cachebook::for_each_tiled_matmul_access
/// emits it (tile 0: the plain ikj loop), through a fully associative LRU cache.
struct MatmulStepper {
    std::size_t n = 0, tile = 0, elem = 0, line_bytes = 0, cache_lines = 0;
    cachebook::MatmulLayout at;
    std::vector<MatmulStep> steps;
    std::uint64_t hits = 0, misses = 0;
    std::uint64_t misses_of[3] = {0, 0, 0};  ///< A, B, C, as the cache's own per-stream counts
};
MatmulStepper run_matmul_stepper(std::size_t n, std::size_t tile, std::size_t elem, std::size_t line_bytes,
                                 std::size_t cache_lines);
/// Sets each step's row of C and the corners of its tiles, from the cells of its iteration.
void mark_tile_steps(MatmulStepper& run);

}  // namespace ch04
