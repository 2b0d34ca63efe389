// Several chases at once and their knee: chapter 8's page bandwidth.md shows every snippet.
#include "cachebook/in_flight.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

namespace cachebook {

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

}  // namespace cachebook
