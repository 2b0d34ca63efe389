// Chapter 7's lab: the rules run at the program's sizes, their claims decided by the book's rule,
// and the audit put together (perf, cachegrind and the six orders are in lab_counters.cpp).
#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/matmul_orders.hpp"
#include "sum_kernel.hpp"

namespace ch07 {

std::vector<int> make_grid(std::size_t n) {
    std::vector<int> a(n * n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i % 10);
    return a;
}

double cpu_share_now() {
    return cachebook::cpu_share();
}

RunsRule runs_rule(std::size_t n, int runs, bool quick) {
    RunsRule rule;
    rule.n = quick ? kQuickBatchN : n;
    const auto grid = make_grid(rule.n);
    const auto once = [&] { cachebook::do_not_optimize(o2::sum_rows(grid.data(), rule.n)); };
    const cachebook::Experiment batches{
        "minima", "faster batch's minimum / slower's",           once,
        once,     {.runs = runs, .quick_runs = kQuickBatchRuns}, {.threshold = 1 / (1 + kMinimaTolerance)}};
    const auto timed = cachebook::run_experiment(batches, quick);
    rule.batch_a.runs = timed.slow_runs;
    rule.batch_b.runs = timed.fast_runs;
    rule.claim = minima_agree(timed.slow_runs, timed.fast_runs);
    return rule;
}

cachebook::ClaimResult minima_agree(const std::vector<double>& a, const std::vector<double>& b, double tolerance) {
    const cachebook::Claim within{1 / (1 + tolerance)};
    const auto a_over_b = cachebook::decide_claim(a, b, within);
    const auto b_over_a = cachebook::decide_claim(b, a, within);
    // The faster batch over the slower is the smaller effect: when it clears the bound, so does the other.
    return a_over_b.effect <= b_over_a.effect ? a_over_b : b_over_a;
}

namespace {
// The kit's instruments, timed by `now`.
cachebook::Instruments timed_by(double (*now)()) {
    auto instruments = cachebook::machine_instruments();
    instruments.now = now;
    return instruments;
}
}  // namespace

ClockRule clock_rule(int threads, int runs, bool quick) {
    ClockRule rule{threads, quick ? kQuickClockWork : kClockWork, {}, {}};
    const std::function<void()> one = [work = rule.work] { split_work(1, work); };
    const std::function<void()> many = [work = rule.work, threads] { split_work(threads, work); };
    const cachebook::Sizing sizing{.runs = runs, .quick_runs = cachebook::kMinRunsPerSide};
    const auto cpu_text = fmt::format("{}: {} threads / 1 thread", kCpuClockName, threads);
    const auto wall_text = fmt::format("{}: 1 thread / {} threads", kWallClockName, threads);
    const cachebook::Claim cpu_claim{.threshold = kCpuClockAtLeast},
        wall_claim{.threshold = kWallSpeedup, .cpus = threads};
    const cachebook::Experiment cpu{"cpu_clock", cpu_text, many, one, sizing, cpu_claim};
    const cachebook::Experiment wall{"wall_clock", wall_text, one, many, sizing, wall_claim};
    rule.cpu = cachebook::run_experiment(cpu, quick, timed_by(process_cpu_seconds));
    rule.wall = cachebook::run_experiment(wall, quick, timed_by(wall_seconds));
    return rule;
}

double RunsRule::min_gap() const {
    return std::abs(batch_a.min() / batch_b.min() - 1.0);
}

DeadCodeRule dead_code_rule(std::size_t n, int runs, bool quick) {
    DeadCodeRule rule;
    rule.n = n;
    const auto grid = make_grid(n);
    const cachebook::Experiment sums{"dead_code",
                                     "result kept / thrown away",
                                     [&] { rule.sum = sum_kept(grid.data(), grid.size()); },
                                     [&] { sum_thrown_away(grid.data(), grid.size()); },
                                     {.runs = std::max(kDeadCodeRuns, runs), .quick_runs = kDeadCodeRuns},
                                     {.threshold = kDeadCodeThreshold}};
    rule.timed = cachebook::run_experiment(sums, quick);
    return rule;
}

TouchRule touch_rule(std::size_t bytes, int runs, bool quick) {
    TouchRule rule;
    rule.bytes = bytes;
    // [snippet: touch_declared]
    std::optional<FreshPages> pages;  // the mapping the last first fill faulted in
    const cachebook::Experiment fills{"touch",
                                      "first fill / second",
                                      [&] { rule.faults_first = pages->fill(1); },   // the timed region pays the faults
                                      [&] { rule.faults_second = pages->fill(2); },  // the pages exist: only the writes
                                      {.runs = runs, .quick_runs = cachebook::kMinRunsPerSide},
                                      {.threshold = kTouchThreshold}};
    // Untimed, before every first fill: the last mapping goes back to the OS, a fresh one comes.
    // The kit calls the first fill before any second one, so a second fill always finds pages present.
    cachebook::SetUp fresh_pages;
    fresh_pages.slow = [&] {
        pages.reset();
        pages.emplace(bytes);
    };
    rule.timed = cachebook::run_experiment(fills, fresh_pages, quick);
    // [end: touch_declared]
    return rule;
}

BlockedRule blocked_rule(std::size_t n, std::size_t tile, int runs, bool quick) {
    BlockedRule rule;
    rule.n = n;
    rule.tile = tile;
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<std::vector<double>> c(4, std::vector<double>(n * n));
    const auto product = [&](auto multiply, std::size_t k) {
        return [&, multiply, k] { multiply(c[k].data()), cachebook::do_not_optimize(c[k].data()); };
    };
    const cachebook::RatioOfRatios gain{
        "gain_o2_over_o0",
        "gain of blocking at -O2 / at -O0",
        product([&](double* out) { o2::product_naive(m.a.data(), m.b.data(), out, n); }, 0),
        product([&](double* out) { o2::product_blocked(m.a.data(), m.b.data(), out, n, tile); }, 1),
        product([&](double* out) { o0::product_naive(m.a.data(), m.b.data(), out, n); }, 2),
        product([&](double* out) { o0::product_blocked(m.a.data(), m.b.data(), out, n, tile); }, 3),
        runs,
        cachebook::kMinRunsPerSide,
        {.threshold = kGainO2OverO0}};
    rule.gain = cachebook::run_ratio_of_ratios(gain, quick, cachebook::thread_cpu_instruments());
    rule.o0_over_o2 = cachebook::decide_claim(rule.gain.d_runs, rule.gain.b_runs, {.threshold = kO0OverO2});
    rule.same_results = c[0] == c[1] && c[1] == c[2] && c[2] == c[3];
    return rule;
}

std::size_t l1_resident_order(std::size_t l1_bytes) {
    std::size_t n = 16;
    while (2 * n * 2 * n * sizeof(int) <= l1_bytes / 2) n *= 2;
    return n;
}

SizeRule size_rule(std::size_t small, std::size_t large, int runs, bool quick) {
    SizeRule rule;
    rule.small = {small, small * small * sizeof(int), 0, 0};
    rule.large = {large, large * large * sizeof(int), 0, 0};
    const auto small_grid = make_grid(small), large_grid = make_grid(large);
    const std::size_t passes = std::max<std::size_t>(1, large * large / (small * small));
    const auto walk = [](auto sum, const std::vector<int>& grid, std::size_t n, std::size_t times) {
        return [sum, &grid, n, times] {
            for (std::size_t p = 0; p < times; ++p) cachebook::do_not_optimize(sum(grid.data(), n));
        };
    };
    const cachebook::RatioOfRatios declared{"size",
                                            fmt::format("columns / rows at {0} x {0} over in L1", large),
                                            walk(o2::sum_columns, large_grid, large, 1),
                                            walk(o2::sum_rows, large_grid, large, 1),
                                            walk(o2::sum_columns, small_grid, small, passes),
                                            walk(o2::sum_rows, small_grid, small, passes),
                                            runs,
                                            cachebook::kMinRunsPerSide,
                                            {.threshold = kLargeOverSmall}};
    rule.claim = cachebook::run_ratio_of_ratios(declared, quick, cachebook::thread_cpu_instruments());
    const auto ns = [](const std::vector<double>& runs, double elements) {
        return cachebook::timed_side(runs).value * 1e9 / elements;
    };
    rule.large.columns_ns = ns(rule.claim.a_runs, double(large * large));
    rule.large.rows_ns = ns(rule.claim.b_runs, double(large * large));
    rule.small.columns_ns = ns(rule.claim.c_runs, double(passes * small * small));
    rule.small.rows_ns = ns(rule.claim.d_runs, double(passes * small * small));
    return rule;
}

LatencyRow latency_row(std::size_t bytes, std::size_t hops, int runs, bool quick) {
    const auto slots = make_slots(bytes);
    LatencyRow row;
    row.bytes = slots.slots.size() * sizeof(Slot);
    const auto walk = [&](auto walk) { return [&, walk] { cachebook::do_not_optimize(walk(slots, hops)); }; };
    const std::string size = cachebook::size_text(row.bytes);
    const cachebook::Sizing sizing{.runs = runs, .quick_runs = cachebook::kMinRunsPerSide};
    // The chase against another walk of the same slots, one experiment each.
    const auto chase_against = [&](std::string key, const std::string& text, auto other, double threshold) {
        return cachebook::run_experiment(
            {std::move(key), text + ", " + size, walk(chase), walk(other), sizing, {.threshold = threshold}}, quick);
    };
    row.over_strided = chase_against("chase_over_strided", "chase / strided sum", strided_sum, kChaseOverStrided);
    row.over_gather =
        chase_against("chase_over_gather", "chase / random walk with known addresses", gather_sum, kChaseOverGather);
    const auto ns = [&](const std::vector<double>& runs) {
        return cachebook::timed_side(runs).value * 1e9 / double(hops);
    };
    row.strided_ns = ns(row.over_strided.fast_runs);
    row.gather_ns = ns(row.over_gather.fast_runs);
    row.chase_ns = std::min(ns(row.over_strided.slow_runs), ns(row.over_gather.slow_runs));
    return row;
}

std::optional<std::size_t> largest_cache_bytes() {
    std::optional<std::size_t> largest;
    for (const auto& cache : cachebook::machine().caches)
        if (cache.type != "Instruction" && cache.size_bytes > 0)
            largest = std::max(largest.value_or(0), cache.size_bytes);
    return largest;
}

// --- Auditing one claim ----------------------------------------------------------------------

AuditTimes audit_prefetch(std::size_t n, int runs, bool quick) {
    AuditTimes audit;
    audit.model.n = n;
    audit.model.distance = kPrefetchDistance;
    model_prefetch(audit.model, l1_geometry());
    const auto grid = make_grid(n);
    audit.same_sums = o2::sum_rows(grid.data(), n) == o2::sum_rows_prefetched(grid.data(), n, kPrefetchDistance);
    // [snippet: audit_declared]
    const cachebook::Experiment declared{
        "audit",
        "plain / prefetched",
        [&] { cachebook::do_not_optimize(o2::sum_rows(grid.data(), n)); },
        [&] { cachebook::do_not_optimize(o2::sum_rows_prefetched(grid.data(), n, kPrefetchDistance)); },
        {.runs = runs, .quick_runs = kAuditRuns},
        {.threshold = kClaimedSpeedup}};
    audit.timed = cachebook::run_experiment(declared, quick, cachebook::thread_cpu_instruments());
    // [end: audit_declared]
    return audit;
}

AuditClaims audit_claims(const cachebook::ExperimentResult& timed) {
    return {timed.result, cachebook::decide_claim(timed.slow_runs, timed.fast_runs, {.threshold = 1.0})};
}

std::string audit_verdict(const AuditClaims& claims) {
    using cachebook::Verdict;
    if (claims.claimed.verdict == Verdict::holds) return "holds";
    if (claims.claimed.verdict == Verdict::inconclusive) return "undecided";
    // The claim fails, so the control was quiet: any gain is decided too, or lies within the noise.
    if (claims.any_gain.verdict == Verdict::holds) return "smaller";
    return claims.any_gain.verdict == Verdict::fails ? "slower" : "none";
}

}  // namespace ch07
