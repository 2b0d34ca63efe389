// Chapter 6's races of pinned threads, declared for the kit: each side's call is one race, its
// threads note the share of a core they got, and the kit times the sides and decides the claims.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>

#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch06 {

using cachebook::Clock;
using cachebook::Experiment;
using cachebook::ExperimentResult;

namespace {

constexpr int kMaxThreads = 256;

std::size_t distinct_cpus(std::vector<int> cpus) {
    std::sort(cpus.begin(), cpus.end());
    return static_cast<std::size_t>(std::unique(cpus.begin(), cpus.end()) - cpus.begin());
}

// One race of `threads` threads on counters laid out by `spacing`; checks every count.
template <class Counter>
double race_on(Spacing spacing, int threads, const std::vector<int>& cpus, std::uint64_t iterations, RaceLog* log) {
    if (threads < 1 || threads > kMaxThreads)
        throw std::invalid_argument(fmt::format("threads must be 1..{}, got {}", kMaxThreads, threads));
    CounterSlots<Counter> counters(static_cast<std::size_t>(threads), spacing, this_machine_line().bytes);
    const double seconds = run_released(
        threads, cpus, [&](int i) { bump(&counters[static_cast<std::size_t>(i)], iterations); }, log);
    for (std::size_t i = 0; i < static_cast<std::size_t>(threads); ++i)
        if (static_cast<long>(counters[i]) != static_cast<long>(iterations))
            throw std::runtime_error("race: a counter came out wrong");
    return seconds;
}

// Packed against padded: `slow` and `fast` each one call of `race`, one call a run.
Experiment packed_padded(const std::function<void(Spacing)>& race, int runs) {
    Experiment e;
    e.slow = [race] { race(Spacing::Packed); };
    e.fast = [race] { race(Spacing::Padded); };
    e.sizing = {.runs = runs, .quick_runs = cachebook::kMinRunsPerSide};
    return e;
}

// The sides of `e` timed as the kit times them, A B B A, by the races' clock, with no verdict:
// for races that state no claim.
ExperimentResult timed_beside(const Experiment& e, RaceLog& log, bool quick) {
    ExperimentResult o;
    o.key = e.key;
    o.text = e.text;
    std::tie(o.slow_runs, o.fast_runs) =
        cachebook::time_abba(e.slow, e.fast, quick ? e.sizing.quick_runs : e.sizing.runs, 1, log.instruments().now);
    o.shares = log.shares.each();
    o.result.reason = "no claim";
    return o;
}

double ns_per_increment(const std::vector<double>& runs, const RaceResult& race) {
    if (runs.empty()) return 0;
    const double per_cpu = static_cast<double>(race.iterations) * static_cast<double>(race.cpus.size()) /
                           static_cast<double>(distinct_cpus(race.cpus));
    return *std::min_element(runs.begin(), runs.end()) * 1e9 / per_cpu;
}

}  // namespace

std::string op_name(Op op) {
    return op == Op::VolatileIncrement ? "volatile ++" : "atomic fetch_add";
}

std::string op_key(Op op) {
    return op == Op::VolatileIncrement ? "volatile" : "atomic";
}

cachebook::Instruments RaceLog::instruments() {
    auto i = cachebook::machine_instruments();
    i.now = [this] { return race_seconds; };
    return i;
}

double run_released(int threads, const std::vector<int>& cpus, const std::function<void(int)>& body, RaceLog* log) {
    if (threads < 1 || threads > kMaxThreads)
        throw std::invalid_argument(fmt::format("threads must be 1..{}, got {}", kMaxThreads, threads));
    if (cpus.empty()) throw std::invalid_argument("no cpu to run on");
    const auto n = static_cast<std::size_t>(threads);
    std::vector<double> cpu_seconds(n), wall_seconds(n);
    std::vector<char> pinned(n, 0);
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    Clock::time_point start;
    std::vector<std::thread> pool;
    for (std::size_t me = 0; me < n; ++me) {
        pool.emplace_back([&, me] {
            pinned[me] = cachebook::pin_to_cpu(cpus[me % cpus.size()]) ? 1 : 0;
            ready.fetch_add(1, std::memory_order_acq_rel);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            // The thread's CPU clock stops while it waits for its turn on a cpu: over the wall time
            // from the release, it says how much of a core the thread got.
            const double cpu_start = cachebook::thread_cpu_seconds();
            body(static_cast<int>(me));
            cpu_seconds[me] = cachebook::thread_cpu_seconds() - cpu_start;
            wall_seconds[me] = cachebook::seconds_since(start);
        });
    }
    while (ready.load(std::memory_order_acquire) < threads) std::this_thread::yield();
    start = Clock::now();
    go.store(true, std::memory_order_release);
    for (auto& t : pool) t.join();
    if (std::find(pinned.begin(), pinned.end(), 0) != pinned.end())
        throw std::runtime_error("could not pin a thread to its cpu (is the affinity mask restricted?)");
    const double seconds = *std::max_element(wall_seconds.begin(), wall_seconds.end());
    if (log != nullptr) {
        log->race_seconds += seconds;
        log->shares.note(cpu_seconds, wall_seconds);
    }
    return seconds;
}

double race_once(Op op, Spacing spacing, int threads, const std::vector<int>& cpus, std::uint64_t iterations,
                 RaceLog* log) {
    return op == Op::VolatileIncrement ? race_on<volatile long>(spacing, threads, cpus, iterations, log)
                                       : race_on<std::atomic<long>>(spacing, threads, cpus, iterations, log);
}

std::uint64_t race_iterations(Op op) {
    return op == Op::VolatileIncrement ? 2'000'000 : 200'000;
}

std::uint64_t sweep_iterations(Op op, int threads, int cores) {
    const std::uint64_t per_cpu = race_iterations(op) * static_cast<std::uint64_t>(cores);
    return std::max<std::uint64_t>(1000, per_cpu / static_cast<std::uint64_t>(threads));
}

std::vector<int> sweep_counts(int max_threads) {
    std::vector<int> out;
    for (int n = 2; n <= max_threads; n *= 2) out.push_back(n);
    if (max_threads >= 2 && out.back() != max_threads) out.push_back(max_threads);
    return out;
}

std::vector<int> spread(int threads, int cores) {
    std::vector<int> out;
    for (int i = 0; i < threads; ++i) out.push_back(cachebook::nth_usable_cpu(i % cores));
    return out;
}

bool race_claims(Op op, const std::vector<int>& cpus) {
    return op == Op::AtomicFetchAdd || distinct_cpus(cpus) == 1;
}

Experiment race_experiment(Op op, const std::vector<int>& cpus, int runs, RaceLog& log) {
    const int threads = static_cast<int>(cpus.size());
    auto e = packed_padded([=, &log](Spacing s) { race_once(op, s, threads, cpus, race_iterations(op), &log); }, runs);
    const bool one_core = distinct_cpus(cpus) == 1;
    e.key = (one_core ? "one_core_" : "two_cores_") + op_key(op) + (one_core ? "_low" : "");
    e.text = fmt::format("{}, {}, packed / padded", op_name(op), one_core ? "1 core" : "2 cores");
    if (race_claims(op, cpus))
        e.claim = one_core ? cachebook::Claim{.threshold = kOneCoreBand[0], .max_noise = kClaimMaxNoise}
                           : cachebook::Claim{.threshold = kTwoCoreThreshold, .cpus = 2, .max_noise = kClaimMaxNoise};
    return e;
}

double RaceResult::packed_ns() const {
    return ns_per_increment(kit.slow_runs, *this);
}

double RaceResult::padded_ns() const {
    return ns_per_increment(kit.fast_runs, *this);
}

RaceResult run_race(Op op, const std::vector<int>& cpus, int runs, bool quick) {
    RaceResult r{op, cpus, race_iterations(op), {}, race_claims(op, cpus), {}};
    RaceLog log;
    const auto e = race_experiment(op, cpus, runs, log);
    // A claim is left to the kit, which gives no verdict where the process has too few cpus.
    if (r.claimed)
        r.kit = cachebook::run_experiment(e, log.shares, quick, log.instruments());
    else if (!cpus.empty())
        r.kit = timed_beside(e, log, quick);
    r.shares = log.shares.each();
    return r;
}

cachebook::ClaimResult one_core_upper(const RaceResult& race) {
    return cachebook::decide_claim(race.kit.fast_runs, race.kit.slow_runs,
                                   {.threshold = 1 / kOneCoreBand[1], .max_noise = kClaimMaxNoise});
}

RaceResult sweep_race(Op op, int threads, int cores, int runs) {
    RaceResult r{op, spread(threads, cores), sweep_iterations(op, threads, cores), {}, false, {}};
    RaceLog log;
    const auto e = packed_padded([&](Spacing s) { race_once(op, s, threads, r.cpus, r.iterations, &log); }, runs);
    r.kit = timed_beside(e, log, false);
    r.shares = log.shares.each();
    return r;
}

// ---------------------------------------------------------------- the hand-off

double handoff_once(int cpu_a, int cpu_b, std::uint64_t round_trips) {
    struct alignas(64) Line {
        std::atomic<std::uint64_t> turn{0};
    };
    auto line = std::make_unique<Line>();
    return run_released(2, {cpu_a, cpu_b}, [&](int me) { hand_off(line->turn, me, round_trips); });
}

double handoff_ns(int cpu_a, int cpu_b, std::uint64_t round_trips, int runs) {
    const auto t = cachebook::time_runs(runs, [&] { handoff_once(cpu_a, cpu_b, round_trips); });
    return t.min() * 1e9 / (2.0 * static_cast<double>(round_trips));
}

std::string against_transfer_range(double cycles) {
    if (cycles < kNotesTransferCycles[0]) return "below";
    return cycles <= kNotesTransferCycles[1] ? "inside" : "above";
}

double clock_now_ghz(bool quick) {
    return cachebook::estimate_clock_ghz(quick ? 0.005 : 0.02).value_or(0.0);
}

std::optional<double> cycles_at(double ns, double ghz) {
    if (ghz <= 0) return std::nullopt;
    return ns * ghz;
}

// ---------------------------------------------------------------- a queue and a lock

double queue_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t items, RaceLog* log) {
    const std::size_t line = this_machine_line().bytes;
    LineBuffer indices(2 * line, line);
    auto* head = indices.make<std::atomic<std::uint64_t>>(0);
    auto* tail =
        indices.make<std::atomic<std::uint64_t>>(second_field_offset(spacing, offsetof(QueueIndices, tail), line));
    std::vector<long> ring(kQueueRing);
    std::atomic<std::uint64_t> sum{0};
    const QueueEnds queue{*head, *tail, ring, items};
    const double seconds = run_released(
        2, cpus, [&](int me) { me == 0 ? produce(queue) : sum.store(consume(queue)); }, log);
    if (sum.load() != items * (items + 1) / 2) throw std::runtime_error("queue: the consumer's sum came out wrong");
    return seconds;
}

double lock_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t sections, std::uint64_t writes,
                 RaceLog* log) {
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
    const double seconds = run_released(
        2, cpus, [&](int) { hold_and_write(*locked, value, sections, writes); }, log);
    for (std::uint64_t j = 0; j < 4; ++j)
        if (static_cast<std::uint64_t>(value[j]) != 2 * sections * (writes / 4 + (j < writes % 4 ? 1 : 0)))
            throw std::runtime_error("lock: a guarded value came out wrong");
    return seconds;
}

std::string case_key(Case c) {
    return c == Case::Queue ? "queue" : "lock";
}

std::uint64_t case_operations(Case c, bool quick) {
    // Short runs, so that some of them fit into one time slice of both threads on a busy machine.
    return (c == Case::Queue ? 50'000u : 10'000u) / (quick ? 4u : 1u);
}

ExperimentResult time_case(Case c, const std::vector<int>& cpus, bool quick, int runs) {
    const std::uint64_t ops = case_operations(c, quick);
    RaceLog log;
    const auto e = packed_padded(
        [&](Spacing s) {
            c == Case::Queue ? queue_once(s, cpus, ops, &log) : lock_once(s, cpus, ops, kLockWrites, &log);
        },
        runs);
    return timed_beside(e, log, false);
}

}  // namespace ch06
