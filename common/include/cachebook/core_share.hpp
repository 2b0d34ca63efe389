#pragma once
/// @file core_share.hpp
/// @brief The share of a core each thread of a raced side got, as the threads themselves saw it,
/// and the kit run on it.
///
/// A side whose call races several pinned threads cannot trust a probe run beside it: two cpus
/// that share one core (two virtual cpus a host put on one core, or a cpu other work holds) let
/// the threads take turns, and two threads that take turns never fight over a line. Each thread
/// therefore notes the CPU time it spent and the wall time from the race's start to its own
/// finish; its CPU clock stops while it waits for its turn, so the share shows it.
///
/// ```
/// cachebook::CoreShares shares;
/// const cachebook::Experiment e{"two_cores_atomic", "packed / padded",
///     [&] { race(packed, &shares); }, [&] { race(padded, &shares); }, sizing, {.threshold = 1.5, .cpus = 2}};
/// const auto outcome = cachebook::run_experiment(e, shares, quick);
/// ```

#include <vector>

#include "cachebook/experiment.hpp"

namespace cachebook {

/// What the threads of the races noted, summed per thread over the races. Noted after a race's
/// threads have joined, by the thread that started them.
class CoreShares {
public:
    /// One race: thread t spent cpu_seconds[t] on a cpu in the wall_seconds[t] from the race's start
    /// to its own finish.
    void note(const std::vector<double>& cpu_seconds, const std::vector<double>& wall_seconds);
    /// Per thread, the share of a core it got over the races noted since the last clear: its CPU
    /// time over its wall time, each summed (so one race in which a thread waited long does not
    /// outweigh all the others), at most 1; empty before the first race.
    [[nodiscard]] std::vector<double> each() const;
    [[nodiscard]] int races() const { return races_; }
    void clear();

private:
    std::vector<double> cpu_, wall_;
    int races_ = 0;
};

/// run_experiment (experiment.hpp) for sides whose calls note their threads' shares in `noted`.
/// The kit looks at the shares before the runs and after them: before, no race has run yet, and
/// instruments.shares probes the machine as for any claim; after, the look reads what the races'
/// own threads noted (every call of both sides), so a run in which one of them got under
/// kOwnCoreShare of a core gives no verdict, with the share each got.
ExperimentResult run_experiment(const Experiment& e, CoreShares& noted, bool quick,
                                Instruments instruments = machine_instruments());

}  // namespace cachebook
