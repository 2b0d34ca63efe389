// The time model (time_model.hpp), shown whole on the book's page "Priced".
#include "cachebook/time_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace cachebook {

// [snippet: level]
namespace {

LevelTime level_time(const LevelPrice& price, const LevelTraffic& traffic, const Work& work) {
    LevelTime t;
    if (work.dependent) {
        t.latency_ns = traffic.loads * price.latency_ns;  // each load waits for the one before
        return t;
    }
    t.bandwidth_ns = traffic.bytes / price.gbs;                                               // GB/s is bytes per ns
    if (!work.prefetched) t.latency_ns = traffic.loads * price.latency_ns / price.in_flight;  // misses overlapped
    t.refill_ns = traffic.same_set_misses * price.set_refill_ns;  // one set refilled a line at a time
    return t;
}

// A level's bottleneck: what the largest of its three times is.
std::string level_bound(const LevelTime& t, const std::string& name) {
    if (t.refill_ns > t.latency_ns && t.refill_ns > t.bandwidth_ns) return "refill-bound in " + name;
    return (t.latency_ns > t.bandwidth_ns ? "latency-bound in " : "bandwidth-bound in ") + name;
}

}  // namespace

double LevelTime::ns() const {
    return std::max({bandwidth_ns, latency_ns, refill_ns});
}
// [end: level]

// [snippet: predict]
Prediction predict(const std::vector<LevelPrice>& levels, const Work& work, Combine combine) {
    if (levels.size() != work.levels.size()) throw std::invalid_argument("predict: one price per level of traffic");
    Prediction p;
    double largest = work.core_ns;
    p.bottleneck = "core-bound";
    double sum = work.core_ns;
    for (std::size_t k = 0; k < levels.size(); ++k) {
        if (levels[k].gbs <= 0 || levels[k].latency_ns < 0 || levels[k].in_flight < 1)
            throw std::invalid_argument("predict: a level needs a bandwidth, a latency and 1 or more loads in flight");
        const LevelTime t = level_time(levels[k], work.levels[k], work);
        p.levels.push_back(t);
        sum += t.ns();
        if (t.ns() > largest) {
            largest = t.ns();
            p.bottleneck = level_bound(t, levels[k].name);
        }
    }
    p.ns = work.dependent || combine == Combine::added ? sum : largest;
    return p;
}
// [end: predict]

// [snippet: core]
double core_ns(const CorePrice& price, const InCore& in_core, double loads) {
    return loads * (in_core.int_adds * price.int_add_ns + in_core.fp_adds * price.fp_add_ns);
}
// [end: core]

// [snippet: traffic]
std::vector<LevelTraffic> traffic_of(const std::vector<LevelCounts>& counts, double bytes_per_load, double line_bytes) {
    std::vector<LevelTraffic> out;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        const auto hits = static_cast<double>(counts[k].accesses - counts[k].misses);
        const double bytes = k == 0 ? static_cast<double>(counts[0].accesses) * bytes_per_load : hits * line_bytes;
        out.push_back({hits, bytes, k == 0 ? static_cast<double>(counts[0].same_set_misses) : 0});
    }
    const auto memory = static_cast<double>(counts.empty() ? 0 : counts.back().misses);
    out.push_back({memory, memory * line_bytes});
    return out;
}
// [end: traffic]

std::string combine_name(Combine c) {
    return c == Combine::overlapped ? "overlapped" : "added";
}

}  // namespace cachebook
