// Chapter 8, the lesson of its second page: several chases at once, the knee where they stop
// helping, and the prefetcher's reach read from the memory mountain.
#include "cliff_bandwidth.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

namespace ch08 {

// [snippet: together]
namespace {

// K chases in lock step. K is a constant, so the K pointers live in registers and nothing but
// the loads themselves stands between one hop and the next.
template <std::size_t K>
void chase_k(const void** chases, std::size_t hops) {
    std::array<const void*, K> p;
    std::copy_n(chases, K, p.begin());
    for (std::size_t h = 0; h < hops; ++h)
        for (std::size_t j = 0; j < K; ++j) p[j] = *static_cast<const void* const*>(p[j]);
    std::copy_n(p.begin(), K, chases);
}

// chase_k<1> to chase_k<kMaxChases>, indexed by K - 1.
template <std::size_t... I>
constexpr auto chase_table(std::index_sequence<I...>) {
    return std::array{&chase_k<I + 1>...};
}

}  // namespace

void chase_together(std::span<const void*> chases, std::size_t hops) {
    if (chases.empty() || chases.size() > kMaxChases) throw std::invalid_argument("chase_together: 1 to 16 chases");
    static constexpr auto table = chase_table(std::make_index_sequence<kMaxChases>{});
    table[chases.size() - 1](chases.data(), hops);
}
// [end: together]

// [snippet: starts]
std::vector<std::uint32_t> cycle_order(const std::vector<std::uint32_t>& next) {
    std::vector<std::uint32_t> order(next.size());
    std::uint32_t node = 0;
    for (auto& visited : order) {
        visited = node;
        node = next[node];
    }
    return order;
}

std::vector<std::uint32_t> spaced_starts(const std::vector<std::uint32_t>& order, std::size_t k, std::size_t from) {
    const std::size_t n = order.size();
    if (k == 0 || k > n) throw std::invalid_argument("spaced_starts: 1 to n chases");
    std::vector<std::uint32_t> starts;
    for (std::size_t j = 0; j < k; ++j) starts.push_back(order[(from + j * n / k) % n]);
    return starts;
}
// [end: starts]

// [snippet: knee]
Knee knee_of(const std::vector<double>& ns_by_k, double margin) {
    if (ns_by_k.empty()) throw std::invalid_argument("knee_of: no times");
    Knee knee;
    knee.best_ns = *std::min_element(ns_by_k.begin(), ns_by_k.end());
    for (std::size_t i = 0; i < ns_by_k.size(); ++i)
        if (ns_by_k[i] <= (1 + margin) * knee.best_ns) {
            knee.k = i + 1;
            break;
        }
    knee.in_flight = ns_by_k.front() / knee.best_ns;
    return knee;
}
// [end: knee]

// [snippet: reach]
double line_traffic_gbs(double useful_gbs, std::size_t stride_words, std::size_t line_bytes) {
    const std::size_t words_per_line = line_bytes / sizeof(std::uint64_t);
    return useful_gbs * static_cast<double>(std::min(stride_words, words_per_line));
}

std::size_t prefetch_reach(const std::vector<std::size_t>& strides, const std::vector<double>& gbs, double fraction,
                           std::size_t line_bytes) {
    if (strides.empty() || strides.size() != gbs.size())
        throw std::invalid_argument("prefetch_reach: one figure per stride");
    const double first = line_traffic_gbs(gbs[0], strides[0], line_bytes);
    std::size_t reach = strides[0];
    for (std::size_t i = 1; i < strides.size(); ++i) {
        if (line_traffic_gbs(gbs[i], strides[i], line_bytes) < fraction * first) break;
        reach = strides[i];
    }
    return reach;
}
// [end: reach]

}  // namespace ch08
