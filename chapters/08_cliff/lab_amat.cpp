// Chapter 8, the lab of amat.md: the hierarchy priced from this run's levels, chapter 2's two
// sums timed, the model run over the same walks, and the claim about overlapping misses.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "cachebook/chase.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/walks.hpp"
#include "lab.hpp"

namespace ch08 {

std::vector<cachebook::CacheConfig> PricedHierarchy::configs() const {
    std::vector<cachebook::CacheConfig> out;
    for (const auto& l : levels)
        if (l.cache) out.push_back(*l.cache);
    return out;
}

std::vector<double> PricedHierarchy::latencies() const {
    std::vector<double> out;
    for (const auto& l : levels)
        if (l.cache) out.push_back(*l.latency_ns);
    out.push_back(memory_ns.value_or(0));
    return out;
}

namespace {

// The model's geometry of one level, and where it came from; nullopt without a size.
std::optional<cachebook::CacheConfig> level_geometry(const std::optional<cachebook::CacheInfo>& reported,
                                                     const Level& found, std::string& from) {
    const std::size_t size = reported ? reported->size_bytes : found.detected.value_or(0);
    if (size == 0) return std::nullopt;
    const std::size_t ways = reported && reported->ways != 0 ? reported->ways : kAssumedWays;
    const std::size_t line = reported && reported->line_bytes != 0 ? reported->line_bytes : kNodeBytes;
    from = reported ? cachebook::source_name(reported->source) : std::string("the curve's step");
    if (!reported || reported->ways == 0) from += fmt::format(", {} ways assumed", ways);
    if (!reported || reported->line_bytes == 0) from += fmt::format(", {}-byte lines assumed", line);
    cachebook::CacheConfig config;
    config.ways = ways;
    config.line_bytes = line;
    config.sets = std::max<std::size_t>(1, size / (ways * line));
    return config;
}

}  // namespace

PricedHierarchy price_levels(const Setup& setup, const LevelsFound& found) {
    PricedHierarchy h;
    const std::optional<cachebook::CacheInfo>* reported[] = {&setup.l1, &setup.l2, &setup.l3};
    bool chain = true;  // every level before this one is priced
    for (std::size_t k = 0; k < found.levels.size() && k < 3; ++k) {
        const Level& level = found.levels[k];
        PricedLevel p;
        p.name = level.name;
        p.latency_ns = level.latency_ns;
        auto config = level_geometry(*reported[k], level, p.geometry_from);
        if (!chain)
            p.why_not = "not priced: a level before it is not";
        else if (!level.latency_ns)
            p.why_not = "not priced: the curve shows no step for it";
        else if (!config)
            p.why_not = "not priced: neither the machine nor the curve gives its size";
        else
            p.cache = config;
        chain = p.cache.has_value();
        h.levels.push_back(p);
    }
    h.memory_ns = found.beyond_ns;
    return h;
}

WalkTimes time_walks(std::size_t n, int rounds) {
    std::vector<int> a(n * n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) a[i * n + j] = static_cast<int>((i + j) % 10);
    WalkTimes t;
    t.n = n;
    t.row_sum = cachebook::sum_by_rows(a.data(), n);  // the untimed pass of each: warm caches, no page faults
    t.column_sum = cachebook::sum_by_columns(a.data(), n);
    double row = 1e300, column = 1e300;
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < 4; ++k) {
            const double start = cachebook::thread_cpu_seconds();
            cachebook::do_not_optimize(cachebook::sum_by_rows(a.data(), n));
            row = std::min(row, cachebook::thread_cpu_seconds() - start);
        }
        const double start = cachebook::thread_cpu_seconds();
        cachebook::do_not_optimize(cachebook::sum_by_columns(a.data(), n));
        column = std::min(column, cachebook::thread_cpu_seconds() - start);
    }
    const auto elements = static_cast<double>(n * n);
    t.row_ns = row / elements * 1e9;
    t.column_ns = column / elements * 1e9;
    return t;
}

namespace {
std::size_t overlap_stride(std::size_t bytes, std::size_t hops) {
    const std::size_t stride = bytes / hops / kNodeBytes * kNodeBytes;
    if (stride == 0) throw std::invalid_argument("OverlapExperiment: more hops than lines");
    return stride;
}
}  // namespace

OverlapExperiment::OverlapExperiment(std::size_t bytes, std::size_t hops, std::uint64_t seed)
    : buf_(bytes, cachebook::PageSize::Small),
      at_(cachebook::link_chase(buf_, bytes / kNodeBytes, kNodeBytes, seed)),
      declared_{"overlap",
                fmt::format("a dependent chase / as many independent loads, one {} buffer,", size_text(bytes)),
                [this, hops] { at_ = cachebook::chase(at_, hops), cachebook::do_not_optimize(at_); },
                [this, hops, stride = overlap_stride(bytes, hops)] {
                    sink_ += strided_sum(buf_.data(), hops * stride, stride, 1), cachebook::do_not_optimize(sink_);
                },
                {.runs = 8, .quick_runs = 6},
                {.threshold = kOverlapThreshold, .max_noise = kOverlapMaxNoise}} {}

cachebook::ExperimentResult OverlapExperiment::run(bool quick) const {
    return cachebook::run_experiment(declared_, quick);
}

std::size_t amat_matrix_side(const Options& options) {
    return options.quick ? 1024 : 2048;
}

namespace {

PricedWalk price_walk(const std::string& name, const PricedHierarchy& h, const Walk& walk, double measured_ns) {
    PricedWalk p;
    p.name = name;
    p.measured_ns = measured_ns;
    if (!h.usable()) return p;
    p.counts = warm_counts(h.configs(), walk);
    p.amat_ns = amat_ns(h.latencies(), miss_rates(p.counts));
    return p;
}

// The model's memory: one way of 24 bytes or so per line of every priced level.
std::size_t model_bytes(const PricedHierarchy& h) {
    std::size_t lines = 0;
    for (const auto& c : h.configs()) lines += c.lines();
    return lines * 32;
}

}  // namespace

namespace {

// The time model's walks: the sums (the row sum a stream the prefetcher follows), the chase
// (dependent), the strided sum (a stream, 8 bytes a line; compiled to one add a load, `add (%rax),%rdi`).
struct ModelWalks {
    std::optional<cachebook::WalkPrediction> row, column, chase, strided;
};

ModelWalks predict_walks(const cachebook::PricedMachine& model, std::size_t n, std::size_t curve_bytes,
                         std::uint64_t seed) {
    ModelWalks w;
    if (!model.usable()) return w;
    w.row = cachebook::predict_walk(model, {row_walk(n), sizeof(int), false, true, {}, 1, cachebook::kRowSumCore});
    w.column =
        cachebook::predict_walk(model, {column_walk(n), sizeof(int), false, false, {}, 1, cachebook::kColumnSumCore});
    const auto cycle = cachebook::single_cycle(curve_bytes / kNodeBytes, seed);
    w.chase = cachebook::predict_walk(model, {chase_walk(cycle, kNodeBytes), sizeof(void*), true, false, {}, 1});
    w.strided =
        cachebook::predict_walk(model, {sequential_walk(curve_bytes, kNodeBytes), 8, false, true, {}, 1, {1, 0}});
    return w;
}

cachebook::PricedClaim walk_claim(const std::string& key, const std::string& what,
                                  const std::optional<cachebook::WalkPrediction>& p, double measured_ns,
                                  const std::string& left_out, const cachebook::PricedMachine& model) {
    cachebook::PricedClaim c{key, what, {}, {}, "", measured_ns, left_out, model.why_not};
    if (!p) return c;
    const auto loads = static_cast<double>(p->loads);
    c.predicted = p->overlapped.ns / loads;
    c.predicted_added = p->added.ns / loads;
    c.bottleneck = p->overlapped.bottleneck;
    return c;
}

std::vector<cachebook::PricedClaim> model_claims(const AmatResult& r, const ModelWalks& w) {
    const char* const tlb = "the TLB: the walk's pages are 4 KiB, the profile's huge where granted";
    std::vector<cachebook::PricedClaim> claims = {
        walk_claim("amat_row", "row sum, ns a load", w.row, r.row.measured_ns, tlb, r.model),
        walk_claim("amat_column", "column sum, ns a load", w.column, r.column.measured_ns,
                   "the TLB (every element on another page) and the prefetchers", r.model),
        walk_claim("amat_chase", "dependent chase, ns a load", w.chase, r.chase.measured_ns, tlb, r.model),
        walk_claim("amat_strided", "strided sum, ns a load", w.strided, r.strided.measured_ns,
                   "the prefetcher's stops at page boundaries", r.model)};
    cachebook::PricedClaim ratio{"amat_column_over_row",        "column / row", {}, {}, "", r.measured_ratio,
                                 "the TLB and the prefetchers", r.model.why_not};
    if (w.row && w.column) {
        ratio.predicted = w.column->overlapped.ns / w.row->overlapped.ns;
        ratio.predicted_added = w.column->added.ns / w.row->added.ns;
        ratio.bottleneck = "column " + w.column->overlapped.bottleneck + ", row " + w.row->overlapped.bottleneck;
    }
    claims.push_back(ratio);
    return claims;
}

}  // namespace

AmatResult price_a_miss(const Options& options, const Setup& setup, const Curves& curves, const LevelsFound& found) {
    AmatResult r;
    r.hierarchy = price_levels(setup, found);
    const std::size_t n = amat_matrix_side(options);
    cachebook::require_memory(model_bytes(r.hierarchy) + n * n * sizeof(int), "the AMAT section's model and matrix");
    const std::size_t k_near = nearest_size(setup.sizes, n * n * sizeof(int));
    // The time model predicts first, from the profile alone: nothing it uses is timed below.
    r.profile = cachebook::shared_profile();
    r.model = cachebook::priced_machine(r.profile);
    const ModelWalks predicted =
        predict_walks(r.model, n, curves.small_pages[k_near].bytes, static_cast<std::uint64_t>(options.seed) + k_near);
    r.sums = time_walks(n, options.quick ? 3 : 5);
    r.row = price_walk("row", r.hierarchy, row_walk(n), r.sums.row_ns);
    r.column = price_walk("column", r.hierarchy, column_walk(n), r.sums.column_ns);
    const std::size_t k = nearest_size(setup.sizes, n * n * sizeof(int));
    const Point& point = curves.small_pages[k];
    r.curve_bytes = point.bytes;
    const auto seed = static_cast<std::uint64_t>(options.seed) + k;  // the cycle the sweep chased at this size
    r.chase =
        price_walk("chase", r.hierarchy,
                   chase_walk(cachebook::single_cycle(point.bytes / kNodeBytes, seed), kNodeBytes), point.chase_ns);
    r.strided = price_walk("strided sum", r.hierarchy, sequential_walk(point.bytes, kNodeBytes), point.strided_ns);
    r.measured_ratio = r.sums.column_ns / r.sums.row_ns;
    if (r.hierarchy.usable()) {
        r.predicted_ratio = r.column.amat_ns / r.row.amat_ns;
        r.predicted_over_measured = *r.predicted_ratio / r.measured_ratio;
    }
    const std::size_t bytes = n * n * sizeof(int);
    r.overlap = OverlapExperiment(bytes, bytes / 512, static_cast<std::uint64_t>(options.seed)).run(options.quick);
    r.priced = model_claims(r, predicted);
    return r;
}

}  // namespace ch08
