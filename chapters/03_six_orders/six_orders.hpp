#pragma once
// Chapter 3: the six loop orders of C = A x B. The textbook's per-iteration
// miss analysis, the simulated counts beside it, and the six orders run for real.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/measure.hpp"
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

/// "0.125": three decimals, as the reference tables print them.
std::string three(double v);

/// Where the simulation departs from the textbook by more than a quarter of the analytic value.
bool departs(double simulated, double analytic);

/// The largest tile T with 3 T^2 elements in `cache_elems` elements: sqrt(cache_elems / 3).
double tile_bound(std::size_t cache_elems);
/// The tiled estimate of misses per iteration: 2 / (B T) + 1 / (B n).
double tiled_estimate(std::size_t per_line, std::size_t tile, std::size_t n);

/// The six orders run for real on n x n doubles of integer value.
struct OrderTiming {
    cachebook::LoopOrder order{};
    cachebook::Timing timing;
};
struct MeasuredOrders {
    std::size_t n = 0;
    std::vector<OrderTiming> orders;                ///< in the book's order
    bool identical = false;                         ///< every C equal, byte for byte, to the first
    double checksum = 0;                            ///< sum of C's entries
    [[nodiscard]] double min_of(char inner) const;  ///< fastest order with this inner variable
    [[nodiscard]] double fastest() const;           ///< fastest of all the orders
};
/// Times the given orders (all six by default) `runs` times each, round-robin; C is compared byte for byte.
MeasuredOrders time_orders(std::size_t n, int runs, const std::vector<cachebook::LoopOrder>& orders = {});

/// The cache of the reader's choice: `lines` lines of `line_bytes` bytes in sets of
/// `ways` (0: fully associative). Throws cachebook::UsageError naming the option that
/// does not fit.
cachebook::CacheConfig chosen_cache(std::int64_t lines, std::int64_t ways, std::int64_t line_bytes);
/// Throws cachebook::UsageError when a tile exceeds n, or when simulating n x n matrices
/// in a cache of `ways` ways would take more than seconds (the model scans every way).
void check_simulation(std::int64_t n, std::int64_t ways, std::int64_t tile);

}  // namespace ch03
