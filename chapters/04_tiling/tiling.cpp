// Chapter 4's lesson: the blocked product, the tile from the cache's size, the tile
// stepper, the tiled transpose, the course notes' lab and study, and the prefetchers' walks.
// Every line of this file is on the chapter's page; the experiment is in lab.cpp.
#include "tiling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "cachebook/chase.hpp"
#include "cachebook/tile_rule.hpp"
#include "cachebook/trace.hpp"

namespace ch04 {

// [snippet: blocked]
void matmul_blocked(std::size_t n, std::size_t tile, const double* __restrict a, const double* __restrict b,
                    double* __restrict c) {
    std::fill(c, c + n * n, 0.0);
    for (std::size_t ii = 0; ii < n; ii += tile)
        for (std::size_t jj = 0; jj < n; jj += tile)
            for (std::size_t kk = 0; kk < n; kk += tile) {
                // One T x T tile of C gets the product of a tile of A and a tile of B.
                const std::size_t i_end = std::min(ii + tile, n), j_end = std::min(jj + tile, n),
                                  k_end = std::min(kk + tile, n);
                for (std::size_t i = ii; i < i_end; ++i)
                    for (std::size_t k = kk; k < k_end; ++k) {
                        const double r = a[i * n + k];
                        for (std::size_t j = jj; j < j_end; ++j) c[i * n + j] += r * b[k * n + j];
                    }
            }
}
// [end: blocked]

// [snippet: tile-formula]
TileChoice tile_from_cache(std::size_t cache_bytes, std::size_t n, std::size_t elem) {
    TileChoice t{cache_bytes, elem, n};
    t.bound = cachebook::tile_bound(cache_bytes, elem);   // 3 T^2 S <= 3/4 L1
    t.tile = cachebook::rule_tile(cache_bytes, elem, n);  // a power of two within it, dividing n
    t.three_tiles = 3 * t.tile * t.tile * elem;
    t.estimate = 2.0 / (static_cast<double>(64 / elem) * static_cast<double>(t.tile));
    return t;
}
// [end: tile-formula]

// [snippet: stepper]
MatmulStepper run_matmul_stepper(std::size_t n, std::size_t tile, std::size_t elem, std::size_t line_bytes,
                                 std::size_t cache_lines) {
    MatmulStepper run;
    run.n = n;
    run.tile = tile;
    run.elem = elem;
    run.line_bytes = line_bytes;
    run.cache_lines = cache_lines;
    run.at = cachebook::MatmulLayout::packed(n, elem, line_bytes);  // no two matrices share a line
    auto cache = cachebook::abc_cache(cachebook::CacheConfig::fully_associative(cache_lines, line_bytes));
    const std::uint64_t base[3] = {run.at.a, run.at.b, run.at.c};
    cachebook::for_each_tiled_matmul_access(n, tile, elem, run.at, [&](const cachebook::Access& x) {
        MatmulStep step;
        step.matrix = x.stream - 1;  // streams 1, 2, 3 are A, B, C
        const std::uint64_t cell = (x.address - base[step.matrix]) / elem;
        step.i = static_cast<std::size_t>(cell / n);
        step.j = static_cast<std::size_t>(cell % n);
        step.line = x.address / line_bytes;
        step.hit = cache.access(x.address, x.stream, x.write).hit;
        step.cache_after = cache.resident_lines();
        run.steps.push_back(step);
        ++(step.hit ? run.hits : run.misses);
    });
    for (int m = 0; m < 3; ++m) run.misses_of[m] = cache.stream(m + 1).misses;
    mark_tile_steps(run);  // the row of C and the tiles of each step, for the table and the widget
    return run;
}
// [end: stepper]

// [snippet: tile-steps]
// Each iteration is three steps, A[i][k], B[k][j], C[i][j]: they name its row of C and its tiles.
void mark_tile_steps(MatmulStepper& run) {
    const std::size_t t = run.tile == 0 ? run.n : run.tile;
    for (std::size_t s = 0; s + 2 < run.steps.size(); s += 3) {
        const std::size_t i = run.steps[s].i, k = run.steps[s].j, j = run.steps[s + 1].j;
        for (std::size_t q = s; q < s + 3; ++q) {
            MatmulStep& st = run.steps[q];
            st.row = i;
            if (run.tile != 0) {
                st.ii = i / t * t;
                st.jj = j / t * t;
                st.kk = k / t * t;
            }
        }
    }
}
// [end: tile-steps]

// [snippet: stepper-cache]
StepperCache stepper_cache(std::size_t tile, std::size_t elem) {
    StepperCache c{tile, elem};
    c.line_bytes = tile * elem;
    c.three_tiles_lines = 3 * tile * tile * elem / c.line_bytes;
    c.cache_lines = c.three_tiles_lines * 4 / 3;
    return c;
}
// [end: stepper-cache]

// [snippet: transpose]
void transpose_naive(std::size_t n, const double* __restrict src, double* __restrict dst) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) dst[j * n + i] = src[i * n + j];
}

void transpose_tiled(std::size_t n, std::size_t tile, const double* __restrict src, double* __restrict dst) {
    for (std::size_t ii = 0; ii < n; ii += tile)
        for (std::size_t jj = 0; jj < n; jj += tile)
            for (std::size_t i = ii; i < std::min(ii + tile, n); ++i)      // T rows of src, along each
                for (std::size_t j = jj; j < std::min(jj + tile, n); ++j)  // T rows of dst, one cell of each
                    dst[j * n + i] = src[i * n + j];
}
// [end: transpose]

// [snippet: oblivious]
namespace {
// Where a span is cut in two: near its middle, on a multiple of kLeaf, so that every leaf but the
// last of a row starts and ends on the same cells as a tiled walk's tiles of kLeaf.
std::size_t cut(Span s) {
    return s.begin + std::max(kLeaf, s.size() / 2 / kLeaf * kLeaf);
}
Span first_half(Span s) {
    return {s.begin, cut(s)};
}
Span second_half(Span s) {
    return {cut(s), s.end};
}
}  // namespace

void split_transpose(Span rows, Span cols, const TransposeLeaf& leaf) {
    if (rows.size() <= kLeaf && cols.size() <= kLeaf) return leaf(rows, cols);
    if (rows.size() >= cols.size()) {  // halve the longer side
        split_transpose(first_half(rows), cols, leaf);
        split_transpose(second_half(rows), cols, leaf);
    } else {
        split_transpose(rows, first_half(cols), leaf);
        split_transpose(rows, second_half(cols), leaf);
    }
}

void split_product(Span i, Span k, Span j, const ProductLeaf& leaf) {
    const std::size_t longest = std::max({i.size(), k.size(), j.size()});
    if (longest <= kLeaf) return leaf(i, k, j);
    if (i.size() == longest) {  // two halves of C's rows: independent
        split_product(first_half(i), k, j, leaf);
        split_product(second_half(i), k, j, leaf);
    } else if (j.size() == longest) {  // two halves of C's columns: independent
        split_product(i, k, first_half(j), leaf);
        split_product(i, k, second_half(j), leaf);
    } else {  // two halves of the sum over k: both add to the same block of C
        split_product(i, first_half(k), j, leaf);
        split_product(i, second_half(k), j, leaf);
    }
}

namespace {
// The leaves: the plain loops of the tiled walks, on one block.
void transpose_block(std::size_t n, const double* __restrict src, double* __restrict dst, Span rows, Span cols) {
    for (std::size_t i = rows.begin; i < rows.end; ++i)
        for (std::size_t j = cols.begin; j < cols.end; ++j) dst[j * n + i] = src[i * n + j];
}
void product_block(std::size_t n, const double* __restrict a, const double* __restrict b, double* __restrict c, Span is,
                   Span ks, Span js) {
    for (std::size_t i = is.begin; i < is.end; ++i)
        for (std::size_t k = ks.begin; k < ks.end; ++k) {
            const double r = a[i * n + k];
            for (std::size_t j = js.begin; j < js.end; ++j) c[i * n + j] += r * b[k * n + j];
        }
}
}  // namespace

void transpose_recursive(std::size_t n, const double* src, double* dst) {
    split_transpose({0, n}, {0, n}, [&](Span rows, Span cols) { transpose_block(n, src, dst, rows, cols); });
}

void matmul_recursive(std::size_t n, const double* a, const double* b, double* c) {
    std::fill(c, c + n * n, 0.0);
    split_product({0, n}, {0, n}, {0, n}, [&](Span i, Span k, Span j) { product_block(n, a, b, c, i, k, j); });
}
// [end: oblivious]

// [snippet: lab]
std::uint64_t transpose_misses(std::size_t n, std::size_t tile, const cachebook::CacheConfig& config) {
    cachebook::Cache cache(config);
    cachebook::for_each_transpose_access(n, tile, 8,
                                         [&](const cachebook::Access& x) { cache.access(x.address, 0, x.write); });
    return cache.total().misses;
}

std::vector<std::pair<std::size_t, std::uint64_t>> misses_by_tile(std::size_t n, const std::vector<std::size_t>& tiles,
                                                                  const cachebook::CacheConfig& cache) {
    std::vector<std::pair<std::size_t, std::uint64_t>> out;
    for (std::size_t tile : tiles) out.emplace_back(tile, transpose_misses(n, tile, cache));
    return out;
}

std::size_t best_tile(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache) {
    const auto counts = misses_by_tile(n, tiles, cache);
    const auto best = std::min_element(counts.begin(), counts.end(),
                                       [](const auto& x, const auto& y) { return x.second < y.second; });
    return best == counts.end() ? 0 : best->first;
}
// [end: lab]

// [snippet: study]
Study study(const Series& s, std::size_t n, const std::vector<std::size_t>& tiles,
            const cachebook::CacheConfig& config) {
    if (tiles.empty()) throw std::invalid_argument("study: no tiles to try");
    if (s.values.size() < 2 * n - 1)
        throw std::invalid_argument(fmt::format("series '{}' has {} values; a {} x {} lag matrix needs {}", s.name,
                                                s.values.size(), n, n, 2 * n - 1));
    Study out{s.name, n, s.values.front(), s.values[2 * n - 2], {}, {}, 0, true};
    // One buffer: src (the lag matrix) then dst, as in the transpose trace.
    std::vector<double> buffer(2 * n * n);
    double* src = buffer.data();
    double* dst = src + n * n;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) src[i * n + j] = s.values[i + j];
    // The address the model sees is the byte offset into the buffer: the real
    // code's accesses, and nothing of the values.
    auto offset = [&](const double* p) { return static_cast<std::uint64_t>(p - src) * sizeof(double); };
    for (std::size_t tile : tiles) {
        std::fill(dst, dst + n * n, 0.0);
        cachebook::Cache cache(config);
        const std::size_t step = tile == 0 ? n : tile;
        for (std::size_t ii = 0; ii < n; ii += step)
            for (std::size_t jj = 0; jj < n; jj += step)
                for (std::size_t i = ii; i < std::min(ii + step, n); ++i)
                    for (std::size_t j = jj; j < std::min(jj + step, n); ++j) {
                        cache.access(offset(&src[i * n + j]));
                        cache.access(offset(&dst[j * n + i]), 0, true);
                        dst[j * n + i] = src[i * n + j];
                    }
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) out.transposed = out.transposed && dst[j * n + i] == src[i * n + j];
        out.by_tile.emplace_back(tile, cache.total().misses);
    }
    out.best = std::min_element(out.by_tile.begin(), out.by_tile.end(), [](const auto& x, const auto& y) {
                   return x.second < y.second;
               })->first;
    out.orders = cachebook::compare_orders(n, config, sizeof(double));
    return out;
}
// [end: study]

// [snippet: prefetch_walks]
std::vector<Walk> prefetch_walks(std::size_t n, std::size_t tile, std::uint64_t seed) {
    std::vector<Walk> walks = {{"row", "row walk", {}},
                               {"column", "column walk", {}},
                               {"tiled", fmt::format("tiled transpose, T = {}", tile), {}},
                               {"chase", "pointer chase (random order)", {}}};
    for (std::uint64_t address : cachebook::row_major_trace(n)) walks[0].accesses.push_back({address, 1, false});
    for (std::uint64_t address : cachebook::col_major_trace(n)) walks[1].accesses.push_back({address, 1, false});
    cachebook::for_each_transpose_access(n, tile, 8,
                                         [&](const cachebook::Access& x) { walks[2].accesses.push_back(x); });
    // A chase reads a cell to learn which cell comes next: the cycle fixes the order of the addresses.
    const auto next = cachebook::single_cycle(n * n, seed);
    std::uint32_t cell = 0;
    for (std::size_t step = 0; step < n * n; ++step, cell = next[cell])
        walks[3].accesses.push_back({static_cast<std::uint64_t>(cell) * 8, 1, false});
    return walks;
}

cachebook::PrefetchCounts run_with_prefetcher(const Walk& walk, const cachebook::CacheConfig& config,
                                              cachebook::PrefetchKind kind) {
    // Streams 1 and 2 are A and B, as the walks number them; the stride table follows each.
    cachebook::PrefetchingCache cache(cachebook::abc_cache(config), cachebook::PrefetchConfig{kind});
    for (const cachebook::Access& x : walk.accesses) cache.access(x.address, x.stream, x.write);
    return cache.counts();
}
// [end: prefetch_walks]

}  // namespace ch04
