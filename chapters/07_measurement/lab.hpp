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
#include "cachebook/measure.hpp"
#include "cachebook/trace.hpp"
#include "measurement.hpp"

namespace ch07 {

/// An N x N int array filled with (i * n + j) % 10, row by row.
std::vector<int> make_grid(std::size_t n);

/// The share of a CPU this process gets right now (1 on an idle machine).
double cpu_share_now();

// --- Rule 1: the clock --------------------------------------------------------------

/// The two clocks the rule compares, by the names the program prints.
inline constexpr std::string_view kCpuClockName = "std::clock()";
inline constexpr std::string_view kWallClockName = "steady_clock";

// --- Rule 2: one run against the minimum of several -----------------------------------

struct RunsRule {
    std::size_t n = 0;
    cachebook::Timing batch_a, batch_b;  // two batches of the same measurement, run alternately: A B A B
    [[nodiscard]] double first() const { return batch_a.runs.empty() ? 0 : batch_a.runs.front(); }
    /// How far one run of batch A can land above its minimum: max / min - 1.
    [[nodiscard]] double spread() const { return batch_a.max() / batch_a.min() - 1.0; }
    /// How far the two batches' minima lie apart: |min A / min B - 1|.
    [[nodiscard]] double min_gap() const;
};
/// The row sum of an n x n grid, `runs` times in each batch, the batches alternating run for
/// run (A B A B ...) so that a change of the machine hits both alike; no warm-up.
RunsRule runs_rule(std::size_t n, int runs);

/// Rule 2's claim: the two batches' minima lie at most 1 + `tolerance` times apart.
inline constexpr double kMinimaTolerance = 0.3;
/// Decided by the book's rule (cachebook/claim.hpp) both ways round: A's minimum is at least
/// 1 / (1 + tolerance) times B's, and B's at least that times A's; the control is each batch's odd
/// runs against its even runs. The way round with the smaller effect decides (when it holds, so
/// does the other): `effect` is the faster batch's minimum over the slower's, `threshold`
/// 1 / (1 + tolerance).
cachebook::ClaimResult minima_agree(const RunsRule& rule, double tolerance = kMinimaTolerance, double max_noise = 0.2);

// --- Rule 1's claims ------------------------------------------------------------------------

/// std::clock() shows no gain from threads: the CPU time on `threads` threads is at least 0.8
/// times the CPU time on one (a "speed-up" of at most 1.25). steady_clock shows the gain: one
/// thread takes at least 1.3 times as long on the wall as `threads` threads. The wall-clock claim
/// needs the CPUs: with one usable CPU, or when the threads got fewer than 1.5 CPUs between them
/// and the claim does not hold, its verdict is inconclusive with that reason.
inline constexpr double kCpuClockAtLeast = 0.8, kWallSpeedup = 1.3, kCpusForWallClaim = 1.5;
struct ClockClaims {
    cachebook::ClaimResult cpu_no_gain, wall_gain;
};
ClockClaims clock_claims(const ClockRule& rule, int usable_cpus, double max_noise = 0.2);

// --- Rule 4: dead code -----------------------------------------------------------------

struct DeadCodeRule {
    std::size_t n = 0;
    double unused_s = 0;                         // the sum computed and thrown away: the compiler deletes the loop
    double used_s = 0;                           // the sum kept (do_not_optimize)
    std::vector<double> unused_runs, used_runs;  // every run, interleaved: unused, used, unused, ...
    std::int64_t sum = 0;
};
DeadCodeRule dead_code_rule(std::size_t n, int runs);
/// Rule 4's claim, by the book's rule: the kept sum takes at least 10 times as long as the
/// thrown-away one (which the compiler deleted: it takes a clock reading's time).
inline constexpr double kDeadCodeThreshold = 10;
cachebook::ClaimResult dead_code_claim(const DeadCodeRule& rule, double max_noise = 0.2);

/// Rule 3's claim, by the book's rule: the first fill of fresh pages takes at least 1.5 times as
/// long as the second (the page faults against none).
inline constexpr double kTouchThreshold = 1.5;
cachebook::ClaimResult touch_claim(const TouchRule& rule, double max_noise = 0.2);

// --- Rule 5: -O0 against -O2, on the blocked product ---------------------------------

struct BlockedRule {
    std::size_t n = 0, tile = 0;
    double naive_o0 = 0, blocked_o0 = 0, naive_o2 = 0, blocked_o2 = 0;  // best seconds
    bool same_results = false;    // all four C equal, byte for byte (integer-valued doubles)
    std::vector<double> runs[4];  // every run of naive -O0, blocked -O0, naive -O2, blocked -O2, interleaved
    [[nodiscard]] double gain_o0() const { return naive_o0 / blocked_o0; }
    [[nodiscard]] double gain_o2() const { return naive_o2 / blocked_o2; }
};
/// The naive and the blocked product of n x n doubles at -O0 and at -O2; best of
/// `runs` by the thread's CPU clock, interleaved, one warm-up.
BlockedRule blocked_rule(std::size_t n, std::size_t tile, int runs);
/// Rule 5's claims, by the book's rule: the blocked product takes at least 1.5 times as long at
/// -O0 as at -O2; and blocking gains at least 1.5 times as much at -O2 as at -O0, decided on each
/// run's blocked / naive time at -O0 against the same at -O2 (the four products run one after the
/// other in each run, so each ratio's two times saw the same machine).
inline constexpr double kO0OverO2 = 1.5, kGainO2OverO0 = 1.5;
struct BlockedClaims {
    cachebook::ClaimResult o0_over_o2, gain_o2_over_o0;
};
BlockedClaims blocked_claims(const BlockedRule& rule, double max_noise = 0.2);

// --- Rule 6: data that never leaves L1 ----------------------------------------------------

struct SizeRow {
    std::size_t n = 0, bytes = 0;
    double rows_ns = 0, columns_ns = 0;           // per element, best run
    std::vector<double> rows_runs, columns_runs;  // per element, every run
};
/// The -O2 row and column sums at each size, each pass repeated to about `elements` elements per
/// timed run, timed by the thread's CPU clock; every size and order once per run, after one
/// untimed round.
std::vector<SizeRow> size_rule(const std::vector<std::size_t>& sizes, std::size_t elements, int runs);
/// Rule 6's claim, by the book's rule: columns / rows at the large size is at least 3 times
/// columns / rows in L1, decided on each run's two ratios (the four walks of a run saw the same
/// machine).
inline constexpr double kLargeOverSmall = 3;
cachebook::ClaimResult size_claim(const SizeRow& small, const SizeRow& large, double max_noise = 0.2);
/// The order of the rule's small array: the largest power of two from 16 up whose
/// n x n ints fill at most half of an L1 of `l1_bytes`.
std::size_t l1_resident_order(std::size_t l1_bytes);

// --- Latency ----------------------------------------------------------------------------------

/// The largest data or unified cache this machine reports, in bytes; empty when it reports none.
/// The prose asks whether the latency walk's large working set lies beyond it.
std::optional<std::size_t> largest_cache_bytes();

/// The latency section's two claims, by the book's rule, on a working set beyond the caches: the
/// chase takes at least 5 times as long per access as the strided sum, and at least 2 times as long
/// as the random walk whose addresses are known.
inline constexpr double kChaseOverStrided = 5, kChaseOverGather = 2;
struct LatencyClaims {
    cachebook::ClaimResult over_strided, over_gather;
};
LatencyClaims latency_claims(const LatencyRow& row, double max_noise = 0.2);

// --- Hardware counters ----------------------------------------------------------------------

enum class PerfState { NotInstalled, NoPermission, NotSupported, Works };
std::string_view perf_state_name(PerfState s);
/// Reads the output of `perf stat -x, -e EVENT -- true` (stderr) and its exit status.
PerfState parse_perf_probe(const std::string& output, int status);
/// Runs that probe on this machine for the event.
struct PerfProbe {
    PerfState state = PerfState::NotInstalled;
    std::string detail;  // the line perf printed about the event
};
PerfProbe probe_perf(const std::string& event = "cache-misses");
/// The count of `event` in perf's -x, output, if there is one.
std::optional<std::uint64_t> parse_perf_count(const std::string& output, const std::string& event);

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

/// The whole audit: the model with this machine's L1, the timing at -O2 on an n x n grid.
PrefetchAudit audit_prefetch(std::size_t n, std::size_t distance, int runs);
/// The audit's timing, by the book's rule on the interleaved runs: the claim (the plain sum takes
/// at least `claimed` times as long as the prefetching one), and whether there is any gain at all
/// (at least 1 times as long).
struct AuditClaims {
    cachebook::ClaimResult claimed, any_gain;
};
AuditClaims audit_claims(const PrefetchAudit& audit, double claimed, double max_noise = 0.2);
/// The audit's last step, from the two verdicts: "holds" (the claim holds), "smaller" (it fails,
/// but there is a gain beyond the noise), "none" (it fails, and any gain lies within the noise),
/// "slower" (the prefetch costs time beyond the noise) or "undecided" (the claim's verdict is
/// inconclusive).
std::string audit_verdict(const AuditClaims& claims);

}  // namespace ch07
