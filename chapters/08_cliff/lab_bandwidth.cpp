// Chapter 8, the lab of its second page: the k-chases curves, the read bandwidth of each level,
// the memory mountain and their claims, around the lesson of bandwidth.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch08 {

ChaseSet::ChaseSet(std::size_t bytes, std::uint64_t seed)
    : buf(bytes, PageSize::Huge), order(cycle_order(cachebook::single_cycle(bytes / kNodeBytes, seed))) {
    // link_chase lays the same cycle: single_cycle with the same seed.
    cachebook::link_chase(buf, order.size(), kNodeBytes, seed);
}

std::vector<const void*> ChaseSet::starts(std::size_t k) {
    const std::size_t n = order.size();
    base = (base + static_cast<std::size_t>(0.6180339887 * static_cast<double>(n))) % n;
    std::vector<const void*> out;
    for (std::uint32_t node : spaced_starts(order, k, base)) out.push_back(buf.data() + std::size_t{node} * kNodeBytes);
    return out;
}

double chases_ns_per_access(ChaseSet& set, std::size_t k, std::size_t accesses, std::size_t warmup, int runs) {
    auto chases = set.starts(k);
    const std::size_t hops = std::max<std::size_t>(1, accesses / k);
    double best = 1e300;
    for (int r = 0; r < runs; ++r) {
        chase_together(chases, warmup / k + 1);
        const auto t0 = cachebook::Clock::now();
        chase_together(chases, hops);
        best = std::min(best, cachebook::seconds_since(t0));
    }
    cachebook::do_not_optimize(chases);
    return best / static_cast<double>(hops * k) * 1e9;
}

std::vector<ChaseCurve> measure_chases(const cachebook::LevelSizes& sizes, const Options& options) {
    const auto counts = cachebook::chase_counts();
    std::vector<ChaseCurve> curves = {
        {"L2", sizes.l2, counts, {}, {}}, {"L3", sizes.l3, counts, {}, {}}, {"memory", sizes.memory, counts, {}, {}}};
    const int runs = options.quick ? 5 : 9;
    const auto seed = static_cast<std::uint64_t>(options.seed);
    cachebook::Progress progress("k chases at once", curves.size());
    for (auto& c : curves) {
        progress.step(c.level);
        if (c.bytes < kNodeBytes * counts.back()) continue;
        ChaseSet set(c.bytes, seed);
        // Short runs (a millisecond or less) fit between the interruptions of a shared core. A
        // cache level is warmed with a lap of its cycle before each run; memory needs no warming.
        const bool memory = c.level == "memory";
        const std::size_t accesses = memory ? 1 << 12 : 1 << 14;
        const std::size_t warmup = memory ? 0 : std::min<std::size_t>(c.bytes / kNodeBytes, 1 << 17);
        c.ns.assign(counts.size(), 1e300);
        for (int r = 0; r < runs; ++r)  // every count once per round, so drift hits them alike
            for (std::size_t i = 0; i < counts.size(); ++i)
                c.ns[i] = std::min(c.ns[i], chases_ns_per_access(set, counts[i], accesses, warmup, 1));
        c.knee = knee_of(counts, c.ns);
    }
    return curves;
}

ChasesExperiment::ChasesExperiment(std::size_t bytes)
    : set_(bytes, 7),
      one_(set_.starts(1)),  // the chases go on from run to run: every access a new node
      many_(set_.starts(8)),
      declared_{"chases",
                "in memory, one chase / 8 chases, per access",
                [this] { chase_together(one_, std::size_t{1} << 12), cachebook::do_not_optimize(one_); },
                [this] { chase_together(many_, (std::size_t{1} << 12) / 8), cachebook::do_not_optimize(many_); },
                {.budget_seconds = 0.0004, .runs = 8, .quick_runs = 8},
                {.threshold = 3.0}} {}

cachebook::ExperimentResult ChasesExperiment::run(bool quick) const {
    return cachebook::run_experiment(declared_, quick);
}

Mountain measure_mountain(std::size_t largest, const Options& options) {
    Mountain m;
    for (std::size_t s = std::size_t{16} << 10; s <= largest; s *= options.quick ? 4 : 2) m.sizes.push_back(s);
    m.strides = {1, 2, 4, 8, 16, 32, 64};
    const cachebook::PageBuffer buf(m.sizes.back(), PageSize::Huge);
    // Each run reads at least 2 MB (1 MB with --quick) of words: a few hundred microseconds in a cache.
    const std::size_t min_bytes = options.quick ? 1 << 20 : 2 << 20;
    const int runs = options.quick ? 2 : 5;
    cachebook::Progress progress("the memory mountain", m.sizes.size());
    for (std::size_t bytes : m.sizes) {
        progress.step(cachebook::size_text(bytes));
        std::vector<double> row;
        for (std::size_t stride : m.strides) row.push_back(cachebook::read_gbs(buf, bytes, stride, min_bytes, runs));
        m.gbs.push_back(row);
    }
    return m;
}

Peak mountain_peak(const Mountain& m) {
    Peak peak;
    for (std::size_t i = 0; i < m.sizes.size(); ++i)
        for (std::size_t j = 0; j < m.strides.size(); ++j)
            if (m.gbs[i][j] > peak.gbs) peak = {m.sizes[i], m.strides[j], m.gbs[i][j]};
    return peak;
}

std::vector<cachebook::LevelBandwidth> measure_levels(const cachebook::LevelSizes& sizes, const Options& options) {
    return cachebook::read_bandwidth_by_level(sizes, options.quick ? 4 << 20 : 16 << 20, options.quick ? 2 : 7);
}

cachebook::LevelSizes level_sizes(const Setup& setup) {
    auto bytes = [](const std::optional<cachebook::CacheInfo>& c) { return c ? c->size_bytes : std::size_t{0}; };
    return cachebook::level_sizes(bytes(setup.l1), bytes(setup.l2), bytes(setup.l3));
}

std::string where_working_set(std::size_t bytes, std::size_t l2_bytes, std::size_t l3_bytes) {
    using cachebook::size_text;
    if (l3_bytes != 0 && bytes > l3_bytes) return "beyond the reported L3 (" + size_text(l3_bytes) + ")";
    if (l3_bytes != 0 && l2_bytes != 0 && bytes > l2_bytes)
        return "inside the reported L3 (" + size_text(l3_bytes) + "), beyond the L2 (" + size_text(l2_bytes) + ")";
    if (l3_bytes != 0) return "inside the reported L3 (" + size_text(l3_bytes) + ")";
    if (l2_bytes != 0 && bytes > l2_bytes)
        return "beyond the reported L2 (" + size_text(l2_bytes) + "), the last level reported";
    return "against no reported cache size";
}

std::string where_memory_set(const Setup& setup) {
    auto bytes = [](const std::optional<cachebook::CacheInfo>& c) { return c ? c->size_bytes : std::size_t{0}; };
    return where_working_set(level_sizes(setup).memory, bytes(setup.l2), bytes(setup.l3));
}

nlohmann::json to_json(const ChaseCurve& c) {
    if (c.ns.empty())
        return {{"bytes", nullptr}, {"counts", c.counts}, {"ns", nullptr},
                {"knee", nullptr},  {"best_ns", nullptr}, {"in_flight", nullptr}};
    return {{"bytes", c.bytes},
            {"counts", c.counts},
            {"ns", c.ns},
            {"knee", static_cast<double>(c.knee.k)},  // a measurement: whole by chance, not a count the prose may type
            {"best_ns", c.knee.best_ns},
            {"in_flight", c.knee.in_flight}};
}

nlohmann::json to_json(const Mountain& m) {
    std::vector<std::size_t> stride_bytes;
    for (std::size_t words : m.strides) stride_bytes.push_back(words * sizeof(std::uint64_t));
    return {{"sizes", m.sizes}, {"stride_bytes", stride_bytes}, {"gbs", m.gbs}};
}

}  // namespace ch08
