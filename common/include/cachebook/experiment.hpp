#pragma once
/// @file experiment.hpp
/// @brief A measured claim declared once and run by one kit: its key, its two sides, how each
/// run is sized, and its claim. The kit times the sides the way chapter 7 teaches and decides
/// the claim by the book's rule; the chapter, its test and its JSON read the same declaration.
///
/// ```
/// const cachebook::Experiment packed_padded{
///     "two_cores_atomic", "packed / padded, 2 cores",
///     [&] { count_packed(); }, [&] { count_padded(); },
///     {.budget_seconds = 0.02, .runs = 8},
///     {.threshold = 1.5, .cpus = 2}};
/// const auto outcome = cachebook::run_experiment(packed_padded, quick);
/// cachebook::report_experiment(report, outcome);
/// ```
///
/// The rule, applied to min(slow) / min(fast), the effect:
/// - the sides run A B B A A B B A ..., so each side runs first in half its runs and second in
///   the other half; a side's odd runs against its even runs is then also "run first" against
///   "run second", and a carry-over from one side to the next shows in the control;
/// - the control is each side's odd runs' minimum against its even runs' minimum; the effect is a
///   ratio of two minima and carries both sides' errors, so the noise compounds both gaps,
///   (1 + gap of slow) x (1 + gap of fast) - 1;
/// - no verdict from fewer than kMinRunsPerSide runs a side;
/// - a claim whose threads need cores of their own gets no verdict unless each got one;
/// - holds when the effect clears the threshold by more than the noise, fails when the control
///   was quiet (noise <= max_noise) and the effect falls short by more than the noise, otherwise
///   inconclusive. How often this rule errs is what `make flake-check` counts.

#include <functional>
#include <string>
#include <vector>

#include "cachebook/report.hpp"

namespace cachebook {

enum class Verdict { holds, fails, inconclusive };

/// "holds", "fails" or "inconclusive".
std::string verdict_name(Verdict v);

/// Which way the claim points: min(slow) / min(fast) at least the threshold, or at most.
enum class Direction { at_least, at_most };

/// Fewer runs a side than this give no verdict: each half of the control is then the least of
/// three runs, not one run that may read low by chance.
inline constexpr int kMinRunsPerSide = 6;

/// Below this share of a core, a thread did not have a core of its own (the share cpu_share
/// measures: CPU time over wall time of a busy thread).
inline constexpr double kOwnCoreShare = 0.7;

/// What an experiment claims about min(slow) / min(fast).
struct Claim {
    double threshold = 1;                       ///< R
    Direction direction = Direction::at_least;  ///< at least R, or at most R
    int cpus = 1;                               ///< threads a side runs at once, each needing a core of its own
    double max_noise = 0.2;                     ///< above this control noise a claim cannot fail
    /// Bound by memory bandwidth, which other programs share: the kit looks at the share of a core a
    /// busy thread gets on every usable cpu, and on a busy machine (one below kOwnCoreShare) the
    /// claim cannot fail, as an effect that falls short then proves nothing.
    bool memory_bound = false;
};

/// How each run is sized: a side's call keeps the full size the claim needs, and the kit calls it
/// as many times a run as fill the time budget (the same count for both sides, found from the
/// faster). `quick` is the size tests and `--quick` runs use.
struct Sizing {
    double budget_seconds = 0;  ///< 0: one call a run
    int runs = 8;               ///< timed runs a side
    double quick_budget_seconds = 0;
    int quick_runs = kMinRunsPerSide;
};

/// How many runs a measurement whose one call lasts a good part of a second takes (where a budget
/// per run would still mean one call): `floor` runs whatever the time, the runs a claim needs (or
/// a table's figure); past them, more while `seconds` of the wall clock since the measurement
/// began last, up to `most`. On a busy machine the runs past the floor are the ones left out, so
/// the run time grows with the load only by what the claims need.
struct RunBudget {
    int floor = kMinRunsPerSide;
    int most = kMinRunsPerSide;
    double seconds = 0;
    [[nodiscard]] bool another(int done, double elapsed_seconds) const {
        return done < floor || (done < most && elapsed_seconds < seconds);
    }
};

/// A measured claim, declared: recorded under claims.`key`.
struct Experiment {
    std::string key;
    std::string text;  ///< what is compared, "slow side / fast side"
    std::function<void()> slow, fast;
    Sizing sizing;
    Claim claim;
};

/// What a call of a side needs and the clock must not see, such as fresh pages for a first touch:
/// the kit calls a side's step before every call of that side (the sizing call, the untimed call
/// and each timed call), outside the clock. Empty: nothing to set up.
struct SetUp {
    std::function<void()> slow, fast;
};

/// A claim as decided: the effect, the control's noise, the verdict and why.
struct ClaimResult {
    double effect = 0;     ///< min(slow) / min(fast); 0 when not timed
    double noise = 0;      ///< the control: (1 + gap of slow) x (1 + gap of fast) - 1
    double threshold = 0;  ///< R
    Verdict verdict = Verdict::inconclusive;
    std::string reason;                         ///< the verdict in words, with the figures
    Direction direction = Direction::at_least;  ///< last, so that {effect, noise, threshold, ...} still reads
};

/// The relative gap between the minimum of a side's even runs and of its odd runs (0, 2, 4, ...
/// against 1, 3, 5, ...), over the smaller of the two.
double control_gap(const std::vector<double>& runs);

/// The book's rule on the runs of each side (seconds, in the order run).
ClaimResult decide_claim(const std::vector<double>& slow_runs, const std::vector<double>& fast_runs,
                         const Claim& claim);

/// Why a memory-bound claim cannot fail on this run: a busy thread got under kOwnCoreShare of a core
/// on one of the usable cpus (`shares`), so other programs shared the memory bandwidth; empty when
/// none did.
std::string busy_machine_reason(const std::vector<double>& shares);

/// Why no verdict can be given when a thread had no core of its own (one of `shares`, a share of
/// a core per thread, below kOwnCoreShare); empty when every thread had one.
std::string shared_core_reason(const std::vector<double>& shares);

/// What the kit reads from the machine: a clock, the share of a core each of N busy threads gets,
/// a wait for this process's other threads to go idle, the cpus this process may use. Tests
/// pass fakes.
struct Instruments {
    std::function<double()> now;                             ///< seconds, monotonic
    std::function<std::vector<double>(int threads)> shares;  ///< one share per thread
    std::function<void()> wait_idle;
    std::function<int()> usable_cpus;
};

/// The steady clock, cpu_shares_each, wait_for_idle_threads and usable_cpus.
Instruments machine_instruments();

/// As machine_instruments, with the calling thread's CPU clock (cpu_time.hpp), which stops while a
/// busy machine makes the thread wait: for sides that run on the calling thread alone.
Instruments thread_cpu_instruments();

/// What running an experiment gave.
struct ExperimentResult {
    std::string key, text;  ///< the experiment's, so that it prints after its sides' data is gone
    ClaimResult result;
    std::vector<double> slow_runs, fast_runs;  ///< seconds per call, each side in the order run
    std::vector<double> shares;  ///< the least share of a core each thread got (of each usable cpu's busy thread
                                 ///< for a memory-bound claim); empty: not checked
    long calls_per_run = 1;
    int cpus = 1;  ///< the claim's: the usable cpus a machine needs to show it
};

/// Calls `slow` and `fast` in A B B A order, `runs` times each, `calls` calls a run, after one
/// untimed call of each; returns seconds per call, slow runs first.
std::pair<std::vector<double>, std::vector<double>> time_abba(const std::function<void()>& slow,
                                                              const std::function<void()>& fast, int runs, long calls,
                                                              const std::function<double()>& now);
/// The same with a side's set-up step before each of its calls, the clock stopped around it.
std::pair<std::vector<double>, std::vector<double>> time_abba(const std::function<void()>& slow,
                                                              const std::function<void()>& fast, int runs, long calls,
                                                              const std::function<double()>& now, const SetUp& set_up);

/// Runs the experiment at its full size (or its quick size) and decides its claim.
ExperimentResult run_experiment(const Experiment& e, bool quick,
                                const Instruments& instruments = machine_instruments());
/// The same with each side's set-up step before each of its calls, outside the clock.
ExperimentResult run_experiment(const Experiment& e, const SetUp& set_up, bool quick,
                                const Instruments& instruments = machine_instruments());

/// Prints the claim beside its measurement (report_claim, claim.hpp) and records its figures
/// under claims.`key`: threshold, verdict, effect, noise, reason, and runs (a side), calls per
/// run, each side's minimum in ns per call and the shares, each with the precision it prints with.
void report_experiment(Report& report, const ExperimentResult& outcome);

// --- Sides computed from other sides: a claim on a ratio of ratios ----------------------------

/// What the rule needs of one side of a claim: its figure, the error its control allows, and the
/// runs behind it. A timed side's figure is the least of its runs; a derived side's is computed
/// from other sides' figures and carries their noise, so a verdict on it is as honest as one on
/// two timed sides.
struct SideFigure {
    double value = 0;      ///< seconds (a timed side), or a ratio of minima (a derived one)
    double noise = 0;      ///< relative: a timed side's control gap, compounded for a derived one
    std::size_t runs = 0;  ///< the fewest runs of any timed side behind it
};

/// A timed side: the least of `runs`, with control_gap(runs) as its noise (0 with fewer than two).
SideFigure timed_side(const std::vector<double>& runs);

/// A derived side, over / under: each figure may be off by its noise, and the two errors compound
/// in the ratio, (1 + noise of over) x (1 + noise of under) - 1.
SideFigure ratio_side(const SideFigure& over, const SideFigure& under);

/// The book's rule on two sides' figures: the effect slow / fast, the noise both sides' compounded,
/// no verdict from fewer than kMinRunsPerSide runs. decide_claim is this on two timed sides.
ClaimResult decide_sides(const SideFigure& slow, const SideFigure& fast, const Claim& claim);

/// Calls each side once untimed, then `runs` rounds of all of them, in order on even rounds and
/// in reverse on odd ones (A B C D, D C B A, ...; for two sides A B B A), `calls` calls a run;
/// returns each side's seconds per call, in the order run.
std::vector<std::vector<double>> time_rounds(const std::vector<std::function<void()>>& sides, int runs, long calls,
                                             const std::function<double()>& now);

/// A claim on a ratio of ratios, (min(a) / min(b)) / (min(c) / min(d)): four timed sides, one
/// round of all four a run, a / b and c / d each a derived side. One call a run: each side keeps
/// the size the claim needs itself, as sides of different sizes cannot share a count of calls.
/// One thread, not memory-bound (run_experiment checks those).
struct RatioOfRatios {
    std::string key;
    std::string text;  ///< "a / b over c / d", in words
    std::function<void()> a, b, c, d;
    int runs = 8;
    int quick_runs = kMinRunsPerSide;
    Claim claim;
};

/// What running a ratio of ratios gave.
struct RatioOfRatiosResult {
    std::string key, text;
    ClaimResult result;
    std::vector<double> a_runs, b_runs, c_runs, d_runs;  ///< seconds per call, in the order run
    SideFigure over, under;                              ///< a / b and c / d
};

/// Runs the four sides (`quick_runs` rounds with `quick`) and decides the claim on over / under.
RatioOfRatiosResult run_ratio_of_ratios(const RatioOfRatios& e, bool quick,
                                        const Instruments& instruments = machine_instruments());

/// Prints the claim beside its measurement (report_claim) and records under claims.`key` the runs
/// a side, each side's minimum in ns (a_ns ... d_ns), and the two ratios with their noise.
void report_ratio_of_ratios(Report& report, const RatioOfRatiosResult& outcome);

}  // namespace cachebook
