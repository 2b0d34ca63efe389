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

std::vector<cachebook::Access> tiled_transpose_trace(std::size_t n, std::size_t tile) {
    std::vector<cachebook::Access> trace;
    cachebook::for_each_transpose_access(n, tile, 8, [&](const cachebook::Access& x) { trace.push_back(x); });
    return trace;
}

// The same two accesses per cell as the tiled trace, in the order the recursion visits the cells.
std::vector<cachebook::Access> recursive_transpose_trace(std::size_t n) {
    const std::uint64_t base_b = static_cast<std::uint64_t>(n) * n * 8;
    std::vector<cachebook::Access> trace;
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
    const auto at = cachebook::MatmulLayout::packed(n, 8, 64);
    cachebook::for_each_tiled_matmul_access(n, tile, 8, at, [&](const cachebook::Access& x) { trace.push_back(x); });
    return trace;
}

// A, B, C of each iteration, as the tiled trace emits them, in the order matmul_recursive runs them.
std::vector<cachebook::Access> recursive_product_trace(std::size_t n) {
    const auto at = cachebook::MatmulLayout::packed(n, 8, 64);
    std::vector<cachebook::Access> trace;
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

RecursiveTiming time_recursive_product(std::size_t n, std::size_t tile, const cachebook::RunBudget& runs) {
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<double> tiled(n * n), recursive(n * n);
    RecursiveTiming t{n, tile, {}, {}, false};
    const auto began = cachebook::Clock::now();
    for (int r = 0; runs.another(r, cachebook::seconds_since(began)); ++r) {
        double start = cachebook::thread_cpu_seconds();
        matmul_blocked(n, tile, m.a.data(), m.b.data(), tiled.data());
        t.tiled.runs.push_back(cachebook::thread_cpu_seconds() - start);
        cachebook::clobber_memory();
        start = cachebook::thread_cpu_seconds();
        matmul_recursive(n, m.a.data(), m.b.data(), recursive.data());
        t.recursive.runs.push_back(cachebook::thread_cpu_seconds() - start);
        cachebook::clobber_memory();
    }
    t.identical = std::memcmp(tiled.data(), recursive.data(), n * n * sizeof(double)) == 0;
    return t;
}

RecursiveTiming time_recursive_transpose(std::size_t n, std::size_t tile, const cachebook::RunBudget& runs) {
    // Both write the same dst, so that both see the same pages, as time_transpose does.
    std::vector<double> src(n * n), dst(n * n), tiled(n * n);
    for (std::size_t k = 0; k < n * n; ++k) src[k] = static_cast<double>(k % 1000);
    RecursiveTiming t{n, tile, {}, {}, true};
    transpose_tiled(n, tile, src.data(), dst.data());  // first touch of every page, untimed
    tiled = dst;
    const auto began = cachebook::Clock::now();
    for (int r = 0; runs.another(r, cachebook::seconds_since(began)); ++r) {
        double start = cachebook::thread_cpu_seconds();
        transpose_tiled(n, tile, src.data(), dst.data());
        t.tiled.runs.push_back(cachebook::thread_cpu_seconds() - start);
        cachebook::clobber_memory();
        std::fill(dst.begin(), dst.end(), -1.0);
        start = cachebook::thread_cpu_seconds();
        transpose_recursive(n, src.data(), dst.data());
        t.recursive.runs.push_back(cachebook::thread_cpu_seconds() - start);
        cachebook::clobber_memory();
        t.identical = t.identical && dst == tiled;
    }
    return t;
}

cachebook::ClaimResult recursive_claim(const RecursiveTiming& timing, std::size_t claim_n, double max_noise) {
    return decide_runs(timing.tiled, timing.recursive, 1.0 / kRecursiveSlack, timing.n, claim_n, max_noise);
}

}  // namespace ch04
