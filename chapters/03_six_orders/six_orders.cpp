#include "six_orders.hpp"

#include <cmath>

namespace ch03 {

// [snippet: analytic]
char inner_variable(cachebook::LoopOrder order) {
    return cachebook::order_name(order)[2];
}

PerIteration analytic(cachebook::LoopOrder order, std::size_t per_line) {
    const char inner = inner_variable(order);
    const double stride_one = 1.0 / static_cast<double>(per_line);
    // A[i][k], B[k][j], C[i][j]: which index of each is the inner loop's?
    auto rule = [&](char left, char right) { return inner == right ? stride_one : inner == left ? 1.0 : 0.0; };
    return {rule('i', 'k'), rule('k', 'j'), rule('i', 'j')};
}
// [end: analytic]

// [snippet: simulate]
PerIteration Simulated::per_iteration() const {
    const double iterations = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    return {static_cast<double>(a) / iterations, static_cast<double>(b) / iterations,
            static_cast<double>(c) / iterations};
}

namespace {
template <class Walk>
Simulated run(std::size_t n, const cachebook::CacheConfig& config, Walk&& walk) {
    cachebook::Cache cache = cachebook::abc_cache(config);
    const auto at = cachebook::MatmulLayout::packed(n, 8, config.line_bytes);
    walk(at, [&](const cachebook::Access& x) { cache.access(x.address, x.stream, x.write); });
    return {n, cache.stream(1).misses, cache.stream(2).misses, cache.stream(3).misses};
}
}  // namespace

Simulated simulate_order(cachebook::LoopOrder order, std::size_t n, const cachebook::CacheConfig& config) {
    return run(n, config,
               [&](const auto& at, auto&& sink) { cachebook::for_each_matmul_access(order, n, 8, at, sink); });
}
// [end: simulate]

// [snippet: simulate-tiled]
Simulated simulate_tiled(std::size_t n, std::size_t tile, const cachebook::CacheConfig& config) {
    return run(n, config,
               [&](const auto& at, auto&& sink) { cachebook::for_each_tiled_matmul_access(n, tile, 8, at, sink); });
}
// [end: simulate-tiled]

// [snippet: tile]
double tile_bound(std::size_t cache_elems) {
    return std::sqrt(static_cast<double>(cache_elems) / 3.0);
}

double tiled_estimate(std::size_t per_line, std::size_t tile, std::size_t n) {
    const auto b = static_cast<double>(per_line);
    return 2.0 / (b * static_cast<double>(tile)) + 1.0 / (b * static_cast<double>(n));
}
// [end: tile]

}  // namespace ch03
