#pragma once
// Chapter 3: the six loop orders of C = A x B. The textbook's per-iteration miss analysis,
// the simulated counts beside it, and the tiled product's estimate.

#include <cstddef>
#include <cstdint>

#include "cachebook/cache.hpp"
#include "cachebook/trace.hpp"

namespace ch03 {

/// Misses per inner iteration of each matrix.
struct PerIteration {
    double a = 0, b = 0, c = 0;
    [[nodiscard]] double total() const { return a + b + c; }
};

/// The loop variable of the innermost loop of an order.
char inner_variable(cachebook::LoopOrder order);

/// The textbook's rule, with `per_line` (B) elements in a line: an array whose
/// right index is the inner variable misses 1/B per iteration, whose left
/// index is 1, and that does not use it 0.
PerIteration analytic(cachebook::LoopOrder order, std::size_t per_line);

/// A simulated run: misses of A, B and C over n^3 iterations.
struct Simulated {
    std::size_t n = 0;
    std::uint64_t a = 0, b = 0, c = 0;
    [[nodiscard]] PerIteration per_iteration() const;
};
/// One loop order through a fresh cache; elements are doubles, matrices on lines of their own.
Simulated simulate_order(cachebook::LoopOrder order, std::size_t n, const cachebook::CacheConfig& cache);
/// The tiled product (tiles ii, jj, kk; then i, k, j) through a fresh cache.
Simulated simulate_tiled(std::size_t n, std::size_t tile, const cachebook::CacheConfig& cache);

/// The largest tile T with 3 T^2 elements in `cache_elems` elements: sqrt(cache_elems / 3).
double tile_bound(std::size_t cache_elems);
/// The tiled estimate of misses per iteration: 2 / (B T) + 1 / (B n).
double tiled_estimate(std::size_t per_line, std::size_t tile, std::size_t n);

}  // namespace ch03
