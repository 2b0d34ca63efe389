// Chapter 7's lab: the rules run at the program's sizes, their claims decided by the book's rule,
// and the audit put together (perf, cachegrind and the six orders are in lab_counters.cpp).
#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/matmul_orders.hpp"
#include "sum_kernel.hpp"

namespace ch07 {

namespace {
constexpr double kNotTimed = std::numeric_limits<double>::infinity();
}  // namespace

std::vector<int> make_grid(std::size_t n) {
    std::vector<int> a(n * n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i % 10);
    return a;
}

double cpu_share_now() {
    return cachebook::cpu_share();
}

RunsRule runs_rule(std::size_t n, int runs) {
    RunsRule rule;
    rule.n = n;
    const auto grid = make_grid(n);
    auto once = [&] { cachebook::do_not_optimize(o2::sum_rows(grid.data(), n)); };
    for (int run = 0; run < runs; ++run) {  // no warm-up: the first run is whatever it is
        rule.batch_a.runs.push_back(cachebook::time_runs(1, once, 0).runs.front());
        rule.batch_b.runs.push_back(cachebook::time_runs(1, once, 0).runs.front());
    }
    return rule;
}

cachebook::ClaimResult minima_agree(const RunsRule& rule, double tolerance, double max_noise) {
    const cachebook::ClaimRule within{1 / (1 + tolerance), static_cast<int>(rule.batch_a.runs.size()), max_noise};
    const auto a_over_b = cachebook::decide(rule.batch_a.runs, rule.batch_b.runs, within);
    const auto b_over_a = cachebook::decide(rule.batch_b.runs, rule.batch_a.runs, within);
    // The faster batch over the slower is the smaller effect: when it clears the bound, so does the other.
    return a_over_b.effect <= b_over_a.effect ? a_over_b : b_over_a;
}

ClockClaims clock_claims(const ClockRule& rule, int usable_cpus, double max_noise) {
    const auto runs = static_cast<int>(rule.one.wall_runs.size());
    ClockClaims claims{cachebook::decide(rule.many.cpu_runs, rule.one.cpu_runs,
                                         cachebook::ClaimRule{kCpuClockAtLeast, runs, max_noise}),
                       cachebook::decide(rule.one.wall_runs, rule.many.wall_runs,
                                         cachebook::ClaimRule{kWallSpeedup, runs, max_noise})};
    auto& wall = claims.wall_gain;
    const double cpus = rule.many.cpu_s / rule.many.wall_s;  // CPUs the threads kept busy between them
    if (usable_cpus < 2) {
        wall.verdict = cachebook::Verdict::inconclusive;
        wall.reason = "one CPU: threads cannot run at once, so the wall clock cannot show their gain";
    } else if (wall.verdict != cachebook::Verdict::holds && cpus < kCpusForWallClaim) {
        wall.verdict = cachebook::Verdict::inconclusive;
        wall.reason = fmt::format("the machine is busy: the {} threads got {:.2f} CPUs between them, fewer than {:.1f}",
                                  rule.threads, cpus, kCpusForWallClaim);
    }
    return claims;
}

double RunsRule::min_gap() const {
    return std::abs(batch_a.min() / batch_b.min() - 1.0);
}

DeadCodeRule dead_code_rule(std::size_t n, int runs) {
    DeadCodeRule rule;
    rule.n = n;
    rule.unused_s = rule.used_s = kNotTimed;
    const auto grid = make_grid(n);
    for (int run = 0; run < runs; ++run) {
        rule.unused_runs.push_back(time_sum_unused(grid.data(), grid.size()));
        rule.used_runs.push_back(time_sum_used(grid.data(), grid.size(), rule.sum));
        rule.unused_s = std::min(rule.unused_s, rule.unused_runs.back());
        rule.used_s = std::min(rule.used_s, rule.used_runs.back());
    }
    return rule;
}

cachebook::ClaimResult dead_code_claim(const DeadCodeRule& rule, double max_noise) {
    const auto runs = static_cast<int>(rule.used_runs.size());
    return cachebook::decide(rule.used_runs, rule.unused_runs,
                             cachebook::ClaimRule{kDeadCodeThreshold, runs, max_noise});
}

cachebook::ClaimResult touch_claim(const TouchRule& rule, double max_noise) {
    const auto runs = static_cast<int>(rule.first_runs.size());
    return cachebook::decide(rule.first_runs, rule.second_runs, cachebook::ClaimRule{kTouchThreshold, runs, max_noise});
}

BlockedRule blocked_rule(std::size_t n, std::size_t tile, int runs) {
    BlockedRule rule;
    rule.n = n;
    rule.tile = tile;
    rule.naive_o0 = rule.blocked_o0 = rule.naive_o2 = rule.blocked_o2 = kNotTimed;
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<std::vector<double>> c(4, std::vector<double>(n * n));
    // Run -1 warms up the matrices and the caches, untimed, with the quick -O2 build only: a round
    // of the -O0 build costs several times as much and would warm nothing more.
    for (int run = -1; run < runs; ++run) {
        auto once = [&](auto product, double& best, int k) {
            const double start = cachebook::thread_cpu_seconds();  // one thread: see rule 2
            product(c[static_cast<std::size_t>(k)].data());
            cachebook::do_not_optimize(c[static_cast<std::size_t>(k)].data());
            const double seconds = cachebook::thread_cpu_seconds() - start;
            if (run < 0) return;
            best = std::min(best, seconds);
            rule.runs[k].push_back(seconds);
        };
        if (run >= 0) {
            once([&](double* out) { o0::product_naive(m.a.data(), m.b.data(), out, n); }, rule.naive_o0, 0);
            once([&](double* out) { o0::product_blocked(m.a.data(), m.b.data(), out, n, tile); }, rule.blocked_o0, 1);
        }
        once([&](double* out) { o2::product_naive(m.a.data(), m.b.data(), out, n); }, rule.naive_o2, 2);
        once([&](double* out) { o2::product_blocked(m.a.data(), m.b.data(), out, n, tile); }, rule.blocked_o2, 3);
    }
    rule.same_results = c[0] == c[1] && c[1] == c[2] && c[2] == c[3];
    return rule;
}

BlockedClaims blocked_claims(const BlockedRule& rule, double max_noise) {
    const auto& [naive_o0, blocked_o0, naive_o2, blocked_o2] = rule.runs;
    std::vector<double> share_o0, share_o2;  // each run's blocked / naive time: 1 / the gain of blocking
    for (std::size_t i = 0; i < naive_o0.size(); ++i) {
        share_o0.push_back(blocked_o0[i] / naive_o0[i]);
        share_o2.push_back(blocked_o2[i] / naive_o2[i]);
    }
    const auto runs = static_cast<int>(naive_o0.size());
    return {cachebook::decide(blocked_o0, blocked_o2, cachebook::ClaimRule{kO0OverO2, runs, max_noise}),
            cachebook::decide(share_o0, share_o2, cachebook::ClaimRule{kGainO2OverO0, runs, max_noise})};
}

std::size_t l1_resident_order(std::size_t l1_bytes) {
    std::size_t n = 16;
    while (2 * n * 2 * n * sizeof(int) <= l1_bytes / 2) n *= 2;
    return n;
}

namespace {
// One timed run of a walk over an n x n grid, its pass repeated to about `elements` elements, in ns
// per element by the thread's CPU clock (one thread, and a shared machine: see rule 2).
template <class Walk>
double ns_per_element(Walk walk, const std::vector<int>& grid, std::size_t n, std::size_t elements) {
    const std::size_t passes = std::max<std::size_t>(1, elements / (n * n));
    const double start = cachebook::thread_cpu_seconds();
    for (std::size_t p = 0; p < passes; ++p) cachebook::do_not_optimize(walk(grid.data(), n));
    return (cachebook::thread_cpu_seconds() - start) * 1e9 / static_cast<double>(passes * n * n);
}
}  // namespace

std::vector<SizeRow> size_rule(const std::vector<std::size_t>& sizes, std::size_t elements, int runs) {
    std::vector<SizeRow> rows;
    std::vector<std::vector<int>> grids;
    for (std::size_t n : sizes) {
        rows.push_back(SizeRow{n, n * n * sizeof(int), kNotTimed, kNotTimed, {}, {}});
        grids.push_back(make_grid(n));
    }
    for (int run = -1; run < runs; ++run)  // run -1 warms up, untimed
        for (std::size_t k = 0; k < rows.size(); ++k) {
            auto& row = rows[k];
            const double by_rows = ns_per_element(o2::sum_rows, grids[k], row.n, elements);
            const double by_columns = ns_per_element(o2::sum_columns, grids[k], row.n, elements);
            if (run < 0) continue;
            row.rows_runs.push_back(by_rows);
            row.columns_runs.push_back(by_columns);
            row.rows_ns = std::min(row.rows_ns, by_rows);
            row.columns_ns = std::min(row.columns_ns, by_columns);
        }
    return rows;
}

cachebook::ClaimResult size_claim(const SizeRow& small, const SizeRow& large, double max_noise) {
    std::vector<double> large_ratio, small_ratio;  // each run's columns / rows
    for (std::size_t i = 0; i < large.rows_runs.size(); ++i) {
        large_ratio.push_back(large.columns_runs[i] / large.rows_runs[i]);
        small_ratio.push_back(small.columns_runs[i] / small.rows_runs[i]);
    }
    const auto runs = static_cast<int>(large_ratio.size());
    return cachebook::decide(large_ratio, small_ratio, cachebook::ClaimRule{kLargeOverSmall, runs, max_noise});
}

LatencyClaims latency_claims(const LatencyRow& row, double max_noise) {
    const auto runs = static_cast<int>(row.chase_runs.size());
    return {
        cachebook::decide(row.chase_runs, row.strided_runs, cachebook::ClaimRule{kChaseOverStrided, runs, max_noise}),
        cachebook::decide(row.chase_runs, row.gather_runs, cachebook::ClaimRule{kChaseOverGather, runs, max_noise})};
}

std::optional<std::size_t> largest_cache_bytes() {
    std::optional<std::size_t> largest;
    for (const auto& cache : cachebook::machine().caches)
        if (cache.type != "Instruction" && cache.size_bytes > 0)
            largest = std::max(largest.value_or(0), cache.size_bytes);
    return largest;
}

// --- Auditing one claim ----------------------------------------------------------------------

PrefetchAudit audit_prefetch(std::size_t n, std::size_t distance, int runs) {
    PrefetchAudit audit;
    audit.n = n;
    audit.distance = distance;
    model_prefetch(audit, l1_geometry());
    time_prefetch(audit, make_grid(n), runs);
    return audit;
}

AuditClaims audit_claims(const PrefetchAudit& audit, double claimed, double max_noise) {
    const auto runs = static_cast<int>(audit.plain_runs.size());
    const auto& plain = audit.plain_runs;
    const auto& prefetched = audit.prefetched_runs;
    return {cachebook::decide(plain, prefetched, cachebook::ClaimRule{claimed, runs, max_noise}),
            cachebook::decide(plain, prefetched, cachebook::ClaimRule{1.0, runs, max_noise})};
}

std::string audit_verdict(const AuditClaims& claims) {
    using cachebook::Verdict;
    if (claims.claimed.verdict == Verdict::holds) return "holds";
    if (claims.claimed.verdict == Verdict::inconclusive) return "undecided";
    // The claim fails, so the control was quiet: any gain is decided too, or lies within the noise.
    switch (claims.any_gain.verdict) {
        case Verdict::holds:
            return "smaller";
        case Verdict::fails:
            return "slower";
        case Verdict::inconclusive:
            break;
    }
    return "none";
}

}  // namespace ch07
