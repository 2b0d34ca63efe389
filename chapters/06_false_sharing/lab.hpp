#pragma once
// Chapter 6's experiment: the layouts as the compiler laid them out, the model's trace, the
// timed races, the queue and the lock timed, and the hardware counters.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cachebook/claim.hpp"
#include "cachebook/coherence.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "false_sharing.hpp"

namespace ch06 {

// ---------------------------------------------------------------- layouts

/// One struct as the compiler laid it out.
struct StructFacts {
    std::string name;
    std::size_t size = 0, align = 0;
    std::vector<std::pair<std::string, std::size_t>> offsets;  // field, byte offset
};

/// Everything the chapter says about layouts, computed by sizeof/offsetof/alignof.
struct LayoutFacts {
    std::size_t line_bytes = 64;  // the line the layouts are designed for
    StructFacts counters, counters_char_pad, counters_aligned, counters_portable, worker_state, worker_state_aligned,
        stats, stats_aligned;
    double worker_states_per_line = 0;              // line / sizeof(WorkerState)
    std::size_t destructive = 0, constructive = 0;  // std::hardware_*_interference_size
    int workers = 8;
    std::vector<std::uint64_t> worker_line;          // line of workers[i].items_processed, array at a line boundary
    std::vector<std::uint64_t> worker_line_aligned;  // the same with WorkerStateAligned
    std::vector<int> workers_per_line;               // how many workers' items_processed fall in line 0, 1, ...
    std::vector<int> straddling;                     // the workers whose WorkerState crosses a line boundary
};
LayoutFacts layout_facts();
/// "name 0, name 8": a struct's field offsets as one line of text.
std::string offsets_text(const StructFacts& facts);

/// padding_line(cachebook::machine()), detected once: what the measured races pad to.
const PaddingLine& this_machine_line();

// ---------------------------------------------------------------- the model's trace and runs

/// One step of the ping-pong trace the prose walks through.
struct TraceStep {
    int core = 0;
    std::uint64_t address = 0;
    cachebook::CoherenceEvent event;
    std::string states;  // the line's state in core 0, core 1 after the step, e.g. "I M"
};
std::vector<TraceStep> trace_two_counters(std::size_t offset_b, std::size_t steps);

std::string dashboard_name(Dashboard d);

/// One model run of the queue or the lock table: its label, JSON key and counts.
struct CaseModel {
    std::string label, key;
    cachebook::CoherenceStats stats;
};
/// The settings of the queue and lock models the program prints.
struct CaseModelSettings {
    std::uint64_t items = 1000, ring = 64, lag = 32, refresh = 16, sections = 100;
};
inline constexpr std::uint64_t kLockWrites = 16;
/// The queue packed and padded, then the lock packed and padded, on 64-byte lines.
std::vector<CaseModel> case_models(const CaseModelSettings& settings);

// ---------------------------------------------------------------- the races

enum class Op { VolatileIncrement, AtomicFetchAdd };
std::string op_name(Op op);
/// "volatile" or "atomic": the operation's key in the JSON.
std::string op_key(Op op);

/// Creates and pins `threads` threads (thread i on cpus[i % cpus.size()]), releases them
/// together, returns the seconds from release to the last finish. body(i) is thread i's
/// work; when `cpu_seconds` is given, it receives the CPU time each thread spent in it.
double run_released(int threads, const std::vector<int>& cpus, const std::function<void(int)>& body,
                    std::vector<double>* cpu_seconds = nullptr);

/// One race: `threads` threads, thread i pinned to cpus[i % cpus.size()],
/// each adding 1 to its own counter `iterations` times; counters 8 bytes apart
/// (Packed) or one line of this_machine_line() apart (Padded). Start-up is outside the time: threads are created
/// and pinned, then released together. Returns seconds from release to the
/// last thread's finish. Throws std::runtime_error if a count comes out wrong.
double race_once(Op op, Spacing spacing, int threads, const std::vector<int>& cpus, std::uint64_t iterations);

/// Packed and padded raced in alternation, `runs` times each, whole runs timed; minima reported.
struct PairTiming {
    Op op = Op::VolatileIncrement;
    int threads = 2;
    std::vector<int> cpus;
    std::uint64_t iterations = 0;
    cachebook::Timing packed, padded;
    [[nodiscard]] double ratio() const { return packed.min() / padded.min(); }
    /// Nanoseconds per increment of one thread, on the minimum run.
    [[nodiscard]] double ns_per_op(const cachebook::Timing& t) const {
        return t.min() * 1e9 / static_cast<double>(iterations);
    }
};
PairTiming time_pair(Op op, int threads, const std::vector<int>& cpus, std::uint64_t iterations, int runs);

/// One layout's half of a chunked race (see compare_layouts).
struct ChunkRace {
    Op op = Op::VolatileIncrement;
    Spacing spacing = Spacing::Packed;
    std::vector<int> cpus;
    std::uint64_t ops_per_chunk = 0;
    int chunks = 0;                  // chunks run with this layout
    int counted = 0;                 // chunks that counted
    double min_ns = 0;               // ns per increment per cpu, minimum over the counted chunks (0 if none counted)
    std::vector<double> counted_ns;  // each counted chunk's ns per increment per cpu, in the order run
};

/// Packed against padded, timed in short chunks inside the threads. One
/// thread per entry of `cpus` (several threads may share a cpu). Before each
/// chunk the threads meet at a spinning barrier; then each does
/// `ops_per_chunk` increments of its own counter, in the packed block or the
/// padded one (the layouts alternate chunk by chunk, so both see the same
/// machine), and notes its start and end. A cpu is busy from its first
/// thread's start to its last thread's end; a chunk counts only when every cpu
/// was busy for at least 90 % of the chunk's span: on a shared machine a
/// thread can be switched out, and a thread that runs alone fights nobody for
/// the line. A chunk's figure is the busiest cpu's time in the race (its
/// thread's wall duration; for a cpu shared by several threads, the sum of
/// their CPU times, since a wall duration there also counts the other
/// threads' turns) over the increments each cpu did: ns per
/// increment per cpu. Each layout's result is the minimum over its counted
/// chunks. `rounds` sets of threads, `chunks` chunks per layout each.
struct LayoutComparison {
    ChunkRace packed, padded;
    [[nodiscard]] bool valid() const { return packed.counted > 0 && padded.counted > 0; }
    [[nodiscard]] double ratio() const { return valid() ? packed.min_ns / padded.min_ns : 0.0; }
};
LayoutComparison compare_layouts(Op op, const std::vector<int>& cpus, std::uint64_t ops_per_chunk, int chunks,
                                 int rounds);
/// The chunks counted and run, as the JSON records them beside a comparison.
nlohmann::json chunk_counts(const LayoutComparison& comparison);

/// The cpus of `threads` threads spread round the first `cores` usable cpus
/// (thread i on usable cpu i % cores).
std::vector<int> spread(int threads, int cores);

/// Seconds for `round_trips` round trips of one line between a thread on
/// `cpu_a` and one on `cpu_b`: each hand-off is a write the other side waits for.
double handoff_once(int cpu_a, int cpu_b, std::uint64_t round_trips);
/// Nanoseconds per one-way hand-off: the minimum of `runs` runs.
double handoff_ns(int cpu_a, int cpu_b, std::uint64_t round_trips, int runs);

/// The thread counts of the sweep: 2, 4, 8, ... up to `max_threads`, and
/// `max_threads` itself.
std::vector<int> sweep_counts(int max_threads);

/// Increments per thread in one chunk of compare_layouts: fewer for the slower
/// atomic add, so that chunks of both operations last about as long.
std::uint64_t ops_per_chunk(Op op);
/// The sweep's chunk for `threads` threads on `cores` cpus: the same increments per
/// cpu per chunk at every thread count (at least 1000 per thread).
std::uint64_t sweep_ops_per_chunk(Op op, int threads, int cores);
/// One row of the thread sweep: `threads` threads spread over `cores` cpus, chunked.
LayoutComparison sweep_race(Op op, int threads, int cores, int chunks, int rounds);
/// Increments per thread of one whole run of the stopwatch (time_pair); a quarter with `quick`.
std::uint64_t stopwatch_iterations(Op op, bool quick);

/// The course notes' cost of a write that fetches the line from another core, in cycles.
inline constexpr double kNotesTransferCycles[2] = {40, 200};
/// "below", "inside" or "above" that range.
std::string against_transfer_range(double cycles);
/// ns at `ghz` in cycles; nothing when the clock is unknown (0).
/// The core's clock now, in GHz (cachebook::estimate_clock_ghz; the nominal clock can be far
/// off), or 0 where it cannot be measured.
double clock_now_ghz(bool quick);
std::optional<double> cycles_at(double ns, double ghz);

// ---------------------------------------------------------------- a queue and a lock, timed (lab_cases.cpp)

/// One run of two threads: its seconds, and the smaller share of them that
/// either thread spent on a cpu (1: both ran throughout).
struct PairRun {
    double seconds = 0, least_cpu_share = 0;
    [[nodiscard]] bool together() const { return least_cpu_share >= 0.9; }
};
/// One producer (on cpus[0]) passes `items` numbers to one consumer (on cpus[1])
/// through a ring of kQueueRing slots, head and tail laid out by `spacing`
/// (padded: one line of this_machine_line() apart).
/// Throws std::runtime_error if the consumer's sum comes out wrong.
PairRun queue_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t items);

/// Two threads (on cpus[0], cpus[1]) run `sections` critical
/// sections each under one spinlock, each section adding 1 to the guarded
/// values `writes` times. Throws std::runtime_error if a value comes out wrong.
PairRun lock_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t sections, std::uint64_t writes);

/// Packed and padded run in alternation (after a warm-up) until each layout has
/// `runs` runs in which both threads ran throughout, or 3 x `runs` attempts; the minima.
struct CaseTiming {
    cachebook::Timing packed, padded;  // the runs that counted
    int attempts = 0;
    [[nodiscard]] std::size_t counted() const { return std::min(packed.runs.size(), padded.runs.size()); }
    [[nodiscard]] bool valid() const { return counted() > 0; }
    [[nodiscard]] double ratio() const { return valid() ? packed.min() / padded.min() : 0.0; }
};
enum class Case { Queue, Lock };
/// "queue" or "lock": the case's key in the JSON.
std::string case_key(Case c);
/// The case's operations per run: items through the queue, or critical sections
/// per thread (a quarter with `quick`), and the guarded writes per section.
std::uint64_t case_operations(Case c, bool quick);
CaseTiming time_case(Case c, const std::vector<int>& cpus, std::uint64_t operations, int runs);

// ---------------------------------------------------------------- the claims, decided (lab_claims.cpp)

/// The claims the chapter states about its measurements, each decided by the book's one rule
/// (cachebook::decide): both layouts timed interleaved, minima, each side's odd runs against its
/// even runs as the control; no "fails" when that control is noisier than kClaimMaxNoise.
inline constexpr double kClaimMaxNoise = 0.2;
/// Packed atomic adds on two cores take at least this many times as long as padded ones.
inline constexpr double kTwoCoreThreshold = 1.5;
/// On one core packed over padded lies in this band, for both kinds of increment.
inline constexpr double kOneCoreBand[2] = {0.7, 1.4};

/// An inconclusive verdict for a claim this machine cannot measure at all, with the reason.
cachebook::ClaimResult unmeasured_claim(double threshold, std::string reason);
/// "packed takes at least `threshold` times as long as padded", from the counted chunks.
cachebook::ClaimResult claim_at_least(const LayoutComparison& comparison, double threshold);
/// The band's two bounds, each a claim of the rule: packed at least kOneCoreBand[0] times padded
/// (first), and padded at least 1 / kOneCoreBand[1] times packed (second).
std::pair<cachebook::ClaimResult, cachebook::ClaimResult> one_core_bounds(const LayoutComparison& comparison);
/// "packed over padded lies in kOneCoreBand": holds when both bounds hold, fails when either fails.
cachebook::ClaimResult claim_one_core(const LayoutComparison& comparison);

// ---------------------------------------------------------------- hardware counters (lab_cases.cpp)

/// The two events of `perf stat -e cache-misses,LLC-load-misses`, counted in
/// this process (user space, threads included) with perf_event_open.
struct CounterReading {
    bool available = false;
    std::string why_not;  // when not available: the reason, in one line
    std::uint64_t cache_misses = 0, llc_load_misses = 0;
};
/// Counts both events while `work` runs; `available` false (with the reason)
/// where the kernel or the machine has no such counters.
CounterReading count_misses(const std::function<void()>& work);
/// The reason perf_event_open failed with `err` (an errno), in one line.
std::string why_no_counters(int err, int paranoid);
/// Both events around one packed and one padded race of two threads on `cpus`,
/// `increments` atomic adds each; with fewer than two cpus, both unavailable.
std::pair<CounterReading, CounterReading> count_race_misses(const std::vector<int>& cpus, std::uint64_t increments);

// ---------------------------------------------------------------- the results as rows (lab_report.cpp)

/// One struct's row: its size, alignment and field offsets, masked when they depend on the compiler.
std::vector<cachebook::Value> layout_cells(const StructFacts& facts, bool from_compiler);
/// Records the counts a table row does not show, so the JSON holds every count of a model run.
void record_unshown(cachebook::Report& report, const std::string& key, const cachebook::CoherenceStats& stats,
                    std::initializer_list<std::string_view> shown);
/// The table of a model's counts, one row per run (counts_row).
cachebook::ResultTable counts_table(cachebook::Report& report, const std::string& first = "layout, interleaving");
/// One model run's row of counts_table, recorded under `key`.
void counts_row(cachebook::Report& report, cachebook::ResultTable& table, const std::string& label,
                const std::string& key, const cachebook::CoherenceStats& stats);
/// One layout's row of the monitor table: model_stats_monitor run and recorded under model.monitor.`key`.
void monitor_row(cachebook::Report& report, cachebook::ResultTable& table, Dashboard layout, const std::string& key,
                 std::uint64_t rounds, std::uint64_t pass_every);
/// A measured ratio of packed over padded, or null when no chunk counted.
cachebook::Value ratio_of(const std::string& key, const LayoutComparison& comparison);
/// A comparison's cells from "packed ns" on, recorded under `key` (a field name in a table of rows).
std::vector<cachebook::Value> comparison_cells(const std::string& key, const LayoutComparison& comparison);
/// A row of the two-thread race table (section 6): the race on `cpus` (recorded under measured.`group`), or
/// unknown cells when it cannot run here (no cpus). Returns how many ns packed costs more than padded.
LayoutComparison race_row(cachebook::Report& report, cachebook::ResultTable& table, Op op, const std::vector<int>& cpus,
                          const std::string& group, int chunks, int rounds);
/// Section 6's claims, printed by cachebook::report_claim: the atomic add on two cores (`two`:
/// volatile, then atomic), and each bound of the band on one core for each operation (`one`).
void race_claims(cachebook::Report& report, const std::vector<LayoutComparison>& two,
                 const std::vector<LayoutComparison>& one, bool two_cpus);

nlohmann::json to_json(const cachebook::CoherenceStats& s);
nlohmann::json to_json(const StructFacts& s);

}  // namespace ch06
