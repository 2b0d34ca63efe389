#pragma once
/// @file claim.hpp
/// @brief One decision rule for every measured claim of the book: "A takes at least R times as
/// long as B", decided with a control that measures this machine's noise in the same run.
///
/// The two sides run interleaved, A B A B ..., so that drift (another program starting, the
/// clock changing) hits both alike. The effect is min(A) / min(B). The control is each side
/// against itself: its odd runs against its even runs, min against min; the larger of the two
/// sides' differences is the noise of this run. Then:
/// - **holds**: the effect clears the threshold by more than the noise, effect >= R x (1 + noise);
/// - **fails**: the machine was quiet enough to tell (noise <= max_noise) and the effect falls
///   short of the threshold by more than the noise, effect < R / (1 + noise);
/// - **inconclusive**: the control itself was noisy (noise > max_noise), or the effect lies
///   within the noise of the threshold. A test skips on it, with the reason; it never passes.
/// Chapter 7 explains why minima, and why the control.

#include <algorithm>
#include <string>
#include <vector>

#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"

namespace cachebook {

enum class Verdict { holds, fails, inconclusive };

/// "holds", "fails" or "inconclusive".
std::string verdict_name(Verdict v);

/// A claim "slow takes at least `threshold` times as long as fast", as measured.
struct ClaimResult {
    double effect = 0;     ///< min(slow) / min(fast)
    double noise = 0;      ///< the control: the larger relative gap between a side's odd and even minima
    double threshold = 0;  ///< R
    Verdict verdict = Verdict::inconclusive;
    std::string reason;  ///< the verdict in words, with the figures
};

/// The rule's settings: how many runs of each side, and the noise above which no verdict is given.
struct ClaimRule {
    double threshold = 1;    ///< R: slow / fast must be at least this
    int runs = 8;            ///< timed runs of each side (even: the control splits them in two)
    double max_noise = 0.2;  ///< above this control gap a claim cannot fail, only hold or be inconclusive
};

/// The verdict from the runs of each side (seconds, in the order run, interleaved with the
/// other side's). Needs at least two runs a side; throws std::invalid_argument otherwise.
ClaimResult decide(const std::vector<double>& slow_runs, const std::vector<double>& fast_runs, const ClaimRule& rule);

/// Times `slow` and `fast` interleaved (one untimed call of each first), `rule.runs` times each,
/// and decides.
template <class Slow, class Fast>
ClaimResult measure_claim(Slow&& slow, Fast&& fast, const ClaimRule& rule) {
    wait_for_idle_threads(1.0);  // a library's threads, still spinning from a call or from start-up
    slow();
    fast();
    std::vector<double> s, f;
    for (int i = 0; i < rule.runs; ++i) {
        auto start = Clock::now();
        slow();
        s.push_back(seconds_since(start));
        start = Clock::now();
        fast();
        f.push_back(seconds_since(start));
    }
    return decide(s, f, rule);
}

/// Prints a claim beside its measurement, two lines, and records it under claims.NAME
/// (text, threshold, needs_cpus, verdict, effect, noise, reason): "claim: TEXT at least Rx:
/// VERDICT (Ex, margin M %, noise N %)", then "the rule: REASON". A claim this machine could not
/// time (effect 0) shows "-" for its figures and records them as null. `needs_cpus`: the usable
/// cpus a machine needs to show the effect at all (the appendix On other machines reads it).
void report_claim(Report& report, const std::string& name, const std::string& text, const ClaimResult& r,
                  int needs_cpus = 1);

}  // namespace cachebook
