#include "cachebook/claim.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace cachebook {
namespace {

double min_of(const std::vector<double>& runs, std::size_t parity) {
    double best = 0;
    bool any = false;
    for (std::size_t i = parity; i < runs.size(); i += 2)
        if (!any || runs[i] < best) best = runs[i], any = true;
    return best;
}

// How far apart the odd and even runs' minima of one side are, relative to the smaller.
double control_gap(const std::vector<double>& runs) {
    const double even = min_of(runs, 0), odd = min_of(runs, 1);
    const double lo = std::min(even, odd), hi = std::max(even, odd);
    return lo > 0 ? hi / lo - 1 : 1e9;
}

}  // namespace

std::string verdict_name(Verdict v) {
    switch (v) {
        case Verdict::holds:
            return "holds";
        case Verdict::fails:
            return "fails";
        case Verdict::inconclusive:
            break;
    }
    return "inconclusive";
}

ClaimResult decide(const std::vector<double>& slow_runs, const std::vector<double>& fast_runs, const ClaimRule& rule) {
    if (slow_runs.size() < 2 || fast_runs.size() < 2)
        throw std::invalid_argument("decide: each side needs at least two runs (the control compares two halves)");
    ClaimResult r;
    r.threshold = rule.threshold;
    const double slow = std::min(min_of(slow_runs, 0), min_of(slow_runs, 1));
    const double fast = std::min(min_of(fast_runs, 0), min_of(fast_runs, 1));
    r.effect = fast > 0 ? slow / fast : 0;
    r.noise = std::max(control_gap(slow_runs), control_gap(fast_runs));
    const std::string figures =
        fmt::format("{:.2f}x against at least {:.2f}x, noise {:.0f} %", r.effect, r.threshold, 100 * r.noise);
    // A clear effect holds however noisy the control: it clears R by more than the noise. Only
    // "fails" needs a quiet control, since noise can hide an effect but not make one.
    if (r.effect >= r.threshold * (1 + r.noise)) {
        r.verdict = Verdict::holds;
        r.reason = figures + ": clears the threshold by more than the noise";
    } else if (r.noise > rule.max_noise) {
        r.verdict = Verdict::inconclusive;
        r.reason = fmt::format("{}: the control is noisier than {:.0f} %, the machine is too busy to tell", figures,
                               100 * rule.max_noise);
    } else if (r.effect < r.threshold / (1 + r.noise)) {
        r.verdict = Verdict::fails;
        r.reason = figures + ": short of the threshold by more than the noise";
    } else {
        r.verdict = Verdict::inconclusive;
        r.reason = figures + ": within the noise of the threshold";
    }
    return r;
}

void report_claim(Report& report, const std::string& name, const std::string& text, const ClaimResult& r,
                  int needs_cpus) {
    const std::string key = "claims." + name + ".";
    const bool timed = r.effect > 0;
    // Unprinted, and not exact: a claim's words may name this machine's thread count.
    report.record(key + "text", text);
    report.record(key + "needs_cpus", needs_cpus);
    report.line("  claim: {} at least {}x: {} ({}x, margin {} %, noise {} %)", text,
                Value::exact(key + "threshold", r.threshold, 2),
                Value::measured(key + "verdict", verdict_name(r.verdict)),
                timed ? Value::measured(key + "effect", r.effect, 2) : Value::unknown(key + "effect", "-"),
                timed ? Value::measured("", 100 * (r.effect / r.threshold - 1), "{:+.0f}")
                      : Value::measured("", std::string("-")),
                timed ? Value::measured_as(key + "noise", r.noise, fmt::format("{:.0f}", 100 * r.noise))
                      : Value::unknown(key + "noise", "-"));
    report.line("  the rule: {}", Value::measured(key + "reason", r.reason));
}

}  // namespace cachebook
