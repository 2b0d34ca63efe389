// Chapter 8, the lesson of amat.md: every line of this file is on that page, in this order.
#include "cliff_amat.hpp"

#include <stdexcept>

namespace ch08 {

// [snippet: amat]
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
