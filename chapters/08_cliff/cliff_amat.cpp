// Chapter 8, the lesson of amat.md: every line of this file is on that page, in this order.
#include "cliff_amat.hpp"

#include <stdexcept>
#include <utility>

#include "cachebook/trace.hpp"

namespace ch08 {

// [snippet: hierarchy]
double LevelCounts::miss_rate() const {
    return accesses == 0 ? 0.0 : static_cast<double>(misses) / static_cast<double>(accesses);
}

Hierarchy::Hierarchy(const std::vector<cachebook::CacheConfig>& levels) : counts_(levels.size()) {
    for (const auto& config : levels) caches_.emplace_back(config);
}

void Hierarchy::access(std::uint64_t address) {
    for (std::size_t k = 0; k < caches_.size(); ++k) {
        ++counts_[k].accesses;
        if (caches_[k].access(address).hit) return;  // this level holds it: the load stops here
        ++counts_[k].misses;                         // else it goes on to the next level
    }
}

void Hierarchy::reset_counts() {
    for (auto& c : counts_) c = {};
}
// [end: hierarchy]

// [snippet: walks]
Walk row_walk(std::size_t n) {
    return [n](Hierarchy& h) {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) h.access(cachebook::row_major_address(0, i, j, n, sizeof(int)));
    };
}

Walk column_walk(std::size_t n) {
    return [n](Hierarchy& h) {
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t i = 0; i < n; ++i) h.access(cachebook::row_major_address(0, i, j, n, sizeof(int)));
    };
}

Walk chase_walk(std::vector<std::uint32_t> next, std::size_t line) {
    return [next = std::move(next), line](Hierarchy& h) {
        std::uint32_t node = 0;
        for (std::size_t hop = 0; hop < next.size(); ++hop) {
            h.access(static_cast<std::uint64_t>(node) * line);
            node = next[node];
        }
    };
}

Walk sequential_walk(std::size_t bytes, std::size_t line) {
    return [bytes, line](Hierarchy& h) {
        for (std::size_t offset = 0; offset < bytes; offset += line) h.access(offset);
    };
}
// [end: walks]

// [snippet: amat]
std::vector<LevelCounts> warm_counts(const std::vector<cachebook::CacheConfig>& levels, const Walk& walk) {
    Hierarchy h(levels);
    walk(h);  // the warm-up pass
    h.reset_counts();
    walk(h);  // the pass that counts
    return h.counts();
}

double amat_ns(const std::vector<double>& latency_ns, const std::vector<double>& miss_rates) {
    if (latency_ns.size() != miss_rates.size() + 1)
        throw std::invalid_argument("amat_ns: one latency per level, and one for memory");
    // From the inside out: what a miss of the last level costs, then of the one before, ...
    double penalty = 0;
    for (std::size_t k = miss_rates.size(); k-- > 0;)
        penalty = miss_rates[k] * (latency_ns[k + 1] - latency_ns[k] + penalty);
    return latency_ns[0] + penalty;
}

std::vector<double> miss_rates(const std::vector<LevelCounts>& counts) {
    std::vector<double> rates;
    for (const auto& c : counts) rates.push_back(c.miss_rate());
    return rates;
}
// [end: amat]

}  // namespace ch08
