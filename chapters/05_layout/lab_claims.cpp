// Chapter 5's measured claims on the update loop and the lists, declared once
// (cachebook/experiment.hpp): the kit times the sides A B B A and decides each claim.
#include <fmt/format.h>

#include "cachebook/cpu_time.hpp"
#include "lab.hpp"

namespace ch05 {

using cachebook::Experiment;
using cachebook::Sizing;

cachebook::Instruments experiment_instruments() {
    return cachebook::thread_cpu_instruments();
}

cachebook::Timing timing_of(const std::vector<double>& runs) {
    cachebook::Timing t;
    t.runs = runs;
    return t;
}

std::pair<cachebook::Timing, cachebook::Timing> time_beside(const cachebook::Experiment& e, long calls, bool quick,
                                                            const std::function<void()>& first,
                                                            const std::function<void()>& second) {
    const auto [a, b] = cachebook::time_abba(first, second, quick ? e.sizing.quick_runs : e.sizing.runs, calls,
                                             experiment_instruments().now);
    return {timing_of(a), timing_of(b)};
}

namespace {

constexpr double kDt = 0.001;

Sizing one_call_a_run(int runs) {
    return {.runs = runs, .quick_runs = cachebook::kMinRunsPerSide};
}

Sizing budgeted_runs(int runs) {
    return {.budget_seconds = kRunBudgetSeconds,
            .runs = runs,
            .quick_budget_seconds = kRunBudgetSeconds,
            .quick_runs = cachebook::kMinRunsPerSide};
}

cachebook::Claim memory_bound(double threshold) {
    return {.threshold = threshold, .memory_bound = true};
}

}  // namespace

LayoutExperiments::LayoutExperiments(std::size_t n, int runs)
    : aos_(make_aos(n)),
      soa_(make_soa(n)),
      hot_cold_(make_hot_cold(n)),
      over_soa_{"aos_over_soa",
                "AoS / SoA",
                [this] { update(aos_, kDt), cachebook::clobber_memory(); },
                [this] { update(soa_, kDt), cachebook::clobber_memory(); },
                budgeted_runs(runs),
                memory_bound(kAosOverSoa)},
      over_hot_cold_{"aos_over_hot_cold", "AoS / hot-cold",
                     over_soa_.slow,      [this] { update(hot_cold_, kDt), cachebook::clobber_memory(); },
                     budgeted_runs(runs), memory_bound(kAosOverHotCold)} {
    update(aos_, kDt);
    update(soa_, kDt);
    update(hot_cold_, kDt);
    same_result_ = sum_x(aos_) == sum_x(soa_) && sum_x(soa_) == sum_x(hot_cold_);
}

LayoutTimes LayoutExperiments::run(bool quick) const {
    LayoutTimes t;
    t.n = aos_.p.size();
    t.same_result = same_result_;
    t.over_soa = cachebook::run_experiment(over_soa_, quick, experiment_instruments());
    t.over_hot_cold = cachebook::run_experiment(over_hot_cold_, quick, experiment_instruments());
    t.aos = timing_of(t.over_soa.slow_runs);
    t.soa = timing_of(t.over_soa.fast_runs);
    t.hot_cold = timing_of(t.over_hot_cold.fast_runs);
    return t;
}

ListExperiments::ListExperiments(std::size_t n, int runs)
    : bench_(make_lists(n)),
      scattered_values_(scattered_values(bench_)),
      over_vector_{"scattered_over_vector",
                   "scattered / vector",
                   [this] { sink_ += sum_list(bench_.scattered_head), cachebook::do_not_optimize(sink_); },
                   [this] { sink_ += sum_vector(bench_.values), cachebook::do_not_optimize(sink_); },
                   one_call_a_run(runs),
                   {.threshold = kScatteredOverVector}},
      over_gather_{
          "scattered_over_gather",
          "scattered / gather",
          over_vector_.slow,
          [this] { sink_ += sum_gather(scattered_values_, bench_.scattered_order), cachebook::do_not_optimize(sink_); },
          one_call_a_run(runs),
          {.threshold = kScatteredOverGather}} {}

ListTimes ListExperiments::run(bool quick) const {
    ListTimes t;
    t.n = bench_.values.size();
    const std::int64_t vector = sum_vector(bench_.values);
    t.same_result = sum_list(bench_.ordered_head) == vector && sum_list(bench_.scattered_head) == vector &&
                    sum_gather(scattered_values_, bench_.scattered_order) == vector;
    t.over_vector = cachebook::run_experiment(over_vector_, quick, experiment_instruments());
    t.over_gather = cachebook::run_experiment(over_gather_, quick, experiment_instruments());
    t.scattered = timing_of(t.over_vector.slow_runs);
    t.vector = timing_of(t.over_vector.fast_runs);
    t.gather = timing_of(t.over_gather.fast_runs);
    // The list in address order makes no claim: timed against the vector the same way, for the table.
    const auto ordered = [this] { sink_ += sum_list(bench_.ordered_head), cachebook::do_not_optimize(sink_); };
    t.ordered = time_beside(over_vector_, t.over_vector.calls_per_run, quick, ordered, over_vector_.fast).first;
    return t;
}

namespace {

// Each run's two versions added up: the time one placement costs the pair.
std::vector<double> both_versions(const cachebook::Timing& separate, const cachebook::Timing& fused) {
    std::vector<double> sum;
    for (std::size_t r = 0; r < separate.runs.size() && r < fused.runs.size(); ++r)
        sum.push_back(separate.runs[r] + fused.runs[r]);
    return sum;
}

}  // namespace

PlacementVerdict placement_verdict(const FusionTimes& t) {
    const auto apart = both_versions(t.separate, t.fused);
    const auto close = both_versions(t.separate_close, t.fused_close);
    // Slower means by more than the noise; equal times in a run without noise are neither.
    const auto is_slower = [](const cachebook::ClaimResult& r) {
        return r.verdict == cachebook::Verdict::holds && r.effect > 1.0;
    };
    const auto close_slower = cachebook::decide_claim(close, apart, {.threshold = 1.0});
    if (is_slower(close_slower)) return {"close", close_slower};
    const auto apart_slower = cachebook::decide_claim(apart, close, {.threshold = 1.0});
    if (is_slower(apart_slower)) return {"apart", apart_slower};
    return {"neither", close_slower};
}

}  // namespace ch05
