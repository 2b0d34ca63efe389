// Chapter 4's experiment on cache-oblivious blocking: the recursive walks' traces through two
// caches beside the tiled ones, and the recursive walks timed against the tiled ones.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "cachebook/cpu_time.hpp"
#include "cachebook/matmul_orders.hpp"
#include "cachebook/trace.hpp"
#include "lab.hpp"

namespace ch04 {

// Each trace is reserved whole (two accesses per cell of a transpose, three per iteration of a
// product): at N = 96 a product's is 2.6 million accesses, which growing step by step would copy
// over and over.
std::vector<cachebook::Access> tiled_transpose_trace(std::size_t n, std::size_t tile) {
    std::vector<cachebook::Access> trace;
    trace.reserve(2 * n * n);
    cachebook::for_each_transpose_access(n, tile, 8, [&](const cachebook::Access& x) { trace.push_back(x); });
    return trace;
}

// The same two accesses per cell as the tiled trace, in the order the recursion visits the cells.
std::vector<cachebook::Access> recursive_transpose_trace(std::size_t n) {
    const std::uint64_t base_b = static_cast<std::uint64_t>(n) * n * 8;
    std::vector<cachebook::Access> trace;
    trace.reserve(2 * n * n);
    split_transpose({0, n}, {0, n}, [&](Span rows, Span cols) {
        for (std::size_t i = rows.begin; i < rows.end; ++i)
            for (std::size_t j = cols.begin; j < cols.end; ++j) {
                trace.push_back({cachebook::row_major_address(0, i, j, n, 8), 1, false});
                trace.push_back({cachebook::row_major_address(base_b, j, i, n, 8), 2, true});
            }
    });
    return trace;
}

std::vector<cachebook::Access> tiled_product_trace(std::size_t n, std::size_t tile) {
    std::vector<cachebook::Access> trace;
    trace.reserve(3 * n * n * n);
    const auto at = cachebook::MatmulLayout::packed(n, 8, 64);
    cachebook::for_each_tiled_matmul_access(n, tile, 8, at, [&](const cachebook::Access& x) { trace.push_back(x); });
    return trace;
}

// A, B, C of each iteration, as the tiled trace emits them, in the order matmul_recursive runs them.
std::vector<cachebook::Access> recursive_product_trace(std::size_t n) {
    const auto at = cachebook::MatmulLayout::packed(n, 8, 64);
    std::vector<cachebook::Access> trace;
    trace.reserve(3 * n * n * n);
    split_product({0, n}, {0, n}, {0, n}, [&](Span is, Span ks, Span js) {
        for (std::size_t i = is.begin; i < is.end; ++i)
            for (std::size_t k = ks.begin; k < ks.end; ++k)
                for (std::size_t j = js.begin; j < js.end; ++j) {
                    trace.push_back({cachebook::row_major_address(at.a, i, k, n, 8), 1, false});
                    trace.push_back({cachebook::row_major_address(at.b, k, j, n, 8), 2, false});
                    trace.push_back({cachebook::row_major_address(at.c, i, j, n, 8), 3, true});
                }
    });
    return trace;
}

std::uint64_t trace_misses(const std::vector<cachebook::Access>& trace, const cachebook::CacheConfig& config) {
    cachebook::Cache cache(config);
    for (const auto& x : trace) cache.access(x.address, 0, x.write);
    return cache.total().misses;
}

namespace {
// Each trace of `traces` (one per tile) and the recursive walk's, through each cache.
template <class Tiled, class Recursive>
std::vector<CacheMisses> in_caches(const std::vector<std::size_t>& tiles,
                                   const std::vector<cachebook::CacheConfig>& caches, Tiled&& tiled,
                                   Recursive&& recursive) {
    std::vector<CacheMisses> out;
    for (const auto& cache : caches) out.push_back({cache.describe(), cache.capacity_bytes(), {}, 0, 0});
    for (std::size_t tile : tiles) {
        const auto trace = tiled(tile);
        for (std::size_t c = 0; c < caches.size(); ++c)
            out[c].by_tile.emplace_back(tile, trace_misses(trace, caches[c]));
    }
    const auto trace = recursive();
    for (std::size_t c = 0; c < caches.size(); ++c) {
        out[c].recursive = trace_misses(trace, caches[c]);
        out[c].best = std::min_element(out[c].by_tile.begin(), out[c].by_tile.end(), [](const auto& x, const auto& y) {
                          return x.second < y.second;
                      })->first;
    }
    return out;
}
}  // namespace

std::vector<CacheMisses> transpose_in_caches(std::size_t n, const std::vector<cachebook::CacheConfig>& caches) {
    return in_caches(
        kTransposeTiles, caches, [&](std::size_t tile) { return tiled_transpose_trace(n, tile); },
        [&] { return recursive_transpose_trace(n); });
}

std::vector<CacheMisses> product_in_caches(std::size_t n, const std::vector<cachebook::CacheConfig>& caches) {
    return in_caches(
        kProductTiles, caches, [&](std::size_t tile) { return tiled_product_trace(n, tile); },
        [&] { return recursive_product_trace(n); });
}

namespace {
WalkKinds walk_kinds(std::string walk, const std::vector<cachebook::Access>& trace,
                     const cachebook::CacheConfig& cache) {
    std::vector<std::uint64_t> addresses;
    for (const auto& x : trace) addresses.push_back(x.address);
    WalkKinds w{std::move(walk), cachebook::classify_misses(cache, addresses), 0,
                cachebook::optimal_misses(cache, addresses)};
    // compulsory + capacity is, by the definition of capacity, the fully associative cache's count.
    w.fully_associative = static_cast<std::uint64_t>(static_cast<std::int64_t>(w.kinds.compulsory) + w.kinds.capacity);
    return w;
}
}  // namespace

std::vector<WalkKinds> transpose_kinds(std::size_t n, const std::vector<std::size_t>& tiles,
                                       const cachebook::CacheConfig& cache) {
    std::vector<WalkKinds> out;
    for (std::size_t tile : tiles)
        out.push_back(walk_kinds(tile == 0 ? "none" : fmt::format("{}", tile), tiled_transpose_trace(n, tile), cache));
    out.push_back(walk_kinds("recursive", recursive_transpose_trace(n), cache));
    return out;
}

RecursiveTiming time_recursive_product(std::size_t n, std::size_t tile, const PairRuns& runs) {
    const auto tiled = [tile](std::size_t size, const double* a, const double* b, double* c) {
        matmul_blocked(size, tile, a, b, c);
    };
    auto t = time_products(n, tiled, matmul_recursive, runs);
    return {n, tile, std::move(t.slow), std::move(t.fast), t.identical, std::move(t.claim)};
}

RecursiveTiming time_recursive_transpose(std::size_t n, std::size_t tile, const PairRuns& runs) {
    const auto tiled = [tile](std::size_t size, const double* src, double* dst) {
        transpose_tiled(size, tile, src, dst);
    };
    auto t = time_transposes(n, tiled, transpose_recursive, runs);
    return {n, tile, std::move(t.slow), std::move(t.fast), t.identical, std::move(t.claim)};
}

}  // namespace ch04
