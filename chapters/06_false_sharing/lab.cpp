// Chapter 6's experiment: the layouts as laid out, the model's trace, and the timed races.
#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <thread>

#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/spin_barrier.hpp"

namespace ch06 {
namespace {

#define FIELD(type, field) std::pair<std::string, std::size_t>(#field, offsetof(type, field))

template <class T>
StructFacts facts(std::string name, std::vector<std::pair<std::string, std::size_t>> offsets) {
    return StructFacts{std::move(name), sizeof(T), alignof(T), std::move(offsets)};
}

}  // namespace

// ---------------------------------------------------------------- layouts

const PaddingLine& this_machine_line() {
    static const PaddingLine line = padding_line(cachebook::machine());
    return line;
}

LayoutFacts layout_facts() {
    LayoutFacts layout;
    layout.counters = facts<Counters>("Counters", {FIELD(Counters, thread0_count), FIELD(Counters, thread1_count)});
    layout.counters_char_pad = facts<CountersCharPad>(
        "CountersCharPad", {FIELD(CountersCharPad, thread0_count), FIELD(CountersCharPad, thread1_count)});
    layout.counters_aligned = facts<CountersAligned>(
        "CountersAligned", {FIELD(CountersAligned, thread0_count), FIELD(CountersAligned, thread1_count)});
    const PortableLayout portable = portable_layout();
    layout.counters_portable =
        StructFacts{"CountersPortable",
                    portable.size,
                    portable.align,
                    {{"thread0_count", portable.thread0_offset}, {"thread1_count", portable.thread1_offset}}};
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
    layout.destructive = portable.destructive;
    layout.constructive = portable.constructive;
    for (int i = 0; i < layout.workers; ++i) {
        const auto u = static_cast<std::uint64_t>(i);
        layout.worker_line.push_back((u * sizeof(WorkerState) + offsetof(WorkerState, items_processed)) /
                                     layout.line_bytes);
        layout.worker_line_aligned.push_back(
            (u * sizeof(WorkerStateAligned) + offsetof(WorkerStateAligned, items_processed)) / layout.line_bytes);
    }
    layout.workers_per_line.assign(layout.worker_line.back() + 1, 0);
    for (auto line : layout.worker_line) ++layout.workers_per_line[line];
    for (int i = 0; i < layout.workers; ++i) {
        const auto first = static_cast<std::size_t>(i) * sizeof(WorkerState), last = first + sizeof(WorkerState) - 1;
        if (first / layout.line_bytes != last / layout.line_bytes) layout.straddling.push_back(i);
    }
    return layout;
}

#undef FIELD

std::string offsets_text(const StructFacts& facts) {
    std::string out;
    for (const auto& [name, offset] : facts.offsets)
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, offset);
    return out;
}

// ---------------------------------------------------------------- the model's trace and runs

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

std::vector<CaseModel> case_models(const CaseModelSettings& s) {
    std::vector<CaseModel> out;
    for (auto [name, spacing] : {std::pair{"packed", Spacing::Packed}, std::pair{"padded", Spacing::Padded}}) {
        const std::size_t apart = second_field_offset(spacing, offsetof(QueueIndices, tail), 64);
        out.push_back({fmt::format("queue, tail {} B after head", apart),
                       fmt::format("queue_lock.model.queue.{}", name),
                       model_queue(spacing, s.items, s.ring, s.lag, s.refresh)});
    }
    for (auto [name, spacing] : {std::pair{"packed", Spacing::Packed}, std::pair{"padded", Spacing::Padded}}) {
        const std::size_t apart = second_field_offset(spacing, offsetof(GuardedCounters, value), 64);
        out.push_back({fmt::format("lock, data {} B after lock", apart), fmt::format("queue_lock.model.lock.{}", name),
                       model_lock(spacing, s.sections, kLockWrites)});
    }
    return out;
}

// ---------------------------------------------------------------- the races

std::string op_name(Op op) {
    return op == Op::VolatileIncrement ? "volatile ++" : "atomic fetch_add";
}

namespace {

constexpr int kMaxThreads = 256;

}  // namespace

double run_released(int threads, const std::vector<int>& cpus, const std::function<void(int)>& body,
                    std::vector<double>* cpu_seconds) {
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
    // Threads meet before every chunk; a spinning barrier releases them within a line transfer of
    // each other, where a futex-based one would wake them microseconds apart.
    cachebook::SpinBarrier barrier(threads);
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
    comparison.packed = ChunkRace{op, Spacing::Packed, cpus, ops, chunks, 0, 0.0, {}};
    comparison.padded = ChunkRace{op, Spacing::Padded, cpus, ops, chunks, 0, 0.0, {}};
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
        race.counted_ns.push_back(ns);
        ++race.counted;
    }
    return comparison;
}

void merge(ChunkRace& into, const ChunkRace& more) {
    if (more.counted > 0) into.min_ns = into.counted == 0 ? more.min_ns : std::min(into.min_ns, more.min_ns);
    into.counted += more.counted;
    into.counted_ns.insert(into.counted_ns.end(), more.counted_ns.begin(), more.counted_ns.end());
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
    comparison.packed = ChunkRace{op, Spacing::Packed, cpus, ops_per_chunk, 0, 0, 0.0, {}};
    comparison.padded = ChunkRace{op, Spacing::Padded, cpus, ops_per_chunk, 0, 0, 0.0, {}};
    for (int r = 0; r < rounds; ++r) {
        const LayoutComparison one = op == Op::VolatileIncrement
                                         ? chunked<volatile long>(op, cpus, ops_per_chunk, chunks)
                                         : chunked<std::atomic<long>>(op, cpus, ops_per_chunk, chunks);
        merge(comparison.packed, one.packed);
        merge(comparison.padded, one.padded);
    }
    return comparison;
}

nlohmann::json chunk_counts(const LayoutComparison& comparison) {
    return {{"packed_counted", comparison.packed.counted},
            {"padded_counted", comparison.padded.counted},
            {"chunks", comparison.packed.chunks}};
}

std::vector<int> spread(int threads, int cores) {
    std::vector<int> out;
    for (int i = 0; i < threads; ++i) out.push_back(cachebook::nth_usable_cpu(i % cores));
    return out;
}

LayoutComparison sweep_race(Op op, int threads, int cores, int chunks, int rounds) {
    return compare_layouts(op, spread(threads, cores), sweep_ops_per_chunk(op, threads, cores), chunks, rounds);
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
