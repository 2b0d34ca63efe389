#include "false_sharing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
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

#define FIELD(type, field) std::pair<std::string, std::size_t>(#field, offsetof(type, field))

template <class T>
StructFacts facts(std::string name, std::vector<std::pair<std::string, std::size_t>> offsets) {
    return StructFacts{std::move(name), sizeof(T), alignof(T), std::move(offsets)};
}

}  // namespace

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
cachebook::CoherenceStats model_two_counters(std::size_t offset_b, std::uint64_t writes_per_core, std::size_t burst) {
    using cachebook::AccessKind;
    // An increment needs the line owned: one write access per ++.
    std::vector<std::vector<cachebook::CoreAccess>> streams(2);
    streams[0].assign(writes_per_core, {0, AccessKind::Write});
    streams[1].assign(writes_per_core, {offset_b, AccessKind::Write});
    cachebook::CoherenceModel model(2);
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
constexpr std::size_t kLongsPerLine = 64 / sizeof(long);

// Counters live in one line-aligned block; thread i uses slot i (packed) or slot 8i (padded).
struct alignas(64) VolatileBlock {
    volatile long slot[kMaxThreads + kMaxThreads * kLongsPerLine];
};
struct alignas(64) AtomicBlock {
    std::atomic<long> slot[kMaxThreads + kMaxThreads * kLongsPerLine];
};

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
// seconds from release to the last finish. body(i) is thread i's work.
template <class Body>
double run_released(int threads, const std::vector<int>& cpus, Body body) {
    if (threads < 1 || threads > kMaxThreads)
        throw std::invalid_argument(fmt::format("threads must be 1..{}, got {}", kMaxThreads, threads));
    if (cpus.empty()) throw std::invalid_argument("no cpu to run on");
    std::vector<cachebook::Clock::time_point> finish(static_cast<std::size_t>(threads));
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
            body(i);
            finish[me] = cachebook::Clock::now();
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

double race_once(Op op, Spacing spacing, int threads, const std::vector<int>& cpus, std::uint64_t iterations) {
    const std::size_t stride = spacing == Spacing::Packed ? 1 : kLongsPerLine;
    const auto expect = static_cast<long>(iterations);
    double seconds = 0;
    if (op == Op::VolatileIncrement) {
        auto block = std::make_unique<VolatileBlock>();
        for (auto& s : block->slot) s = 0;
        seconds = run_released(threads, cpus,
                               [&](int i) { bump(&block->slot[static_cast<std::size_t>(i) * stride], iterations); });
        for (int i = 0; i < threads; ++i)
            if (block->slot[static_cast<std::size_t>(i) * stride] != expect)
                throw std::runtime_error("race: a counter came out wrong");
    } else {
        auto block = std::make_unique<AtomicBlock>();
        for (auto& s : block->slot) s.store(0, std::memory_order_relaxed);
        seconds = run_released(threads, cpus,
                               [&](int i) { bump(&block->slot[static_cast<std::size_t>(i) * stride], iterations); });
        for (int i = 0; i < threads; ++i)
            if (block->slot[static_cast<std::size_t>(i) * stride].load() != expect)
                throw std::runtime_error("race: a counter came out wrong");
    }
    return seconds;
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

// The packed counters start the block; the padded ones start kPaddedFrom longs
// in, far from them, one line each.
constexpr std::size_t kPaddedFrom = kMaxThreads;

template <class Counter>
LayoutComparison chunked(Op op, const std::vector<int>& cpus, std::uint64_t ops, int chunks, Counter* slots) {
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
        Counter* packed = &slots[me];
        Counter* padded = &slots[kPaddedFrom + me * kLongsPerLine];
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
        if (static_cast<long>(slots[t]) != per_layout ||
            static_cast<long>(slots[kPaddedFrom + t * kLongsPerLine]) != per_layout)
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
        LayoutComparison one;
        if (op == Op::VolatileIncrement) {
            auto block = std::make_unique<VolatileBlock>();
            for (auto& s : block->slot) s = 0;
            one = chunked(op, cpus, ops_per_chunk, chunks, block->slot);
        } else {
            auto block = std::make_unique<AtomicBlock>();
            for (auto& s : block->slot) s.store(0, std::memory_order_relaxed);
            one = chunked(op, cpus, ops_per_chunk, chunks, block->slot);
        }
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
