#pragma once
// Chapter 6: false sharing. Layout facts, the MESI model runs, and the measured races.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cachebook/coherence.hpp"
#include "cachebook/machine.hpp"
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

// ---------------------------------------------------------------- padding sized at run time

/// The line size the run-time padding uses, and where it came from.
struct PaddingLine {
    std::size_t bytes = 0;
    std::string source;       // the machine module's source ("sysfs", "hwloc", ...), or "default"
    std::string why_default;  // empty when the machine reported its line size
};
/// The line size `machine` reports; when it reports none, the compiler's
/// std::hardware_destructive_interference_size for this target, with the reason.
PaddingLine padding_line(const cachebook::Machine& machine);
/// padding_line(cachebook::machine()), detected once: what the measured races pad to.
const PaddingLine& this_machine_line();

/// Zeroed memory that starts on a line boundary of a size known only at run
/// time; objects are placed in it at byte offsets chosen at run time.
class LineBuffer {
public:
    /// `bytes` rounded up to whole lines; `line_bytes` a power of two (else std::invalid_argument).
    LineBuffer(std::size_t bytes, std::size_t line_bytes);
    /// Starts the life of a T{} at `offset` (inside the buffer, aligned for T) and returns it.
    template <class T>
    T* make(std::size_t offset) {
        static_assert(std::is_trivially_destructible_v<T>, "the buffer never runs destructors");
        check_room(offset, sizeof(T), alignof(T));
        return ::new (static_cast<void*>(bytes_.get() + offset)) T{};
    }
    [[nodiscard]] const std::byte* data() const { return bytes_.get(); }

private:
    void check_room(std::size_t offset, std::size_t size, std::size_t align) const;
    struct Free {
        void operator()(std::byte* p) const { std::free(p); }
    };
    std::unique_ptr<std::byte, Free> bytes_;
    std::size_t size_ = 0;
};

enum class Spacing { Packed, Padded };

// [snippet: runtime_padding]
/// One counter per thread, `stride` bytes apart in a line-aligned buffer: packed,
/// the stride is sizeof(Counter); padded, it is the line size read at run time,
/// so each counter starts a line of its own on whatever machine runs this.
template <class Counter>
class CounterSlots {
public:
    CounterSlots(std::size_t count, Spacing spacing, std::size_t line_bytes)
        : stride_(spacing == Spacing::Packed ? sizeof(Counter) : line_bytes), buffer_(count * stride_, line_bytes) {
        for (std::size_t i = 0; i < count; ++i) slots_.push_back(buffer_.make<Counter>(i * stride_));
    }
    Counter& operator[](std::size_t i) { return *slots_.at(i); }
    [[nodiscard]] std::size_t stride() const { return stride_; }

private:
    std::size_t stride_;
    LineBuffer buffer_;
    std::vector<Counter*> slots_;
};
// [end: runtime_padding]

// [snippet: queue_lock]
// A single-producer, single-consumer ring buffer's two indices, side by side:
// the producer writes only `tail`, the consumer only `head`.
struct QueueIndices {
    std::atomic<std::uint64_t> head;  // next slot to read; written by the consumer
    std::atomic<std::uint64_t> tail;  // next slot to write; written by the producer
};

// A spinlock right beside the data it guards.
struct GuardedCounters {
    std::atomic<bool> locked;
    long value[4];  // changed only by the thread that holds `locked`
};
// [end: queue_lock]

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
/// `offset_b`, `writes_per_core` times each, in bursts of `burst` writes, on lines of `line_bytes`.
cachebook::CoherenceStats model_two_counters(std::size_t offset_b, std::uint64_t writes_per_core, std::size_t burst,
                                             std::size_t line_bytes = 64);

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
std::string op_name(Op op);

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

// ---------------------------------------------------------------- a queue and a lock

/// Where the second hot field of a case sits, the first starting a line: at
/// `packed_offset` (where the struct puts it) or one line later (padded).
std::size_t second_field_offset(Spacing spacing, std::size_t packed_offset, std::size_t line_bytes);

/// The model's queue: a producer (core 0) and a consumer (core 1) running at
/// once, the consumer `lag` items behind, taking turns item by item. Per item
/// the producer writes a slot of a ring of `ring` longs and then `tail`; the
/// consumer reads its slot and then writes `head`; every `refresh` items each
/// reads the other's index (its cached copy is used up). `tail` sits at byte
/// 8 (packed) or one line after `head` (padded); the ring lies on lines of its own.
cachebook::CoherenceStats model_queue(Spacing spacing, std::uint64_t items, std::uint64_t ring, std::uint64_t lag,
                                      std::uint64_t refresh, std::size_t line_bytes = 64);

/// The model's lock: `sections` critical sections, held by core 0 and core 1
/// in turn. A section: the holder writes `locked` (acquire), then
/// `writes` times the waiter reads `locked` (it spins) and the holder writes
/// value[j % 4], then the holder writes `locked` (release). The values start
/// at byte 8 (packed) or one line after `locked` (padded).
cachebook::CoherenceStats model_lock(Spacing spacing, std::uint64_t sections, std::uint64_t writes,
                                     std::size_t line_bytes = 64);

/// Seconds for one producer (on cpus[0]) to pass `items` numbers to one
/// consumer (on cpus[1]) through a ring of kQueueRing slots, head and tail
/// laid out by `spacing` (padded: one line of this_machine_line() apart).
/// Throws std::runtime_error if the consumer's sum comes out wrong.
/// One run of two threads: its seconds, and the smaller share of them that
/// either thread spent on a cpu (1: both ran throughout).
struct PairRun {
    double seconds = 0, least_cpu_share = 0;
    [[nodiscard]] bool together() const { return least_cpu_share >= 0.9; }
};
inline constexpr std::uint64_t kQueueRing = 1024;
PairRun queue_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t items);

/// Seconds for two threads (on cpus[0], cpus[1]) to run `sections` critical
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
inline constexpr std::uint64_t kLockWrites = 16;
CaseTiming time_case(Case c, const std::vector<int>& cpus, std::uint64_t operations, int runs);

// ---------------------------------------------------------------- hardware counters

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

/// The course notes' cost of a write that fetches the line from another core, in cycles.
inline constexpr double kNotesTransferCycles[2] = {40, 200};
/// "below", "inside" or "above" that range.
std::string against_transfer_range(double cycles);
/// ns at `ghz` in cycles; nothing when the clock is unknown (0).
std::optional<double> cycles_at(double ns, double ghz);

nlohmann::json to_json(const cachebook::CoherenceStats& s);
nlohmann::json to_json(const StructFacts& s);

}  // namespace ch06
