#include "cachebook/experiment.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cachebook/claim.hpp"
#include "cachebook/core_share.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"

namespace cachebook {
namespace {

double min_of(const std::vector<double>& runs, std::size_t parity) {
    double best = 0;
    bool any = false;
    for (std::size_t i = parity; i < runs.size(); i += 2)
        if (!any || runs[i] < best) best = runs[i], any = true;
    return best;
}

double least(const std::vector<double>& runs) {
    return runs.empty() ? 0 : *std::min_element(runs.begin(), runs.end());
}

std::string figures(const ClaimResult& r, const Claim& claim) {
    return fmt::format("{:.2f}x against {} {:.2f}x, noise {:.0f} %", r.effect,
                       claim.direction == Direction::at_least ? "at least" : "at most", r.threshold, 100 * r.noise);
}

ClaimResult no_verdict(ClaimResult r, std::string reason) {
    r.verdict = Verdict::inconclusive;
    r.reason = std::move(reason);
    return r;
}

// The rule proper, on an effect that points upwards: `effect` at least `threshold`.
Verdict verdict_of(double effect, double threshold, double noise, double max_noise) {
    // A clear effect holds however noisy the control: noise can hide an effect but not make one.
    if (effect >= threshold * (1 + noise)) return Verdict::holds;
    if (noise <= max_noise && effect < threshold / (1 + noise)) return Verdict::fails;
    return Verdict::inconclusive;
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

double control_gap(const std::vector<double>& runs) {
    const double even = min_of(runs, 0), odd = min_of(runs, 1);
    const double lo = std::min(even, odd), hi = std::max(even, odd);
    return lo > 0 ? hi / lo - 1 : 1e9;
}

ClaimResult decide_claim(const std::vector<double>& slow_runs, const std::vector<double>& fast_runs,
                         const Claim& claim) {
    return decide_sides(timed_side(slow_runs), timed_side(fast_runs), claim);
}

SideFigure timed_side(const std::vector<double>& runs) {
    return {least(runs), runs.size() >= 2 ? control_gap(runs) : 0.0, runs.size()};
}

SideFigure ratio_side(const SideFigure& over, const SideFigure& under) {
    return {under.value > 0 ? over.value / under.value : 0.0, (1 + over.noise) * (1 + under.noise) - 1,
            std::min(over.runs, under.runs)};
}

ClaimResult decide_sides(const SideFigure& slow, const SideFigure& fast, const Claim& claim) {
    ClaimResult r;
    r.threshold = claim.threshold;
    r.direction = claim.direction;
    if (slow.value <= 0 || fast.value <= 0)
        return no_verdict(r, "a side has no run longer than zero: nothing to compare");
    r.effect = slow.value / fast.value;
    // The effect divides one figure by another: each may be off by its side's noise, and the two
    // errors compound in the ratio, so the noise is their product, not the larger of the two.
    r.noise = (1 + slow.noise) * (1 + fast.noise) - 1;
    const auto runs = std::min(slow.runs, fast.runs);
    if (runs < static_cast<std::size_t>(kMinRunsPerSide))
        return no_verdict(r, fmt::format("{}: {} runs a side, fewer than {}, give no verdict", figures(r, claim), runs,
                                         kMinRunsPerSide));
    // "At most R" is "fast / slow at least 1 / R": the same rule on the inverted ratio.
    const bool up = claim.direction == Direction::at_least;
    r.verdict =
        verdict_of(up ? r.effect : 1 / r.effect, up ? claim.threshold : 1 / claim.threshold, r.noise, claim.max_noise);
    if (r.verdict == Verdict::holds)
        r.reason = figures(r, claim) + ": clears the threshold by more than the noise";
    else if (r.verdict == Verdict::fails)
        r.reason = figures(r, claim) + (up ? ": short of" : ": past") + " the threshold by more than the noise";
    else if (r.noise > claim.max_noise)
        r.reason = fmt::format("{}: the control is noisier than {:.0f} %, the machine is too busy to tell",
                               figures(r, claim), 100 * claim.max_noise);
    else
        r.reason = figures(r, claim) + ": within the noise of the threshold";
    return r;
}

std::string shared_core_reason(const std::vector<double>& shares) {
    if (shares.empty() || least(shares) >= kOwnCoreShare) return {};
    std::string each;
    for (double s : shares) each += fmt::format("{}{:.2f}", each.empty() ? "" : ", ", s);
    return fmt::format("the threads got {} of a core, one below {:.2f}: they did not each have a core of their own",
                       each, kOwnCoreShare);
}

std::string busy_machine_reason(const std::vector<double>& shares) {
    if (shares.empty() || least(shares) >= kOwnCoreShare) return {};
    return fmt::format(
        "the machine is busy (a busy thread got {:.2f} of a core), so others shared the memory bandwidth",
        least(shares));
}

Instruments thread_cpu_instruments() {
    auto i = machine_instruments();
    i.now = thread_cpu_seconds;
    return i;
}

Instruments machine_instruments() {
    Instruments i;
    i.now = [] { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); };
    i.shares = [](int threads) { return cpu_shares_each(threads); };
    i.wait_idle = [] { wait_for_idle_threads(1.0); };  // a library's threads, still spinning from a call
    i.usable_cpus = [] { return usable_cpus(); };
    return i;
}

std::pair<std::vector<double>, std::vector<double>> time_abba(const std::function<void()>& slow,
                                                              const std::function<void()>& fast, int runs, long calls,
                                                              const std::function<double()>& now) {
    return time_abba(slow, fast, runs, calls, now, {});
}

namespace {

// Seconds of `calls` calls of `side`. With a set-up step, the clock stops around each step, so the
// run is the sum of its calls; without one, one reading spans them all.
double timed_calls(const std::function<void()>& side, const std::function<void()>& set_up, long calls,
                   const std::function<double()>& now) {
    if (!set_up) {
        const double start = now();
        for (long c = 0; c < calls; ++c) side();
        return now() - start;
    }
    double seconds = 0;
    for (long c = 0; c < calls; ++c) {
        set_up();
        const double start = now();
        side();
        seconds += now() - start;
    }
    return seconds;
}

}  // namespace

std::pair<std::vector<double>, std::vector<double>> time_abba(const std::function<void()>& slow,
                                                              const std::function<void()>& fast, int runs, long calls,
                                                              const std::function<double()>& now, const SetUp& set_up) {
    timed_calls(slow, set_up.slow, 1, now);  // the untimed call of each
    timed_calls(fast, set_up.fast, 1, now);
    std::vector<double> slow_runs, fast_runs;
    const auto timed = [&](const std::function<void()>& side, const std::function<void()>& step,
                           std::vector<double>& into) {
        into.push_back(timed_calls(side, step, calls, now) / static_cast<double>(calls));
    };
    for (int i = 0; i < runs; ++i) {
        if (i % 2 == 0) {
            timed(slow, set_up.slow, slow_runs);
            timed(fast, set_up.fast, fast_runs);
        } else {
            timed(fast, set_up.fast, fast_runs);
            timed(slow, set_up.slow, slow_runs);
        }
    }
    return {slow_runs, fast_runs};
}

namespace {

// Calls a run needs for its faster side to last `budget` seconds (one call of each side timed).
long calls_for(double budget, const Experiment& e, const SetUp& set_up, const std::function<double()>& now) {
    if (budget <= 0) return 1;
    const double slow = timed_calls(e.slow, set_up.slow, 1, now);
    const double fast = timed_calls(e.fast, set_up.fast, 1, now);
    const double one = std::min(slow, fast);
    if (one <= 0) return 1;
    return static_cast<long>(std::clamp(std::ceil(budget / one), 1.0, 1e9));
}

// The least share of a core each thread got, of two looks.
std::vector<double> least_each(std::vector<double> a, const std::vector<double>& b) {
    for (std::size_t t = 0; t < a.size() && t < b.size(); ++t) a[t] = std::min(a[t], b[t]);
    return a;
}

}  // namespace

ExperimentResult run_experiment(const Experiment& e, bool quick, const Instruments& instruments) {
    return run_experiment(e, SetUp{}, quick, instruments);
}

ExperimentResult run_experiment(const Experiment& e, const SetUp& set_up, bool quick, const Instruments& instruments) {
    ExperimentResult o;
    o.key = e.key;
    o.text = e.text;
    o.cpus = e.claim.cpus;
    o.result.threshold = e.claim.threshold;
    o.result.direction = e.claim.direction;
    const int cpus = e.claim.cpus;
    if (cpus > 1 && instruments.usable_cpus() < cpus) {
        o.result.reason = fmt::format("this process may use {} cpu(s); the claim needs {}, one a thread",
                                      instruments.usable_cpus(), cpus);
        return o;
    }
    instruments.wait_idle();
    // Only threads meant to run side by side are checked: one thread slowed by other work shows it
    // in the control, but two threads that share one core lose the very effect being measured.
    // A memory-bound claim looks at every usable cpu: other programs there share the bandwidth.
    const int watched = cpus > 1 ? cpus : e.claim.memory_bound ? instruments.usable_cpus() : 0;
    const auto before = watched > 0 ? instruments.shares(watched) : std::vector<double>{};
    o.calls_per_run =
        calls_for(quick ? e.sizing.quick_budget_seconds : e.sizing.budget_seconds, e, set_up, instruments.now);
    std::tie(o.slow_runs, o.fast_runs) = time_abba(e.slow, e.fast, quick ? e.sizing.quick_runs : e.sizing.runs,
                                                   o.calls_per_run, instruments.now, set_up);
    if (watched > 0) o.shares = least_each(before, instruments.shares(watched));
    o.result = decide_claim(o.slow_runs, o.fast_runs, e.claim);
    const auto why = cpus > 1                             ? shared_core_reason(o.shares)
                     : o.result.verdict == Verdict::fails ? busy_machine_reason(o.shares)
                                                          : std::string{};
    if (!why.empty()) o.result = no_verdict(o.result, figures(o.result, e.claim) + ": " + why);
    return o;
}

void report_experiment(Report& report, const ExperimentResult& outcome) {
    report_claim(report, outcome.key, outcome.text, outcome.result, outcome.cpus);
    const std::string key = "claims." + outcome.key + ".";
    const bool timed = outcome.result.effect > 0;
    report.record(Value::exact(key + "runs", static_cast<int>(outcome.slow_runs.size())));
    report.record(Value::measured(key + "calls_per_run", outcome.calls_per_run));
    for (const auto& [side, runs] : {std::pair{"slow_ns", &outcome.slow_runs}, {"fast_ns", &outcome.fast_runs}})
        report.record(timed ? Value::measured(key + side, 1e9 * least(*runs), 1) : Value::unknown(key + side, "-"));
    nlohmann::json shares = nlohmann::json::array();
    for (double s : outcome.shares) shares.push_back(std::round(100 * s) / 100);
    report.record(key + "shares", shares);
}

// --- A claim on a ratio of ratios -------------------------------------------------------------

std::vector<std::vector<double>> time_rounds(const std::vector<std::function<void()>>& sides, int runs, long calls,
                                             const std::function<double()>& now) {
    for (const auto& side : sides) side();
    std::vector<std::vector<double>> seconds(sides.size());
    const auto timed = [&](std::size_t k) {
        const double start = now();
        for (long c = 0; c < calls; ++c) sides[k]();
        seconds[k].push_back((now() - start) / static_cast<double>(calls));
    };
    for (int i = 0; i < runs; ++i)  // in order, then in reverse: each side's halves mirror each other
        for (std::size_t k = 0; k < sides.size(); ++k) timed(i % 2 == 0 ? k : sides.size() - 1 - k);
    return seconds;
}

RatioOfRatiosResult run_ratio_of_ratios(const RatioOfRatios& e, bool quick, const Instruments& instruments) {
    if (e.claim.cpus != 1 || e.claim.memory_bound)
        throw std::invalid_argument("a ratio of ratios is timed on one thread, not memory-bound: " + e.key);
    RatioOfRatiosResult o;
    o.key = e.key;
    o.text = e.text;
    instruments.wait_idle();
    auto runs = time_rounds({e.a, e.b, e.c, e.d}, quick ? e.quick_runs : e.runs, 1, instruments.now);
    o.a_runs = std::move(runs[0]), o.b_runs = std::move(runs[1]);
    o.c_runs = std::move(runs[2]), o.d_runs = std::move(runs[3]);
    o.over = ratio_side(timed_side(o.a_runs), timed_side(o.b_runs));
    o.under = ratio_side(timed_side(o.c_runs), timed_side(o.d_runs));
    o.result = decide_sides(o.over, o.under, e.claim);
    return o;
}

void report_ratio_of_ratios(Report& report, const RatioOfRatiosResult& outcome) {
    report_claim(report, outcome.key, outcome.text, outcome.result);
    const std::string key = "claims." + outcome.key + ".";
    report.record(Value::exact(key + "runs", static_cast<int>(outcome.a_runs.size())));
    const bool timed = outcome.result.effect > 0;
    for (const auto& [side, runs] : {std::pair{"a_ns", &outcome.a_runs},
                                     {"b_ns", &outcome.b_runs},
                                     {"c_ns", &outcome.c_runs},
                                     {"d_ns", &outcome.d_runs}})
        report.record(timed ? Value::measured(key + side, 1e9 * least(*runs), 1) : Value::unknown(key + side, "-"));
    for (const auto& [name, ratio] : {std::pair{"over", &outcome.over}, {"under", &outcome.under}}) {
        report.record(timed ? Value::measured(key + name, ratio->value, 2) : Value::unknown(key + name, "-"));
        report.record(timed ? Value::measured(key + name + "_noise", ratio->noise, 2)
                            : Value::unknown(key + name + "_noise", "-"));
    }
}

// The kit run on sides that note their threads' shares (core_share.hpp); here, not in
// core_share.cpp, so that CoreShares alone needs nothing of the kit.
ExperimentResult run_experiment(const Experiment& e, CoreShares& noted, bool quick, Instruments instruments) {
    noted.clear();
    auto probe = std::move(instruments.shares);
    instruments.shares = [&noted, probe](int threads) { return noted.races() == 0 ? probe(threads) : noted.each(); };
    return run_experiment(e, quick, instruments);
}

}  // namespace cachebook
