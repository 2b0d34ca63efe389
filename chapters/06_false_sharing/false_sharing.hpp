#pragma once
// Chapter 6: false sharing. Layout facts, the MESI model runs, and the measured races.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/coherence.hpp"
#include "cachebook/measure.hpp"

namespace ch06 {

// ---------------------------------------------------------------- layouts

// [snippet: counters]
// Two counters, each written by one thread only. Nothing is shared...
struct Counters {
    long thread0_count;
    long thread1_count;
};

// ...except the line: pad each counter out to a line of its own, by hand,
struct CountersCharPad {
    long thread0_count;
    char pad0[64 - sizeof(long)];
    long thread1_count;
    char pad1[64 - sizeof(long)];
};

// or let the compiler do it.
struct CountersAligned {
    alignas(64) long thread0_count;
    alignas(64) long thread1_count;
};
// [end: counters]

// [snippet: worker_state]
// Each worker updates only workers[i]; 24-byte elements still share lines.
struct WorkerState {
    int worker_id;         // set once
    long items_processed;  // ++ per item, by its own worker
    long errors;           // rare
};

// Aligning the type rounds its size up to a whole line.
struct alignas(64) WorkerStateAligned {
    int worker_id;
    long items_processed;
    long errors;
};
// [end: worker_state]

// [snippet: stats]
// Request handlers update their own element; a monitor sums them all.
struct Stats {
    long requests;
    long bytes_sent;
    long errors;
};
struct alignas(64) StatsAligned {
    long requests;
    long bytes_sent;
    long errors;
};

inline constexpr int kHandlers = 4;

// The monitor's running total declared right after the array: it lands in the
// line that also holds the last handlers' counters.
struct DashboardPacked {
    Stats per_thread[kHandlers];
    long total;
};
// The total moved to a line of its own; the handlers still share lines.
struct DashboardTotalApart {
    Stats per_thread[kHandlers];
    alignas(64) long total;
};
// Every handler and the monitor on lines of their own.
struct DashboardPadded {
    StatsAligned per_thread[kHandlers];
    alignas(64) long total;
};
// [end: stats]

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
};
LayoutFacts layout_facts();

// ---------------------------------------------------------------- the MESI model

/// A model run: what the protocol did for one access stream.
struct ModelRun {
    std::string label;
    std::size_t burst = 1;
    cachebook::CoherenceStats stats;
};

/// Two cores; core 0 increments a counter at byte 0, core 1 one at byte
/// `offset_b`, `writes_per_core` times each, in bursts of `burst` writes.
cachebook::CoherenceStats model_two_counters(std::size_t offset_b, std::uint64_t writes_per_core, std::size_t burst);

/// One step of the ping-pong trace the prose walks through.
struct TraceStep {
    int core = 0;
    std::uint64_t address = 0;
    cachebook::CoherenceEvent event;
    std::string states;  // the line's state in core 0, core 1 after the step, e.g. "I M"
};
std::vector<TraceStep> trace_two_counters(std::size_t offset_b, std::size_t steps);

/// `workers` cores, worker i incrementing the field at `field_offset` of element
/// i of an array of `elem_size`-byte elements (the array starts a line),
/// `writes_per_worker` times, in bursts of `burst`.
cachebook::CoherenceStats model_workers(std::size_t elem_size, std::size_t field_offset, int workers,
                                        std::uint64_t writes_per_worker, std::size_t burst);

enum class Dashboard { Packed, TotalApart, Padded };
std::string dashboard_name(Dashboard d);

/// The stats example: kHandlers handler cores (0..3) and a monitor (core 4).
/// A round is one request per handler in turn (requests++, bytes_sent += n);
/// after every `pass_every` rounds the monitor reads each handler's three
/// fields and adds them into `total` (a write per handler).
struct MonitorRun {
    Dashboard layout = Dashboard::Packed;
    std::uint64_t rounds = 0, pass_every = 0, passes = 0;
    std::uint64_t total_offset = 0;  // where `total` sits
    cachebook::CoherenceStats all, handlers, monitor;
};
MonitorRun model_stats_monitor(Dashboard layout, std::uint64_t rounds, std::uint64_t pass_every);

// ---------------------------------------------------------------- measurement

enum class Op { VolatileIncrement, AtomicFetchAdd };
enum class Spacing { Packed, Padded };
std::string op_name(Op op);

/// One race: `threads` threads, thread i pinned to cpus[i % cpus.size()],
/// each adding 1 to its own counter `iterations` times; counters 8 bytes apart
/// (Packed) or 64 (Padded). Start-up is outside the time: threads are created
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
    int chunks = 0;     // chunks run with this layout
    int counted = 0;    // chunks that counted
    double min_ns = 0;  // ns per increment per cpu, minimum over the counted chunks (0 if none counted)
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
/// Increments per thread of one whole run of the stopwatch (time_pair); a quarter with `quick`.
std::uint64_t stopwatch_iterations(Op op, bool quick);
/// If each move of the line stalls a core for one hand-off of `handoff_ns`, and
/// packed costs `extra_ns` more per increment than padded, the line moved about
/// once every handoff_ns / extra_ns increments; nothing when there is no extra cost.
std::optional<double> increments_per_move(double handoff_ns, double extra_ns);
/// "volatile" or "atomic": the operation's key in the JSON.
std::string op_key(Op op);

nlohmann::json to_json(const cachebook::CoherenceStats& s);
nlohmann::json to_json(const StructFacts& s);

}  // namespace ch06
