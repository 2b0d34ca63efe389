#pragma once
// Chapter 7's lab: the experiments that run the lesson (measurement.hpp) at the program's
// sizes, the tools run as child processes (perf, cachegrind) and what is read from them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/claim.hpp"
#include "cachebook/experiment.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/perf_counters.hpp"
#include "cachebook/trace.hpp"
#include "measurement.hpp"

namespace ch07 {

/// The order of the n x n int array the rules time by default, and with --quick.
inline constexpr std::size_t kDefaultN = 2048, kQuickN = 1024;

/// An N x N int array filled with (i * n + j) % 10, row by row.
std::vector<int> make_grid(std::size_t n);

/// The share of a CPU this process gets right now (1 on an idle machine).
double cpu_share_now();

// --- Rule 1: the clock --------------------------------------------------------------

/// The two clocks the rule compares, by the names the program prints.
inline constexpr std::string_view kCpuClockName = "std::clock()";
inline constexpr std::string_view kWallClockName = "steady_clock";
/// Rule 1's claims: std::clock() shows no gain from threads, the CPU time on `threads` threads at
/// least 0.8 times the CPU time on one (claim cpu_clock, timed by that clock); steady_clock shows
/// the gain, one thread at least 1.3 times as long on the wall as `threads` threads (wall_clock,
/// timed by the wall clock, a core a thread).
inline constexpr double kCpuClockAtLeast = 0.8, kWallSpeedup = 1.3;
/// The multiply-adds of the program's run, and of a quick one (--quick and the test).
inline constexpr std::uint64_t kClockWork = 50'000'000, kQuickClockWork = 20'000'000;
struct ClockRule {
    int threads = 0;
    std::uint64_t work = 0;
    cachebook::ExperimentResult cpu, wall;  // cpu: `threads` / one; wall: one / `threads`
    [[nodiscard]] double one_cpu_s() const { return cachebook::timed_side(cpu.fast_runs).value; }
    [[nodiscard]] double many_cpu_s() const { return cachebook::timed_side(cpu.slow_runs).value; }
    [[nodiscard]] double one_wall_s() const { return cachebook::timed_side(wall.slow_runs).value; }
    [[nodiscard]] double many_wall_s() const { return cachebook::timed_side(wall.fast_runs).value; }
};
/// split_work on one thread against `threads` threads, timed by each clock, `runs` runs a side
/// (kMinRunsPerSide and kQuickClockWork with `quick`).
ClockRule clock_rule(int threads, int runs, bool quick);

// --- Rule 2: one run against the minimum of several -----------------------------------

/// Rule 2's claim: the two batches' minima lie at most 1 + `tolerance` times apart.
inline constexpr double kMinimaTolerance = 0.3;
/// The batches of the program's run, and the size and batches of a quick one (--quick and the
/// test): 256 x 256 ints stay in L2, where no neighbour's use of a shared L3 moves a minimum.
inline constexpr int kBatchRuns = 20, kQuickBatchRuns = 60;
inline constexpr std::size_t kQuickBatchN = 256;

struct RunsRule {
    std::size_t n = 0;
    cachebook::Timing batch_a, batch_b;  // two batches of the same row sum, run A B B A
    cachebook::ClaimResult claim;        // minima_agree on the two batches
    [[nodiscard]] double first() const { return batch_a.runs.empty() ? 0 : batch_a.runs.front(); }
    /// How far one run of batch A can land above its minimum: max / min - 1.
    [[nodiscard]] double spread() const { return batch_a.max() / batch_a.min() - 1.0; }
    /// How far the two batches' minima lie apart: |min A / min B - 1|.
    [[nodiscard]] double min_gap() const;
};
/// The row sum of an n x n grid as the two sides of one experiment (claim minima), `runs` runs
/// a side (kQuickBatchRuns with `quick`), after one untimed call of each.
RunsRule runs_rule(std::size_t n, int runs, bool quick);
/// Decided by the book's rule both ways round: A's minimum is at least 1 / (1 + tolerance) times
/// B's, and B's at least that times A's. The way round with the smaller effect decides (when it
/// holds, so does the other): `effect` is the faster batch's minimum over the slower's.
cachebook::ClaimResult minima_agree(const std::vector<double>& a, const std::vector<double>& b,
                                    double tolerance = kMinimaTolerance);

// --- Rule 3: first touch ---------------------------------------------------------------

/// Rule 3's claim (touch): the first fill of fresh pages takes at least 1.5 times as long as a fill
/// of pages present (the page faults against none).
inline constexpr double kTouchThreshold = 1.5;
/// The mapping each fill writes, in the program's run, --quick and the test: 16,384 pages of 4 KiB.
/// The effect is a cost per page (tens of times the writes' on the machine this book was built on),
/// so more pages do not decide it better, they only take longer.
inline constexpr std::size_t kTouchBytes = std::size_t{64} << 20;
struct TouchRule {
    std::size_t bytes = 0;
    std::uint64_t faults_first = 0, faults_second = 0;  // minor page faults of the last fill of each side
    cachebook::ExperimentResult timed;                  // first fill / second
    [[nodiscard]] double first_fill_s() const { return cachebook::timed_side(timed.slow_runs).value; }
    [[nodiscard]] double second_fill_s() const { return cachebook::timed_side(timed.fast_runs).value; }
};
/// The two fills of `bytes` as the sides of one experiment, `runs` runs a side (kMinRunsPerSide with
/// `quick`): before every first fill, untimed, the kit's set-up step maps fresh pages; a second fill
/// writes again to the pages the last first fill faulted in.
TouchRule touch_rule(std::size_t bytes, int runs, bool quick);

// --- Rule 4: dead code -----------------------------------------------------------------

/// Rule 4's claim (dead_code): the kept sum takes at least 10 times as long as the thrown-away one,
/// which the compiler deleted. The thrown-away sum takes a clock reading's time, whose runs scatter
/// widely: the control needs more runs than the other rules (a kept sum costs milliseconds).
inline constexpr double kDeadCodeThreshold = 10;
inline constexpr int kDeadCodeRuns = 20;
struct DeadCodeRule {
    std::size_t n = 0;
    std::int64_t sum = 0;
    cachebook::ExperimentResult timed;  // kept / thrown away
    [[nodiscard]] double unused_s() const { return cachebook::timed_side(timed.fast_runs).value; }
    [[nodiscard]] double used_s() const { return cachebook::timed_side(timed.slow_runs).value; }
};
/// The two sums of an n x n grid, at least kDeadCodeRuns runs a side (kDeadCodeRuns with `quick`).
DeadCodeRule dead_code_rule(std::size_t n, int runs, bool quick);

// --- Rule 5: -O0 against -O2, on the blocked product ---------------------------------

/// The products' order in the program's run and in a quick one (--quick and the test), and the tile.
inline constexpr std::size_t kProductN = 512, kQuickProductN = 256, kProductTile = 32;
/// Rule 5's claims: blocking gains at least 1.5 times as much at -O2 as at -O0 (gain_o2_over_o0,
/// a ratio of ratios: naive / blocked at -O2 over the same at -O0), and the blocked product takes
/// at least 1.5 times as long at -O0 as at -O2 (o0_over_o2, on the same runs).
inline constexpr double kO0OverO2 = 1.5, kGainO2OverO0 = 1.5;
struct BlockedRule {
    std::size_t n = 0, tile = 0;
    bool same_results = false;            // all four C equal, byte for byte (integer-valued doubles)
    cachebook::RatioOfRatiosResult gain;  // a, b: naive and blocked at -O2; c, d: at -O0
    cachebook::ClaimResult o0_over_o2;    // blocked at -O0 / at -O2
    [[nodiscard]] double naive_o0() const { return cachebook::timed_side(gain.c_runs).value; }
    [[nodiscard]] double blocked_o0() const { return cachebook::timed_side(gain.d_runs).value; }
    [[nodiscard]] double naive_o2() const { return cachebook::timed_side(gain.a_runs).value; }
    [[nodiscard]] double blocked_o2() const { return cachebook::timed_side(gain.b_runs).value; }
};
/// The naive and the blocked product of n x n doubles at -O0 and at -O2, timed by the thread's CPU
/// clock in rounds of all four, `runs` rounds (kMinRunsPerSide with `quick`); one untimed round.
BlockedRule blocked_rule(std::size_t n, std::size_t tile, int runs, bool quick);

// --- Rule 6: data that never leaves L1 ----------------------------------------------------

struct SizeRow {
    std::size_t n = 0, bytes = 0;
    double rows_ns = 0, columns_ns = 0;  // per element, best run
};
/// Rule 6's claim (size), a ratio of ratios: columns / rows at the large size is at least 3 times
/// columns / rows in L1.
inline constexpr double kLargeOverSmall = 3;
struct SizeRule {
    SizeRow small, large;
    cachebook::RatioOfRatiosResult claim;  // a, b: columns and rows, large; c, d: small
};
/// The -O2 row and column sums of an order-`small` and an order-`large` array, the small one's pass
/// repeated to as many elements as the large one's, timed by the thread's CPU clock in rounds of
/// all four, `runs` rounds (kMinRunsPerSide with `quick`), after one untimed round.
SizeRule size_rule(std::size_t small, std::size_t large, int runs, bool quick);
/// The order of the rule's small array: the largest power of two from 16 up whose
/// n x n ints fill at most half of an L1 of `l1_bytes`.
std::size_t l1_resident_order(std::size_t l1_bytes);

// --- Latency ----------------------------------------------------------------------------------

/// The largest data or unified cache this machine reports, in bytes; empty when it reports none.
/// The prose asks whether the latency walk's large working set lies beyond it.
std::optional<std::size_t> largest_cache_bytes();

/// The latency section's two claims on a working set beyond the caches: the chase takes at least
/// 5 times as long per access as the strided sum (chase_over_strided), and at least 2 times as long
/// as the random walk whose addresses are known (chase_over_gather).
inline constexpr double kChaseOverStrided = 5, kChaseOverGather = 2;
/// The large working set and the accesses a run, of the program's run and of a quick one.
inline constexpr std::size_t kLatencyBytes = std::size_t{128} << 20, kQuickLatencyBytes = std::size_t{64} << 20;
inline constexpr std::size_t kLatencyHops = 1 << 18, kQuickLatencyHops = 1 << 17;
struct LatencyRow {
    std::size_t bytes = 0;
    double strided_ns = 0;  // ns per access, best run
    double gather_ns = 0;   // the same slots in random order, addresses known up front
    double chase_ns = 0;    // the same random order, each address from the previous load
    cachebook::ExperimentResult over_strided, over_gather;  // the chase against each, as the kit ran them
};
/// The three walks over `bytes`, `hops` accesses a call: the chase against each of the others, each
/// pair an experiment, `runs` runs a side (kMinRunsPerSide with `quick`).
LatencyRow latency_row(std::size_t bytes, std::size_t hops, int runs, bool quick);

// --- Hardware counters ----------------------------------------------------------------------

// perf stat run as a child and read: common (cachebook/perf_counters.hpp).
using cachebook::parse_perf_count;
using cachebook::parse_perf_probe;
using cachebook::perf_state_name;
using cachebook::PerfProbe;
using cachebook::PerfState;
using cachebook::probe_perf;

/// "D1  misses:  262,171  (...)" in cachegrind's summary, as a number.
std::optional<std::uint64_t> parse_cachegrind_d1_misses(const std::string& output);

/// Counts of the row and column walks from a tool (cachegrind or perf), each
/// minus a run that only fills the array.
struct ToolCounts {
    std::string tool;                                 // "cachegrind", "perf", or empty when none could run
    std::string why_not;                              // when empty tool: why
    std::uint64_t baseline = 0, row = 0, column = 0;  // raw counts of the three runs
    [[nodiscard]] std::int64_t row_walk() const { return static_cast<std::int64_t>(row - baseline); }
    [[nodiscard]] std::int64_t column_walk() const { return static_cast<std::int64_t>(column - baseline); }
};
/// The path of the ch07_walk program (next to this program, or where the build put it).
std::string walk_program();
/// Runs ch07_walk none/row/column under cachegrind with D1 = `l1`.
ToolCounts cachegrind_walks(const cachebook::CacheConfig& l1, std::size_t n);
/// Runs ch07_walk under perf stat counting `event`.
ToolCounts perf_walks(const std::string& event, std::size_t n);
/// The walks counted by the best tool this machine has: perf's L1-dcache-load-misses
/// when the probe says perf works, else cachegrind with D1 = `l1`. An empty `tool`
/// says why neither could count.
ToolCounts count_walks(const PerfProbe& probe, const cachebook::CacheConfig& l1, std::size_t n);

// --- Chapter 3's six orders, counted ------------------------------------------------------

/// The model's misses per inner iteration of one loop order of C = A x B (n x n doubles,
/// each matrix on lines of its own, A[i][k], B[k][j], C[i][j] per iteration).
struct OrderMisses {
    double a = 0, b = 0, c = 0;
    [[nodiscard]] double total() const { return a + b + c; }
};
OrderMisses model_order_misses(cachebook::LoopOrder order, std::size_t n, const cachebook::CacheConfig& cache);

/// cachegrind's D1 misses for chapter 3's code of each order (ch07_walk), minus a run that
/// only fills the three matrices. Empty `misses` and a reason when it could not run.
struct OrderCounts {
    std::string why_not;
    std::uint64_t baseline = 0;
    std::vector<std::uint64_t> misses;  // one per order of cachebook::kAllOrders
    [[nodiscard]] double per_iteration(std::size_t k, std::size_t n) const;
};
OrderCounts cachegrind_orders(const cachebook::CacheConfig& d1, std::size_t n);
/// How a count compares with the model's: "agrees" within 10 % (or 0.01 per iteration),
/// else "fewer" or "more".
std::string compare_with_model(double counted, double model);

/// One row of the six orders' table: the model's count, and the tool's when it ran.
struct OrderRow {
    cachebook::LoopOrder order{};
    OrderMisses model;
    double counted = 0;    // cachegrind's misses per iteration (0 when it did not run)
    std::string compared;  // compare_with_model, or empty when it did not run
};
/// The model's and the tool's count for each order of cachebook::kAllOrders.
std::vector<OrderRow> order_rows(const OrderCounts& counted, std::size_t n, const cachebook::CacheConfig& cache);
/// The names of the orders whose comparison is `compared` ("fewer" or "more"), joined by ", ".
std::string orders_compared(const std::vector<OrderRow>& rows, std::string_view compared);

/// This machine's L1d geometry (from sysfs), or 32 KiB 8-way 64-byte lines when it is unknown.
cachebook::CacheConfig l1_geometry();

// --- Auditing one claim: a software prefetch in the row sum ---------------------------------

/// The prefetch the audit's claim names: 10 % faster, with a prefetch 128 elements (eight lines) ahead.
inline constexpr double kClaimedSpeedup = 1.10;
inline constexpr std::size_t kPrefetchDistance = 128;
/// The audit's timing runs: a small effect, and a sum of milliseconds, so more runs than elsewhere.
inline constexpr int kAuditRuns = 30;
/// The whole audit: the model with this machine's L1, and the timing at -O2 on an n x n grid, the
/// plain row sum against the prefetching one (claim audit, at least kClaimedSpeedup), `runs` runs a
/// side by the thread's CPU clock (kAuditRuns with `quick`).
struct AuditTimes {
    PrefetchAudit model;
    bool same_sums = false;
    cachebook::ExperimentResult timed;  // plain / prefetched, the claim as the kit decided it
    [[nodiscard]] double plain_s() const { return cachebook::timed_side(timed.slow_runs).value; }
    [[nodiscard]] double prefetched_s() const { return cachebook::timed_side(timed.fast_runs).value; }
};
AuditTimes audit_prefetch(std::size_t n, int runs, bool quick);
/// The audit's two verdicts on the same runs: the claim, and whether there is any gain at all
/// (plain at least 1 times as long as prefetched).
struct AuditClaims {
    cachebook::ClaimResult claimed, any_gain;
};
AuditClaims audit_claims(const cachebook::ExperimentResult& timed);
/// The audit's last step, from the two verdicts: "holds" (the claim holds), "smaller" (it fails,
/// but there is a gain beyond the noise), "none" (it fails, and any gain lies within the noise),
/// "slower" (the prefetch costs time beyond the noise) or "undecided" (the claim's verdict is
/// inconclusive).
std::string audit_verdict(const AuditClaims& claims);

}  // namespace ch07
