#include "cachebook/claim.hpp"

#include <fmt/format.h>

#include <cmath>

namespace cachebook {

ClaimResult decide(const std::vector<double>& slow_runs, const std::vector<double>& fast_runs, const ClaimRule& rule) {
    return decide_claim(slow_runs, fast_runs, Claim{rule.threshold, Direction::at_least, 1, rule.max_noise});
}

void report_claim(Report& report, const std::string& name, const std::string& text, const ClaimResult& r,
                  int needs_cpus) {
    const std::string key = "claims." + name + ".";
    const bool timed = r.effect > 0;
    // Unprinted, and not exact: a claim's words may name this machine's thread count.
    report.record(key + "text", text);
    report.record(key + "needs_cpus", needs_cpus);
    const bool up = r.direction == Direction::at_least;  // margin: how far past the threshold, in its direction
    report.line(
        "  claim: {} {} {}x: {} ({}x, margin {} %, noise {} %)", text, up ? "at least" : "at most",
        Value::exact(key + "threshold", r.threshold, 2), Value::measured(key + "verdict", verdict_name(r.verdict)),
        timed ? Value::measured(key + "effect", r.effect, 2) : Value::unknown(key + "effect", "-"),
        timed ? Value::measured("", 100 * (up ? r.effect / r.threshold - 1 : r.threshold / r.effect - 1), "{:+.0f}")
              : Value::measured("", std::string("-")),
        timed ? Value::measured_as(key + "noise", std::round(100 * r.noise) / 100, fmt::format("{:.0f}", 100 * r.noise))
              : Value::unknown(key + "noise", "-"));
    report.line("  the rule: {}", Value::measured(key + "reason", r.reason));
}

}  // namespace cachebook
