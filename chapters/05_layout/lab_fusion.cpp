// Chapter 5's experiment, fusion and fission: how large the arrays are on this machine,
// where they lie, and the timing of each version (the thread's CPU clock).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch05 {

StreamSize choose_stream_size(std::size_t llc_bytes, std::size_t l2_bytes, std::size_t budget, std::size_t arrays) {
    constexpr std::size_t mib = std::size_t{1} << 20;
    if (llc_bytes > 0 && 2 * llc_bytes <= budget)
        return {2 * llc_bytes, "L3", fmt::format("twice the {} MiB last-level cache", llc_bytes / mib)};
    // A large LLC: the arrays streamed at once still overflow it together at the budget.
    if (llc_bytes > 0 && arrays * budget > llc_bytes)
        return {budget, "L3",
                arrays == 1 ? fmt::format("one array of {} MiB overflows the {} MiB last-level cache", budget / mib,
                                          llc_bytes / mib)
                            : fmt::format("{} arrays of {} MiB overflow the {} MiB last-level cache together", arrays,
                                          budget / mib, llc_bytes / mib)};
    if (l2_bytes > 0 && 8 * l2_bytes <= budget)
        return {8 * l2_bytes, "L2",
                fmt::format("the {} MiB last-level cache is too large to overflow cheaply; 8x the {} MiB L2",
                            llc_bytes / mib, l2_bytes / mib)};
    return {budget, "default", "no usable cache sizes; the largest size allowed"};
}

StreamSize stream_size(std::int64_t stream_mib, bool quick, std::size_t budget, std::size_t arrays) {
    if (quick) return {std::size_t{8} << 20, "quick", "--quick: 8 MiB"};
    if (stream_mib > 0) return {static_cast<std::size_t>(stream_mib) << 20, "option", "--stream-mib"};
    const auto& machine = cachebook::machine();
    const auto l2 = machine.data_cache(2);
    const auto l3 = machine.data_cache(3);
    return choose_stream_size(l3 ? l3->size_bytes : 0, l2 ? l2->size_bytes : 0, budget, arrays);
}

StreamSize fusion_stream_size(std::int64_t stream_mib, bool quick) {
    return stream_size(stream_mib, quick, std::size_t{128} << 20, 3);  // a, b and c
}

namespace {

// b = 2a and c = 2a + 1, exactly, as both fusion versions compute them.
bool fusion_right(const double* a, const double* b, const double* c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (b[i] != a[i] * 2.0 || c[i] != a[i] * 2.0 + 1.0) return false;
    return true;
}

// Each version on its own over a, b, c, checked, b and c zeroed between the two.
bool both_versions_right(const double* a, double* b, double* c, std::size_t n) {
    separate_loops(a, b, c, n);
    const bool separate = fusion_right(a, b, c, n);
    std::fill(b, b + n, 0.0);
    std::fill(c, c + n, 0.0);
    fused_loop(a, b, c, n);
    return separate && fusion_right(a, b, c, n);
}

std::size_t stride_of(std::size_t n, std::size_t gap_bytes) {
    if (gap_bytes % sizeof(double) != 0) throw std::invalid_argument("FusionExperiment: gaps must be whole doubles");
    return n + gap_bytes / sizeof(double);
}

}  // namespace

FusionExperiment::FusionExperiment(std::size_t n, std::size_t fission_n, std::size_t ways, int runs,
                                   std::size_t gap_bytes, std::size_t close_gap_bytes)
    : block_(3 * std::max(stride_of(n, gap_bytes), stride_of(n, close_gap_bytes))),
      a_(block_.data()),
      b_(a_ + stride_of(n, gap_bytes)),
      c_(b_ + stride_of(n, gap_bytes)),
      b_close_(a_ + stride_of(n, close_gap_bytes)),
      c_close_(b_close_ + stride_of(n, close_gap_bytes)),
      fa1_(ways, std::vector<double>(fission_n, 1.0)),
      fa2_(fa1_),
      fb_(ways, std::vector<double>(fission_n)),
      declared_{"fusion",
                "two loops / fused",
                [this] { separate_loops(a_, b_, c_, shape_.n), cachebook::clobber_memory(); },
                [this] { fused_loop(a_, b_, c_, shape_.n), cachebook::clobber_memory(); },
                {.budget_seconds = kRunBudgetSeconds,
                 .runs = runs,
                 .quick_budget_seconds = kRunBudgetSeconds,
                 .quick_runs = cachebook::kMinRunsPerSide},
                {.threshold = kSeparateOverFused, .memory_bound = true}} {
    shape_.n = n;
    shape_.fission_n = fission_n;
    shape_.fission_ways = ways;
    shape_.gap_bytes = gap_bytes;
    shape_.close_gap_bytes = close_gap_bytes;
    for (std::size_t i = 0; i < n; ++i) a_[i] = static_cast<double>(i % 4096);
    for (std::size_t k = 0; k < ways; ++k)
        for (std::size_t i = 0; i < fission_n; ++i) fb_[k][i] = static_cast<double>((i + k) % 8);
}

FusionTimes FusionExperiment::run(bool quick) {
    FusionTimes t = shape_;
    const std::size_t n = shape_.n;
    t.same_result = both_versions_right(a_, b_, c_, n) && both_versions_right(a_, b_close_, c_close_, n);
    t.claim = cachebook::run_experiment(declared_, quick, experiment_instruments());
    t.separate = timing_of(t.claim.slow_runs);
    t.fused = timing_of(t.claim.fast_runs);
    // No claim on the placement or on fission: timed the same way, for the tables.
    std::tie(t.separate_close, t.fused_close) = time_beside(
        declared_, t.claim.calls_per_run, quick, [&] { separate_loops(a_, b_close_, c_close_, n); },
        [&] { fused_loop(a_, b_close_, c_close_, n); });
    std::tie(t.fission_one, t.fission_split) = time_beside(
        declared_, t.claim.calls_per_run, quick, [&] { one_loop_many_arrays(fa1_, fb_); },
        [&] { one_loop_per_array(fa2_, fb_); });
    // Both fission loops ran as many times (one untimed call, then `runs` timed runs of as many calls).
    t.same_result = t.same_result && fa1_ == fa2_;
    return t;
}

}  // namespace ch05
