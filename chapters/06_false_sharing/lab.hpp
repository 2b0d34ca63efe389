#pragma once
// Chapter 6's experiment: the layouts as the compiler laid them out, the model's runs, the races
// declared for the kit (cachebook/experiment.hpp) and priced before they run, the hand-off, the
// queue and the lock timed, and the hardware counters.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cachebook/coherence.hpp"
#include "cachebook/core_share.hpp"
#include "cachebook/experiment.hpp"
#include "cachebook/perf_counters.hpp"
#include "cachebook/priced.hpp"
#include "cachebook/profile.hpp"
#include "false_sharing.hpp"

namespace ch06 {

// ---------------------------------------------------------------- layouts and models (lab_layouts.cpp)

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

// ---------------------------------------------------------------- the races (lab_races.cpp)

enum class Op { VolatileIncrement, AtomicFetchAdd };
std::string op_name(Op op);
/// "volatile" or "atomic": the operation's key in the JSON.
std::string op_key(Op op);

/// What the races of one measurement noted: the share of a core each thread got (the kit's core
/// check), and the seconds the races ran from release to last finish, thread start-up and pinning
/// left out: the clock the kit times them by.
struct RaceLog {
    cachebook::CoreShares shares;
    double race_seconds = 0;
    /// The machine's instruments with race_seconds as the clock.
    cachebook::Instruments instruments();
};

/// Creates and pins `threads` threads (thread i on cpus[i % cpus.size()]), releases them
/// together, returns the seconds from release to the last finish, and adds them and each thread's
/// CPU time to `log` when given. body(i) is thread i's work.
double run_released(int threads, const std::vector<int>& cpus, const std::function<void(int)>& body,
                    RaceLog* log = nullptr);

/// One race: `threads` threads, each adding 1 to its own counter `iterations` times; counters
/// sizeof apart (Packed) or one line of this_machine_line() apart (Padded). Throws
/// std::runtime_error if a count comes out wrong.
double race_once(Op op, Spacing spacing, int threads, const std::vector<int>& cpus, std::uint64_t iterations,
                 RaceLog* log = nullptr);

/// Increments per thread in a race of two threads: fewer for the slower atomic add, so that both
/// races last about a millisecond padded.
std::uint64_t race_iterations(Op op);
/// The sweep's race for `threads` threads on `cores` cpus: the same increments per cpu at every
/// thread count (at least 1000 per thread).
std::uint64_t sweep_iterations(Op op, int threads, int cores);
/// The thread counts of the sweep: 2, 4, 8, ... up to `max_threads`, and `max_threads` itself.
std::vector<int> sweep_counts(int max_threads);
/// The cpus of `threads` threads spread round the first `cores` usable cpus.
std::vector<int> spread(int threads, int cores);

/// Packed atomic adds on two cores take at least this many times as long as padded ones.
inline constexpr double kTwoCoreThreshold = 1.5;
/// On one core packed over padded lies in this band, for both kinds of increment.
inline constexpr double kOneCoreBand[2] = {0.7, 1.4};
/// Above this control noise a claim of the chapter cannot fail.
inline constexpr double kClaimMaxNoise = 0.2;

/// Whether a race states a claim: the atomic add on two cpus (two_cores_atomic), and either
/// operation on one cpu (one_core_OP_low); the volatile increment on two cores states none.
bool race_claims(Op op, const std::vector<int>& cpus);
/// Packed (the slow side) against padded, each call one race of `cpus.size()` threads on `cpus`,
/// one race a run, `runs` runs a side (six with --quick), with the race's claim (race_claims).
cachebook::Experiment race_experiment(Op op, const std::vector<int>& cpus, int runs, RaceLog& log);

/// A timed race, packed against padded: the kit's runs, with its verdict where the race claims.
struct RaceResult {
    Op op = Op::AtomicFetchAdd;
    std::vector<int> cpus;  // empty: not run (it needs two cpus)
    std::uint64_t iterations = 0;
    cachebook::ExperimentResult kit;  // kit.result: the verdict, meaningful only when `claimed`
    bool claimed = false;
    std::vector<double> shares;  // the share of a core each thread got over the races (RaceLog)
    /// Nanoseconds per increment per cpu of the fastest run (0 when not run).
    [[nodiscard]] double packed_ns() const;
    [[nodiscard]] double padded_ns() const;
};
/// race_experiment run by the kit (run_experiment with the races' shares), or, where it claims
/// nothing, timed beside: the same sides, A B B A, their threads' shares noted, no verdict.
RaceResult run_race(Op op, const std::vector<int>& cpus, int runs, bool quick);
/// The band's upper bound from a one-core race's runs: padded at least 1 / kOneCoreBand[1] times packed.
cachebook::ClaimResult one_core_upper(const RaceResult& race);
/// `threads` threads spread over `cores` cpus, packed against padded, timed beside (no claim).
RaceResult sweep_race(Op op, int threads, int cores, int runs);

/// Seconds for `round_trips` round trips of one line between a thread on `cpu_a` and one on `cpu_b`.
double handoff_once(int cpu_a, int cpu_b, std::uint64_t round_trips);
/// Nanoseconds per one-way hand-off: the minimum of `runs` runs.
double handoff_ns(int cpu_a, int cpu_b, std::uint64_t round_trips, int runs);
/// The course notes' cost of a write that fetches the line from another core, in cycles.
inline constexpr double kNotesTransferCycles[2] = {40, 200};
/// "below", "inside" or "above" that range.
std::string against_transfer_range(double cycles);
/// The core's clock now, in GHz (cachebook::estimate_clock_ghz), or 0 where it cannot be measured.
double clock_now_ghz(bool quick);
/// ns at `ghz` in cycles; nothing when the clock is unknown (0).
std::optional<double> cycles_at(double ns, double ghz);

/// One producer (on cpus[0]) passes `items` numbers to one consumer (on cpus[1]) through a ring of
/// kQueueRing slots, head and tail laid out by `spacing`. Throws if the consumer's sum is wrong.
double queue_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t items, RaceLog* log = nullptr);
/// Two threads (on cpus[0], cpus[1]) run `sections` critical sections each under one spinlock, each
/// adding 1 to the guarded values `writes` times. Throws if a value comes out wrong.
double lock_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t sections, std::uint64_t writes,
                 RaceLog* log = nullptr);
enum class Case { Queue, Lock };
/// "queue" or "lock": the case's key in the JSON.
std::string case_key(Case c);
/// The case's operations per run: items through the queue, or critical sections per thread (a
/// quarter with `quick`).
std::uint64_t case_operations(Case c, bool quick);
/// The case packed against padded on two cpus, timed beside as the races are (no claim):
/// seconds per run in `kit.slow_runs` (packed) and `kit.fast_runs`, the threads' shares.
cachebook::ExperimentResult time_case(Case c, const std::vector<int>& cpus, bool quick, int runs);

// ---------------------------------------------------------------- the races priced (lab_priced.cpp)

/// The writes a core the coherence model runs to price a race: the race repeats the same turns.
inline constexpr std::uint64_t kPricedWrites = 10000;

/// A race on two cores priced before it runs (cachebook/priced.hpp): each layout's increments run
/// through the coherence model, the cores taking turns in bursts of the increments a core makes
/// while the other's request for the line travels to it (writes_while_requested: one move's time),
/// every transfer priced at the profile's ping-pong, plus the core's own increment, as the
/// profile measured it on a line one core has alone.
struct RacePrice {
    Op op = Op::AtomicFetchAdd;
    std::size_t burst = 0;                                    // the writes of a turn (0: not priced)
    std::optional<cachebook::SharedLineTime> packed, padded;  // nullopt: not priced, and why_not says why
    std::string why_not;
};
/// `op`'s race priced by `sharing`; not priced without two cpus or without the profile's figures.
RacePrice price_race(Op op, const cachebook::SharingProfile& sharing, bool two_cpus);

/// The profile the races are priced with (shared_profile) and each operation's price, volatile then atomic.
struct RacePrices {
    cachebook::Profile profile;
    std::vector<RacePrice> races;
};
RacePrices price_races(bool two_cpus);

/// A race on two cores against its price: ns an increment packed and padded, and packed / padded,
/// keyed two_cores_OP_packed_ns, two_cores_OP_padded_ns and two_cores_OP_packed_over_padded.
std::vector<cachebook::PricedClaim> race_priced(const RacePrice& price, const RaceResult& race);
/// A race of two threads on one cpu, packed / padded (key one_core_OP_packed_over_padded): not
/// priced, for the threads take turns a time slice long and the line never leaves the core.
cachebook::PricedClaim one_core_priced(const RaceResult& race);

// ---------------------------------------------------------------- hardware counters (lab_counters.cpp)

// Counting in this process with perf_event_open, and why a machine has no counters, are common.
using cachebook::count_misses;
using cachebook::CounterReading;
using cachebook::why_no_counters;
/// Atomic adds per thread of the race the counters count (a quarter with --quick).
inline constexpr std::uint64_t kCounterIncrements = 5'000'000;
/// Both events around one packed and one padded race of two threads on `cpus`, `increments`
/// atomic adds each; with fewer than two cpus, both unavailable.
std::pair<CounterReading, CounterReading> count_race_misses(const std::vector<int>& cpus, std::uint64_t increments);

}  // namespace ch06
