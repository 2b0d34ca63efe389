#pragma once
// Chapter 7: measuring right. Each mistake of the course notes' six rules, run next to
// the right way; the strided sum against the pointer chase; hardware counters
// or their stand-in (cachegrind) against the book's own cache model.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/trace.hpp"

namespace ch07 {

/// An N x N int array filled with (i * n + j) % 10, row by row.
std::vector<int> make_grid(std::size_t n);

// --- Rule 1: the clock --------------------------------------------------------------

struct ClockPair {
    double wall_s = 0;  // steady_clock
    double cpu_s = 0;   // std::clock(): CPU time of the whole process, all threads added
};
struct ClockRule {
    int threads = 0;
    ClockPair one, many;  // the same total work on 1 thread and on `threads` threads
};
/// `work` units of arithmetic, split over 1 and then `threads` threads; best of `runs`.
ClockRule clock_rule(int threads, std::uint64_t work, int runs);

// --- Rule 2: one run against the minimum of several -----------------------------------

struct RunsRule {
    std::size_t n = 0;
    cachebook::Timing batch_a, batch_b;  // two batches of the same measurement
    [[nodiscard]] double first() const { return batch_a.runs.empty() ? 0 : batch_a.runs.front(); }
    /// How far one run of batch A can land above its minimum: max / min - 1.
    [[nodiscard]] double spread() const { return batch_a.max() / batch_a.min() - 1.0; }
    /// How far the two batches' minima lie apart: |min A / min B - 1|.
    [[nodiscard]] double min_gap() const;
};
RunsRule runs_rule(std::size_t n, int runs);

// --- Rule 3: first touch ---------------------------------------------------------------

struct TouchRule {
    std::size_t bytes = 0;
    double first_fill_s = 0;                            // fresh pages from the OS: every page faults
    double second_fill_s = 0;                           // the same pages again
    std::uint64_t faults_first = 0, faults_second = 0;  // minor page faults during each (getrusage)
};
TouchRule touch_rule(std::size_t bytes, int runs);

// --- Rule 4: dead code -----------------------------------------------------------------

struct DeadCodeRule {
    std::size_t n = 0;
    double unused_s = 0;  // the sum computed and thrown away: the compiler deletes the loop
    double used_s = 0;    // the sum kept (do_not_optimize)
    std::int64_t sum = 0;
};
DeadCodeRule dead_code_rule(std::size_t n, int runs);

// --- Rule 5: -O0 against -O2, on the blocked product ---------------------------------

struct BlockedRule {
    std::size_t n = 0, tile = 0;
    double naive_o0 = 0, blocked_o0 = 0, naive_o2 = 0, blocked_o2 = 0;  // best seconds
    bool same_results = false;  // all four C equal, byte for byte (integer-valued doubles)
    [[nodiscard]] double gain_o0() const { return naive_o0 / blocked_o0; }
    [[nodiscard]] double gain_o2() const { return naive_o2 / blocked_o2; }
};
/// The naive and the blocked product of n x n doubles at -O0 and at -O2; best of
/// `runs` by the thread's CPU clock, interleaved, one warm-up.
BlockedRule blocked_rule(std::size_t n, std::size_t tile, int runs);

// --- Rule 6: data that never leaves L1 ----------------------------------------------------

struct SizeRow {
    std::size_t n = 0, bytes = 0;
    double rows_ns = 0, columns_ns = 0;  // per element, best run
};
/// The -O2 row and column sums at each size, each pass repeated to about
/// `elements` elements per timed run, timed by the thread's CPU clock.
std::vector<SizeRow> size_rule(const std::vector<std::size_t>& sizes, std::size_t elements, int runs);
/// The order of the rule's small array: the largest power of two from 16 up whose
/// n x n ints fill at most half of an L1 of `l1_bytes`.
std::size_t l1_resident_order(std::size_t l1_bytes);

// --- Latency: strided sum against pointer chase --------------------------------------------

struct LatencyRow {
    std::size_t bytes = 0;
    double strided_ns = 0;  // sum of one int per line, in address order
    double gather_ns = 0;   // the same slots in random order, addresses known up front
    double chase_ns = 0;    // the same random order, each address from the previous load
};
/// One slot per line over `bytes`; `hops` accesses per timed run.
LatencyRow latency_row(std::size_t bytes, std::size_t hops, int runs);

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

/// The book's cache model for the row and column walks of an n x n int array
/// (64-byte aligned, base 0) through one cache level.
struct SimulatedWalks {
    std::uint64_t row_misses = 0, column_misses = 0, accesses = 0;
};
SimulatedWalks simulate_walks(const cachebook::CacheConfig& config, std::size_t n);

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
/// cachegrind's --D1=size,ways,line for this geometry.
std::string cachegrind_d1_flag(const cachebook::CacheConfig& config);
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

/// This machine's L1d geometry (from sysfs), or 32 KiB 8-way 64-byte lines when it is unknown.
cachebook::CacheConfig l1_geometry();

// --- Auditing one claim: a software prefetch in the row sum ---------------------------------

struct PrefetchAudit {
    std::size_t n = 0, distance = 0;
    std::uint64_t stride_bytes = 0;                // the inner loop's step through memory
    double model_plain = 0, model_prefetched = 0;  // the model's lines fetched per element
    bool same_sums = false;
    double plain_s = 0, prefetched_s = 0;  // best of the runs, interleaved
    [[nodiscard]] double speedup() const { return plain_s / prefetched_s; }
};
/// The model's part of the audit: the row walk of an n x n int array through `l1`,
/// without and with the kernel's prefetches (one per line, `distance` elements ahead; a prefetch
/// is an access to the model).
void model_prefetch(PrefetchAudit& audit, const cachebook::CacheConfig& l1);
/// The whole audit, timed at -O2 by the thread's CPU clock.
PrefetchAudit audit_prefetch(std::size_t n, std::size_t distance, int runs);
/// The audit's last step: "holds" when the measured speed-up reaches the claimed one,
/// "smaller" when it is short of the claim but above 1 + `noise`, "none" otherwise.
std::string audit_verdict(double speedup, double claimed, double noise);

// --- When not to bother -------------------------------------------------------------------------

/// Amdahl: the whole program's speed-up when a part taking `fraction` of the
/// time is made `speedup` times faster.
double amdahl(double fraction, double speedup);

}  // namespace ch07
