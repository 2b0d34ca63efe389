#pragma once
/// @file claim.hpp
/// @brief The book's rule for a measured claim "A takes at least R times as long as B", for
/// callers that time their own runs; the rule itself, and the kit that runs a declared
/// experiment, are in experiment.hpp.
///
/// The effect is min(A) / min(B). The control is each side against itself, its odd runs' minimum
/// against its even runs'; the two sides' gaps compound in the noise, (1 + gap A)(1 + gap B) - 1.
/// With fewer than six runs a side there is no verdict. Then:
/// - **holds**: the effect clears the threshold by more than the noise, effect >= R x (1 + noise);
/// - **fails**: the machine was quiet enough to tell (noise <= max_noise) and the effect falls
///   short of the threshold by more than the noise, effect < R / (1 + noise);
/// - **inconclusive**: too few runs, a noisy control (noise > max_noise), or an effect within the
///   noise of the threshold. A test skips on it, with the reason; it never passes.
/// Chapter 7 explains why minima, and why the control.

#include <string>
#include <vector>

#include "cachebook/experiment.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"

namespace cachebook {

/// The rule's settings: how many runs of each side, and the noise above which no verdict is given.
struct ClaimRule {
    double threshold = 1;    ///< R: slow / fast must be at least this
    int runs = 8;            ///< timed runs of each side (at least kMinRunsPerSide for a verdict)
    double max_noise = 0.2;  ///< above this control gap a claim cannot fail, only hold or be inconclusive
};

/// The verdict from the runs of each side (seconds, in the order run): decide_claim with
/// "at least rule.threshold" on one thread.
ClaimResult decide(const std::vector<double>& slow_runs, const std::vector<double>& fast_runs, const ClaimRule& rule);

/// Times `slow` and `fast` in A B B A order (one untimed call of each first), `rule.runs` times
/// each, and decides.
template <class Slow, class Fast>
ClaimResult measure_claim(Slow&& slow, Fast&& fast, const ClaimRule& rule) {
    const auto machine = machine_instruments();  // the kit's clock and its wait for idle threads
    machine.wait_idle();
    const auto [s, f] = time_abba([&] { slow(); }, [&] { fast(); }, rule.runs, 1, machine.now);
    return decide(s, f, rule);
}

/// Prints a claim beside its measurement, two lines, and records it under claims.NAME
/// (text, threshold, needs_cpus, verdict, effect, noise, reason; each figure as printed): "claim: TEXT
/// at least Rx: VERDICT (Ex, margin M %, noise N %)", then "the rule: REASON". A claim this machine
/// could not time (effect 0) shows "-" for its figures and records them as null. `needs_cpus`: the
/// usable cpus a machine needs to show the effect at all (the appendix On other machines reads it).
void report_claim(Report& report, const std::string& name, const std::string& text, const ClaimResult& r,
                  int needs_cpus = 1);

}  // namespace cachebook
