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

// chase_k<1> to chase_k<kMostChases>, indexed by K - 1.
template <std::size_t... I>
constexpr auto chase_table(std::index_sequence<I...>) {
    return std::array{&chase_k<I + 1>...};
}

}  // namespace

void chase_together(std::span<const void*> chases, std::size_t hops) {
    if (chases.empty() || chases.size() > kMostChases) throw std::invalid_argument("chase_together: 1 to 48 chases");
    static constexpr auto table = chase_table(std::make_index_sequence<kMostChases>{});
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

std::vector<std::size_t> chase_counts() {
    std::vector<std::size_t> counts;
    for (std::size_t k = 1; k <= kMaxChases; ++k) counts.push_back(k);
    for (std::size_t k = kMaxChases + 8; k <= kMostChases; k += 8) counts.push_back(k);
    return counts;
}

// [snippet: knee]
Knee knee_of(const std::vector<std::size_t>& counts, const std::vector<double>& ns, double margin) {
    if (ns.empty() || counts.size() != ns.size() || counts.front() != 1)
        throw std::invalid_argument("knee_of: one time per chase count, from 1 chase");
    Knee knee;
    knee.best_ns = *std::min_element(ns.begin(), ns.end());
    for (std::size_t i = 0; i < ns.size(); ++i)
        if (ns[i] <= (1 + margin) * knee.best_ns) {
            knee.k = counts[i];
            break;
        }
    knee.in_flight = ns.front() / knee.best_ns;
    return knee;
}

Knee knee_of(const std::vector<double>& ns_by_k, double margin) {
    std::vector<std::size_t> counts(ns_by_k.size());
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = i + 1;
    return knee_of(counts, ns_by_k, margin);
}
// [end: knee]

}  // namespace cachebook
