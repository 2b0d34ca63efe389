#include "false_sharing.hpp"

#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <stdexcept>
#include <thread>

#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"

namespace ch06 {
namespace {

#ifdef __cpp_lib_hardware_interference_size
constexpr std::size_t kDestructive = std::hardware_destructive_interference_size;
constexpr std::size_t kConstructive = std::hardware_constructive_interference_size;
#else
constexpr std::size_t kDestructive = 64;  // the common line size, where the library does not say
constexpr std::size_t kConstructive = 64;
#endif

// [snippet: portable]
// C++17: the distance that keeps two objects from interfering, from the compiler.
struct CountersPortable {
    alignas(kDestructive) long thread0_count;
    alignas(kDestructive) long thread1_count;
};
// [end: portable]

bool power_of_two(std::size_t n) {
    return n != 0 && (n & (n - 1)) == 0;
}

#define FIELD(type, field) std::pair<std::string, std::size_t>(#field, offsetof(type, field))

template <class T>
StructFacts facts(std::string name, std::vector<std::pair<std::string, std::size_t>> offsets) {
    return StructFacts{std::move(name), sizeof(T), alignof(T), std::move(offsets)};
}

}  // namespace

// ---------------------------------------------------------------- padding sized at run time

PaddingLine padding_line(const cachebook::Machine& machine) {
    if (const auto line = machine.line_bytes(); line && power_of_two(*line))
        return {*line, cachebook::source_name(machine.line_source()), ""};
    const std::string why =
        machine.line_bytes()
            ? fmt::format("the machine reports a line of {} bytes, not a power of two", *machine.line_bytes())
            : machine.why_unknown("the line size");
    return {kDestructive, "default",
            why + "; padding falls back to the compiler's std::hardware_destructive_interference_size"};
}

const PaddingLine& this_machine_line() {
    static const PaddingLine line = padding_line(cachebook::machine());
    return line;
}

LineBuffer::LineBuffer(std::size_t bytes, std::size_t line_bytes) {
    if (!power_of_two(line_bytes))
        throw std::invalid_argument(fmt::format("LineBuffer: a line of {} bytes is not a power of two", line_bytes));
    const std::size_t align = std::max(line_bytes, alignof(std::max_align_t));  // both powers of two
    size_ = std::max<std::size_t>(1, (bytes + align - 1) / align) * align;      // aligned_alloc's rule
    auto* raw = static_cast<std::byte*>(std::aligned_alloc(align, size_));
    if (raw == nullptr) throw std::bad_alloc();
    std::memset(raw, 0, size_);
    bytes_.reset(raw);
}

void LineBuffer::check_room(std::size_t offset, std::size_t size, std::size_t align) const {
    if (offset % align != 0 || offset > size_ || size > size_ - offset)
        throw std::out_of_range(fmt::format("LineBuffer: {} bytes at offset {} do not fit in {} (alignment {})", size,
                                            offset, size_, align));
}

LayoutFacts layout_facts() {
    LayoutFacts layout;
    layout.counters = facts<Counters>("Counters", {FIELD(Counters, thread0_count), FIELD(Counters, thread1_count)});
    layout.counters_char_pad = facts<CountersCharPad>(
        "CountersCharPad", {FIELD(CountersCharPad, thread0_count), FIELD(CountersCharPad, thread1_count)});
    layout.counters_aligned = facts<CountersAligned>(
        "CountersAligned", {FIELD(CountersAligned, thread0_count), FIELD(CountersAligned, thread1_count)});
    layout.counters_portable = facts<CountersPortable>(
        "CountersPortable", {FIELD(CountersPortable, thread0_count), FIELD(CountersPortable, thread1_count)});
    layout.worker_state = facts<WorkerState>(
        "WorkerState",
        {FIELD(WorkerState, worker_id), FIELD(WorkerState, items_processed), FIELD(WorkerState, errors)});
    layout.worker_state_aligned = facts<WorkerStateAligned>(
        "WorkerStateAligned", {FIELD(WorkerStateAligned, worker_id), FIELD(WorkerStateAligned, items_processed),
                               FIELD(WorkerStateAligned, errors)});
    layout.stats = facts<Stats>("Stats", {FIELD(Stats, requests), FIELD(Stats, bytes_sent), FIELD(Stats, errors)});
    layout.stats_aligned = facts<StatsAligned>(
        "StatsAligned", {FIELD(StatsAligned, requests), FIELD(StatsAligned, bytes_sent), FIELD(StatsAligned, errors)});
    layout.worker_states_per_line = static_cast<double>(layout.line_bytes) / static_cast<double>(sizeof(WorkerState));
    layout.destructive = kDestructive;
    layout.constructive = kConstructive;
    for (int i = 0; i < layout.workers; ++i) {
        const auto u = static_cast<std::uint64_t>(i);
        layout.worker_line.push_back((u * sizeof(WorkerState) + offsetof(WorkerState, items_processed)) /
                                     layout.line_bytes);
        layout.worker_line_aligned.push_back(
            (u * sizeof(WorkerStateAligned) + offsetof(WorkerStateAligned, items_processed)) / layout.line_bytes);
    }
    layout.workers_per_line.assign(layout.worker_line.back() + 1, 0);
    for (auto line : layout.worker_line) ++layout.workers_per_line[line];
    return layout;
}

#undef FIELD

// ---------------------------------------------------------------- the MESI model

// [snippet: model_two_counters]
cachebook::CoherenceStats model_two_counters(std::size_t offset_b, std::uint64_t writes_per_core, std::size_t burst,
                                             std::size_t line_bytes) {
    using cachebook::AccessKind;
    // An increment needs the line owned: one write access per ++.
    std::vector<std::vector<cachebook::CoreAccess>> streams(2);
    streams[0].assign(writes_per_core, {0, AccessKind::Write});
    streams[1].assign(writes_per_core, {offset_b, AccessKind::Write});
    cachebook::CoherenceModel model(2, line_bytes);
    model.run(cachebook::interleave(streams, burst));
    return model.total();
}
// [end: model_two_counters]

std::vector<TraceStep> trace_two_counters(std::size_t offset_b, std::size_t steps) {
    cachebook::CoherenceModel model(2);
    std::vector<TraceStep> out;
    for (std::size_t s = 0; s < steps; ++s) {
        const int core = static_cast<int>(s % 2);
        const std::uint64_t address = core == 0 ? 0 : offset_b;
        TraceStep step{core, address, model.access(core, address, cachebook::AccessKind::Write), {}};
        step.states = fmt::format("{} {}", cachebook::mesi_letter(model.state(0, 0)),
                                  cachebook::mesi_letter(model.state(1, offset_b)));
        out.push_back(step);
    }
    return out;
}

cachebook::CoherenceStats model_workers(std::size_t elem_size, std::size_t field_offset, int workers,
                                        std::uint64_t writes_per_worker, std::size_t burst) {
    std::vector<std::vector<cachebook::CoreAccess>> streams(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w)
        streams[static_cast<std::size_t>(w)].assign(
            writes_per_worker,
            {static_cast<std::uint64_t>(w) * elem_size + field_offset, cachebook::AccessKind::Write});
    cachebook::CoherenceModel model(workers);
    model.run(cachebook::interleave(streams, burst));
    return model.total();
}

std::string dashboard_name(Dashboard d) {
    switch (d) {
        case Dashboard::Packed:
            return "Stats[4], total right after";
        case Dashboard::TotalApart:
            return "Stats[4], total on its own line";
        case Dashboard::Padded:
            return "StatsAligned[4], total on its own line";
    }
    return "?";
}

namespace {

template <class D>
MonitorRun run_dashboard(Dashboard layout, std::uint64_t rounds, std::uint64_t pass_every) {
    using cachebook::AccessKind;
    constexpr std::size_t elem = sizeof(D::per_thread[0]);
    constexpr std::size_t requests = offsetof(Stats, requests), bytes = offsetof(Stats, bytes_sent),
                          errors = offsetof(Stats, errors);
    static_assert(offsetof(StatsAligned, requests) == requests && offsetof(StatsAligned, bytes_sent) == bytes &&
                  offsetof(StatsAligned, errors) == errors);
    constexpr std::uint64_t total = offsetof(D, total);
    constexpr int monitor = kHandlers;

    MonitorRun run;
    run.layout = layout;
    run.rounds = rounds;
    run.pass_every = pass_every;
    run.total_offset = total;
    cachebook::CoherenceModel model(kHandlers + 1);
    // [snippet: monitor_stream]
    for (std::uint64_t r = 1; r <= rounds; ++r) {
        for (int h = 0; h < kHandlers; ++h) {  // one request per handler
            const std::uint64_t base = static_cast<std::uint64_t>(h) * elem;
            model.access(h, base + requests, AccessKind::Write);
            model.access(h, base + bytes, AccessKind::Write);
        }
        if (r % pass_every == 0) {  // the monitor's pass: total += every field of every handler
            ++run.passes;
            for (int h = 0; h < kHandlers; ++h) {
                const std::uint64_t base = static_cast<std::uint64_t>(h) * elem;
                for (std::size_t field : {requests, bytes, errors})
                    model.access(monitor, base + field, AccessKind::Read);
                model.access(monitor, total, AccessKind::Write);
            }
        }
    }
    // [end: monitor_stream]
    run.all = model.total();
    run.monitor = model.of_core(monitor);
    for (int h = 0; h < kHandlers; ++h) run.handlers += model.of_core(h);
    return run;
}

}  // namespace

MonitorRun model_stats_monitor(Dashboard layout, std::uint64_t rounds, std::uint64_t pass_every) {
    if (pass_every == 0) throw std::invalid_argument("model_stats_monitor: pass_every must be at least 1");
    switch (layout) {
        case Dashboard::Packed:
            return run_dashboard<DashboardPacked>(layout, rounds, pass_every);
        case Dashboard::TotalApart:
            return run_dashboard<DashboardTotalApart>(layout, rounds, pass_every);
        case Dashboard::Padded:
            return run_dashboard<DashboardPadded>(layout, rounds, pass_every);
    }
    throw std::invalid_argument("model_stats_monitor: unknown layout");
}

// ---------------------------------------------------------------- measurement

std::string op_name(Op op) {
    return op == Op::VolatileIncrement ? "volatile ++" : "atomic fetch_add";
}

namespace {

constexpr int kMaxThreads = 256;

// [snippet: bump]
// One thread's loop: `x = x + 1` on a volatile is one load and one store per
// iteration (C++20 deprecates `++` on volatile; this is the same thing).
void bump(volatile long* counter, std::uint64_t iterations) {
    for (std::uint64_t i = 0; i < iterations; ++i) *counter = *counter + 1;
}
// A read-modify-write that must own the line: a `lock`-prefixed instruction on x86.
void bump(std::atomic<long>* counter, std::uint64_t iterations) {
    for (std::uint64_t i = 0; i < iterations; ++i) counter->fetch_add(1, std::memory_order_relaxed);
}
// [end: bump]

// Creates and pins `threads` threads, releases them together, returns the
// seconds from release to the last finish. body(i) is thread i's work; when
// `cpu_seconds` is given, it receives the CPU time each thread spent in it.
template <class Body>
double run_released(int threads, const std::vector<int>& cpus, Body body, std::vector<double>* cpu_seconds = nullptr) {
    if (threads < 1 || threads > kMaxThreads)
        throw std::invalid_argument(fmt::format("threads must be 1..{}, got {}", kMaxThreads, threads));
    if (cpus.empty()) throw std::invalid_argument("no cpu to run on");
    std::vector<cachebook::Clock::time_point> finish(static_cast<std::size_t>(threads));
    if (cpu_seconds != nullptr) cpu_seconds->assign(static_cast<std::size_t>(threads), 0.0);
    std::vector<char> pinned(static_cast<std::size_t>(threads), 0);
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(threads));
    for (int i = 0; i < threads; ++i) {
        pool.emplace_back([&, i] {
            const auto me = static_cast<std::size_t>(i);
            pinned[me] = cachebook::pin_to_cpu(cpus[me % cpus.size()]) ? 1 : 0;
            ready.fetch_add(1, std::memory_order_acq_rel);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            const double cpu_start = cachebook::thread_cpu_seconds();
            body(i);
            finish[me] = cachebook::Clock::now();
            if (cpu_seconds != nullptr) (*cpu_seconds)[me] = cachebook::thread_cpu_seconds() - cpu_start;
        });
    }
    while (ready.load(std::memory_order_acquire) < threads) std::this_thread::yield();
    const auto start = cachebook::Clock::now();
    go.store(true, std::memory_order_release);
    for (auto& t : pool) t.join();
    if (std::find(pinned.begin(), pinned.end(), 0) != pinned.end())
        throw std::runtime_error("could not pin a thread to its cpu (is the affinity mask restricted?)");
    return std::chrono::duration<double>(*std::max_element(finish.begin(), finish.end()) - start).count();
}

}  // namespace

namespace {

// One race of `threads` threads on counters laid out by `spacing`; checks every count.
template <class Counter>
double race_on(Spacing spacing, int threads, const std::vector<int>& cpus, std::uint64_t iterations) {
    if (threads < 1 || threads > kMaxThreads)
        throw std::invalid_argument(fmt::format("threads must be 1..{}, got {}", kMaxThreads, threads));
    CounterSlots<Counter> counters(static_cast<std::size_t>(threads), spacing, this_machine_line().bytes);
    const double seconds =
        run_released(threads, cpus, [&](int i) { bump(&counters[static_cast<std::size_t>(i)], iterations); });
    for (std::size_t i = 0; i < static_cast<std::size_t>(threads); ++i)
        if (static_cast<long>(counters[i]) != static_cast<long>(iterations))
            throw std::runtime_error("race: a counter came out wrong");
    return seconds;
}

}  // namespace

double race_once(Op op, Spacing spacing, int threads, const std::vector<int>& cpus, std::uint64_t iterations) {
    return op == Op::VolatileIncrement ? race_on<volatile long>(spacing, threads, cpus, iterations)
                                       : race_on<std::atomic<long>>(spacing, threads, cpus, iterations);
}

PairTiming time_pair(Op op, int threads, const std::vector<int>& cpus, std::uint64_t iterations, int runs) {
    PairTiming pair{op, threads, cpus, iterations, {}, {}};
    race_once(op, Spacing::Padded, threads, cpus, iterations / 10 + 1);  // warm-up: pages, code, clocks
    for (int r = 0; r < runs; ++r) {  // alternate, so slow drift of the machine hits both alike
        pair.packed.runs.push_back(race_once(op, Spacing::Packed, threads, cpus, iterations));
        pair.padded.runs.push_back(race_once(op, Spacing::Padded, threads, cpus, iterations));
    }
    return pair;
}

namespace {

// Threads meet here before every chunk. Spinning (with a yield, so that two
// threads on one core can take turns) releases them within a line transfer
// of each other; a futex-based barrier would wake them microseconds apart.
class SpinBarrier {
public:
    explicit SpinBarrier(int parties) : parties_(parties) {}
    void arrive_and_wait() {
        const int gen = generation_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) == parties_ - 1) {
            arrived_.store(0, std::memory_order_relaxed);
            generation_.store(gen + 1, std::memory_order_release);
        } else {
            while (generation_.load(std::memory_order_acquire) == gen) std::this_thread::yield();
        }
    }

private:
    const int parties_;
    alignas(64) std::atomic<int> arrived_{0};
    alignas(64) std::atomic<int> generation_{0};
};

// The packed counters and the padded ones live in two separate buffers.
template <class Counter>
LayoutComparison chunked(Op op, const std::vector<int>& cpus, std::uint64_t ops, int chunks) {
    const std::size_t line = this_machine_line().bytes;
    CounterSlots<Counter> packed_slots(cpus.size(), Spacing::Packed, line);
    CounterSlots<Counter> padded_slots(cpus.size(), Spacing::Padded, line);
    using TimePoint = cachebook::Clock::time_point;
    const int threads = static_cast<int>(cpus.size());
    const auto n_chunks = static_cast<std::size_t>(2 * chunks);
    // Chunk c runs the packed layout or the padded one; the order flips every
    // pair, so neither layout always goes first.
    auto packed_chunk = [](std::size_t c) { return (c % 2 == 0) == ((c / 2) % 2 == 0); };
    std::vector<std::vector<TimePoint>> starts(cpus.size(), std::vector<TimePoint>(n_chunks));
    std::vector<std::vector<TimePoint>> ends(cpus.size(), std::vector<TimePoint>(n_chunks));
    std::vector<std::vector<double>> cpu_spent(cpus.size(), std::vector<double>(n_chunks));
    SpinBarrier barrier(threads);
    run_released(threads, cpus, [&](int i) {
        const auto me = static_cast<std::size_t>(i);
        Counter* packed = &packed_slots[me];
        Counter* padded = &padded_slots[me];
        for (std::size_t c = 0; c < n_chunks; ++c) {
            barrier.arrive_and_wait();
            starts[me][c] = cachebook::Clock::now();
            const double cpu_start = cachebook::thread_cpu_seconds();
            bump(packed_chunk(c) ? packed : padded, ops);
            cpu_spent[me][c] = cachebook::thread_cpu_seconds() - cpu_start;
            ends[me][c] = cachebook::Clock::now();
        }
    });
    const auto per_layout = static_cast<long>(ops) * chunks;
    for (std::size_t t = 0; t < cpus.size(); ++t)
        if (static_cast<long>(packed_slots[t]) != per_layout || static_cast<long>(padded_slots[t]) != per_layout)
            throw std::runtime_error("race: a counter came out wrong");
    std::vector<int> distinct = cpus;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const double ops_per_cpu =
        static_cast<double>(ops) * static_cast<double>(cpus.size()) / static_cast<double>(distinct.size());
    LayoutComparison comparison;
    comparison.packed = ChunkRace{op, Spacing::Packed, cpus, ops, chunks, 0, 0.0};
    comparison.padded = ChunkRace{op, Spacing::Padded, cpus, ops, chunks, 0, 0.0};
    for (std::size_t c = 0; c < n_chunks; ++c) {
        // Each cpu's busy interval, then how long all of them were busy at
        // once; the chunk's time is the busiest cpu's time spent in the race.
        // A cpu with one thread: that thread's wall duration. A cpu shared by
        // several: the sum of their CPU times, since each wall duration also
        // counts the turns the others ran in between.
        TimePoint latest_begin{}, earliest_finish = TimePoint::max(), first = TimePoint::max(), last{};
        double busiest = 0;
        for (int cpu : distinct) {
            TimePoint begin = TimePoint::max(), finish{};
            double wall = 0, cpu_time = 0;
            int sharing = 0;
            for (std::size_t t = 0; t < cpus.size(); ++t) {
                if (cpus[t] != cpu) continue;
                begin = std::min(begin, starts[t][c]);
                finish = std::max(finish, ends[t][c]);
                wall += std::chrono::duration<double>(ends[t][c] - starts[t][c]).count();
                cpu_time += cpu_spent[t][c];
                ++sharing;
            }
            const double work = sharing > 1 ? cpu_time : wall;
            latest_begin = std::max(latest_begin, begin);
            earliest_finish = std::min(earliest_finish, finish);
            first = std::min(first, begin);
            last = std::max(last, finish);
            busiest = std::max(busiest, work);
        }
        const double together = std::chrono::duration<double>(earliest_finish - latest_begin).count();
        const double span = std::chrono::duration<double>(last - first).count();
        if (together < 0.9 * span) continue;
        const double ns = busiest * 1e9 / ops_per_cpu;
        ChunkRace& race = packed_chunk(c) ? comparison.packed : comparison.padded;
        race.min_ns = race.counted == 0 ? ns : std::min(race.min_ns, ns);
        ++race.counted;
    }
    return comparison;
}

void merge(ChunkRace& into, const ChunkRace& more) {
    if (more.counted > 0) into.min_ns = into.counted == 0 ? more.min_ns : std::min(into.min_ns, more.min_ns);
    into.counted += more.counted;
    into.chunks += more.chunks;
}

}  // namespace

LayoutComparison compare_layouts(Op op, const std::vector<int>& cpus, std::uint64_t ops_per_chunk, int chunks,
                                 int rounds) {
    if (cpus.empty() || static_cast<int>(cpus.size()) > kMaxThreads)
        throw std::invalid_argument(fmt::format("compare_layouts: 1..{} threads, got {}", kMaxThreads, cpus.size()));
    if (chunks < 1 || rounds < 1 || ops_per_chunk < 1)
        throw std::invalid_argument("compare_layouts: chunks, rounds and ops must be positive");
    LayoutComparison comparison;
    comparison.packed = ChunkRace{op, Spacing::Packed, cpus, ops_per_chunk, 0, 0, 0.0};
    comparison.padded = ChunkRace{op, Spacing::Padded, cpus, ops_per_chunk, 0, 0, 0.0};
    for (int r = 0; r < rounds; ++r) {
        const LayoutComparison one = op == Op::VolatileIncrement
                                         ? chunked<volatile long>(op, cpus, ops_per_chunk, chunks)
                                         : chunked<std::atomic<long>>(op, cpus, ops_per_chunk, chunks);
        merge(comparison.packed, one.packed);
        merge(comparison.padded, one.padded);
    }
    return comparison;
}

double handoff_once(int cpu_a, int cpu_b, std::uint64_t round_trips) {
    struct alignas(64) Line {
        std::atomic<std::uint64_t> turn{0};
    };
    auto line = std::make_unique<Line>();
    // [snippet: handoff]
    // Thread 0 waits for an even value and writes the next odd one; thread 1
    // the reverse. Every write must reach the other core before it can answer.
    return run_released(2, {cpu_a, cpu_b}, [&](int me) {
        const auto parity = static_cast<std::uint64_t>(me);
        for (std::uint64_t k = parity; k < 2 * round_trips; k += 2) {
            while (line->turn.load(std::memory_order_acquire) != k) {
            }
            line->turn.store(k + 1, std::memory_order_release);
        }
    });
    // [end: handoff]
}

double handoff_ns(int cpu_a, int cpu_b, std::uint64_t round_trips, int runs) {
    handoff_once(cpu_a, cpu_b, round_trips / 10 + 1);
    double best = 0;
    for (int r = 0; r < runs; ++r) {
        const double seconds = handoff_once(cpu_a, cpu_b, round_trips);
        best = r == 0 ? seconds : std::min(best, seconds);
    }
    return best * 1e9 / (2.0 * static_cast<double>(round_trips));
}

// ---------------------------------------------------------------- a queue and a lock

std::size_t second_field_offset(Spacing spacing, std::size_t packed_offset, std::size_t line_bytes) {
    return spacing == Spacing::Packed ? packed_offset : line_bytes;
}

cachebook::CoherenceStats model_queue(Spacing spacing, std::uint64_t items, std::uint64_t ring, std::uint64_t lag,
                                      std::uint64_t refresh, std::size_t line_bytes) {
    using cachebook::AccessKind;
    if (ring == 0 || refresh == 0 || lag >= ring)
        throw std::invalid_argument("model_queue: ring and refresh at least 1, lag below the ring");
    const std::uint64_t head = 0, tail = second_field_offset(spacing, offsetof(QueueIndices, tail), line_bytes);
    const std::uint64_t slots = 4 * line_bytes;  // the ring starts well clear of both indices
    auto slot = [&](std::uint64_t i) { return slots + (i % ring) * sizeof(long); };
    cachebook::CoherenceModel model(2, line_bytes);
    for (std::uint64_t step = 0; step < items + lag; ++step) {
        if (step < items) {  // the producer's item `step`
            if (step % refresh == 0) model.access(0, head, AccessKind::Read);
            model.access(0, slot(step), AccessKind::Write);
            model.access(0, tail, AccessKind::Write);
        }
        if (step >= lag) {  // the consumer's item, `lag` behind
            const std::uint64_t item = step - lag;
            if (item % refresh == 0) model.access(1, tail, AccessKind::Read);
            model.access(1, slot(item), AccessKind::Read);
            model.access(1, head, AccessKind::Write);
        }
    }
    return model.total();
}

cachebook::CoherenceStats model_lock(Spacing spacing, std::uint64_t sections, std::uint64_t writes,
                                     std::size_t line_bytes) {
    using cachebook::AccessKind;
    const std::uint64_t locked = 0, values = second_field_offset(spacing, offsetof(GuardedCounters, value), line_bytes);
    cachebook::CoherenceModel model(2, line_bytes);
    for (std::uint64_t s = 0; s < sections; ++s) {
        const int holder = static_cast<int>(s % 2), waiter = 1 - holder;
        model.access(holder, locked, AccessKind::Write);  // acquire
        for (std::uint64_t j = 0; j < writes; ++j) {
            model.access(waiter, locked, AccessKind::Read);  // the waiter spins on the lock
            model.access(holder, values + (j % 4) * sizeof(long), AccessKind::Write);
        }
        model.access(holder, locked, AccessKind::Write);  // release
    }
    return model.total();
}

PairRun queue_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t items) {
    const std::size_t line = this_machine_line().bytes;
    LineBuffer indices(2 * line, line);
    auto* head = indices.make<std::atomic<std::uint64_t>>(0);
    auto* tail =
        indices.make<std::atomic<std::uint64_t>>(second_field_offset(spacing, offsetof(QueueIndices, tail), line));
    std::vector<long> ring(kQueueRing);
    std::atomic<std::uint64_t> sum{0};
    std::vector<double> cpu_seconds;
    // [snippet: queue_threads]
    auto produce = [&] {
        std::uint64_t head_seen = 0;  // the consumer's index, as last read
        for (std::uint64_t t = 0; t < items; ++t) {
            while (t - head_seen == kQueueRing) head_seen = head->load(std::memory_order_acquire);  // full
            ring[t % kQueueRing] = static_cast<long>(t + 1);
            tail->store(t + 1, std::memory_order_release);
        }
    };
    auto consume = [&] {
        std::uint64_t tail_seen = 0, total = 0;  // the producer's index, as last read
        for (std::uint64_t h = 0; h < items; ++h) {
            while (h == tail_seen) tail_seen = tail->load(std::memory_order_acquire);  // empty
            total += static_cast<std::uint64_t>(ring[h % kQueueRing]);
            head->store(h + 1, std::memory_order_release);
        }
        sum.store(total);
    };
    const double seconds = run_released(
        2, cpus, [&](int me) { me == 0 ? produce() : consume(); }, &cpu_seconds);
    // [end: queue_threads]
    if (sum.load() != items * (items + 1) / 2) throw std::runtime_error("queue: the consumer's sum came out wrong");
    return PairRun{seconds, *std::min_element(cpu_seconds.begin(), cpu_seconds.end()) / seconds};
}

PairRun lock_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t sections, std::uint64_t writes) {
    const std::size_t line = this_machine_line().bytes;
    LineBuffer buffer(2 * line, line);
    std::atomic<bool>* locked = nullptr;
    volatile long* value = nullptr;  // volatile: every write in the section really happens
    if (spacing == Spacing::Packed) {
        auto* guarded = buffer.make<GuardedCounters>(0);
        locked = &guarded->locked;
        value = guarded->value;
    } else {  // the lock on one line, the values one line later
        locked = buffer.make<std::atomic<bool>>(0);
        value = buffer.make<std::array<long, 4>>(line)->data();
    }
    std::vector<double> cpu_seconds;
    // [snippet: lock_threads]
    auto hold_and_write = [&] {  // both threads run this
        for (std::uint64_t s = 0; s < sections; ++s) {
            while (locked->exchange(true, std::memory_order_acquire))
                while (locked->load(std::memory_order_relaxed)) {
                }  // spin on a read until the holder lets go
            for (std::uint64_t j = 0; j < writes; ++j) value[j % 4] = value[j % 4] + 1;
            locked->store(false, std::memory_order_release);
        }
    };
    const double seconds = run_released(
        2, cpus, [&](int) { hold_and_write(); }, &cpu_seconds);
    // [end: lock_threads]
    for (std::uint64_t j = 0; j < 4; ++j)
        if (static_cast<std::uint64_t>(value[j]) != 2 * sections * (writes / 4 + (j < writes % 4 ? 1 : 0)))
            throw std::runtime_error("lock: a guarded value came out wrong");
    return PairRun{seconds, *std::min_element(cpu_seconds.begin(), cpu_seconds.end()) / seconds};
}

std::string case_key(Case c) {
    return c == Case::Queue ? "queue" : "lock";
}

std::uint64_t case_operations(Case c, bool quick) {
    // Short runs, so that some of them fit into one time slice of both threads on a busy machine.
    return (c == Case::Queue ? 50'000u : 10'000u) / (quick ? 4u : 1u);
}

CaseTiming time_case(Case c, const std::vector<int>& cpus, std::uint64_t operations, int runs) {
    auto once = [&](Spacing spacing, std::uint64_t n) {
        return c == Case::Queue ? queue_once(spacing, cpus, n) : lock_once(spacing, cpus, n, kLockWrites);
    };
    CaseTiming timing;
    once(Spacing::Padded, operations / 10 + 1);  // warm-up
    // Alternate, so drift of the machine hits both alike; keep only runs in which
    // both threads ran throughout (a thread switched out leaves the other alone
    // with the line, or spinning), trying up to three times as often as asked.
    for (int attempt = 0; attempt < 3 * runs && timing.counted() < static_cast<std::size_t>(runs); ++attempt) {
        for (auto [spacing, into] :
             {std::pair{Spacing::Packed, &timing.packed}, std::pair{Spacing::Padded, &timing.padded}}) {
            const PairRun run = once(spacing, operations);
            if (run.together()) into->runs.push_back(run.seconds);
        }
        ++timing.attempts;
    }
    return timing;
}

// ---------------------------------------------------------------- hardware counters

std::string why_no_counters(int err, int paranoid) {
    switch (err) {
        case ENOENT:
        case EOPNOTSUPP:
        case ENODEV:
            return fmt::format(
                "this machine exposes no hardware performance counters (perf_event_open: {}); "
                "a virtual machine shows none unless its hypervisor passes them through",
                std::strerror(err));
        case EACCES:
        case EPERM:
            return fmt::format(
                "the kernel does not let this user open hardware counters (perf_event_open: {}, "
                "kernel.perf_event_paranoid = {})",
                std::strerror(err), paranoid);
        case ENOSYS:
            return "this kernel has no perf events (perf_event_open: not implemented)";
        default:
            return fmt::format("perf_event_open failed: {}", std::strerror(err));
    }
}

namespace {

int perf_paranoid() {
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    int level = -99;
    return (in >> level) ? level : -99;
}

// Opens one user-space counter for this process and the threads it starts later; -errno on failure.
int open_counter(std::uint32_t type, std::uint64_t config) {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = type;
    attr.config = config;
    attr.disabled = 1;
    attr.inherit = 1;  // count the race's threads too (their counts arrive when they exit)
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    return fd < 0 ? -errno : static_cast<int>(fd);
}

}  // namespace

CounterReading count_misses(const std::function<void()>& work) {
    CounterReading reading;
    // The events perf names cache-misses and LLC-load-misses.
    const int misses = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES);
    const int llc = open_counter(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                                                         (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
    if (misses < 0 || llc < 0) {
        reading.why_not = why_no_counters(misses < 0 ? -misses : -llc, perf_paranoid());
        for (int fd : {misses, llc})
            if (fd >= 0) close(fd);
        work();  // the work still runs, so a caller's timing or checks see it
        return reading;
    }
    for (int fd : {misses, llc}) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    work();
    for (int fd : {misses, llc}) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    std::uint64_t counts[2] = {0, 0};
    const bool read_both = read(misses, &counts[0], sizeof(std::uint64_t)) == sizeof(std::uint64_t) &&
                           read(llc, &counts[1], sizeof(std::uint64_t)) == sizeof(std::uint64_t);
    close(misses);
    close(llc);
    if (!read_both) {
        reading.why_not = "the counters opened but could not be read";
        return reading;
    }
    reading.available = true;
    reading.cache_misses = counts[0];
    reading.llc_load_misses = counts[1];
    return reading;
}

std::string against_transfer_range(double cycles) {
    if (cycles < kNotesTransferCycles[0]) return "below";
    return cycles <= kNotesTransferCycles[1] ? "inside" : "above";
}

std::optional<double> cycles_at(double ns, double ghz) {
    if (ghz <= 0) return std::nullopt;
    return ns * ghz;
}

std::vector<int> spread(int threads, int cores) {
    std::vector<int> out;
    for (int i = 0; i < threads; ++i) out.push_back(cachebook::nth_usable_cpu(i % cores));
    return out;
}

std::vector<int> sweep_counts(int max_threads) {
    std::vector<int> out;
    for (int n = 2; n <= max_threads; n *= 2) out.push_back(n);
    if (max_threads >= 2 && out.back() != max_threads) out.push_back(max_threads);
    return out;
}

std::uint64_t ops_per_chunk(Op op) {
    return op == Op::VolatileIncrement ? 400'000 : 100'000;
}

std::uint64_t sweep_ops_per_chunk(Op op, int threads, int cores) {
    const std::uint64_t per_cpu = ops_per_chunk(op) * static_cast<std::uint64_t>(cores);
    return std::max<std::uint64_t>(1000, per_cpu / static_cast<std::uint64_t>(threads));
}

std::uint64_t stopwatch_iterations(Op op, bool quick) {
    return (op == Op::VolatileIncrement ? 20'000'000u : 5'000'000u) / (quick ? 4u : 1u);
}

std::optional<double> increments_per_move(double handoff_ns, double extra_ns) {
    if (extra_ns <= 0) return std::nullopt;
    return handoff_ns / extra_ns;
}

std::string op_key(Op op) {
    return op == Op::VolatileIncrement ? "volatile" : "atomic";
}

nlohmann::json to_json(const cachebook::CoherenceStats& stats) {
    return {{"reads", stats.reads},
            {"writes", stats.writes},
            {"hits", stats.hits},
            {"upgrades", stats.upgrades},
            {"memory_fills", stats.memory_fills},
            {"transfers", stats.transfers},
            {"invalidations", stats.invalidations}};
}

nlohmann::json to_json(const StructFacts& facts) {
    nlohmann::json offsets = nlohmann::json::object();
    for (const auto& [name, off] : facts.offsets) offsets[name] = off;
    return {{"name", facts.name}, {"size", facts.size}, {"align", facts.align}, {"offsets", offsets}};
}

}  // namespace ch06
