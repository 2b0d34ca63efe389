// The experiment kit (common/include/cachebook/experiment.hpp) on a made-up machine: a clock the
// sides advance by the seconds each call is given, and core shares chosen by the test. Every
// figure is worked by hand in the comments.
#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cachebook/claim.hpp"
#include "cachebook/experiment.hpp"
#include "kit_checks.hpp"

using cachebook::Claim;
using cachebook::decide_claim;
using cachebook::Direction;
using cachebook::Verdict;

namespace {

// A machine whose clock moves only when a side is called: each call of a side takes the next of
// its costs (in seconds, cycling), and the order of the calls is kept, S for slow, F for fast.
struct FakeMachine {
    double clock = 0;
    std::string order;
    std::vector<double> slow_costs{2.0}, fast_costs{1.0};
    std::size_t slow_calls = 0, fast_calls = 0;
    std::vector<std::vector<double>> shares{{1.0, 1.0}};  // one list per look, the last repeated
    std::size_t looks = 0;
    int cpus = 2;

    cachebook::Experiment experiment(Claim claim, cachebook::Sizing sizing = {}) {
        return {"fake",
                "slow / fast",
                [this] { call('S', slow_costs, slow_calls); },
                [this] { call('F', fast_costs, fast_calls); },
                sizing,
                claim};
    }
    cachebook::Instruments instruments() {
        cachebook::Instruments i;
        i.now = [this] { return clock; };
        i.shares = [this](int) { return shares[std::min(looks++, shares.size() - 1)]; };
        i.wait_idle = [] {};
        i.usable_cpus = [this] { return cpus; };
        return i;
    }

private:
    void call(char side, const std::vector<double>& costs, std::size_t& calls) {
        order += side;
        clock += costs[calls++ % costs.size()];
    }
};

std::vector<double> times(double seconds, int runs) {
    return std::vector<double>(static_cast<std::size_t>(runs), seconds);
}

// Prints a claim through a report titled "test" and checks the two lines printed, the claim's and
// the rule's; returns what the report recorded under claims.<key>.
template <class Print>
nlohmann::json printed_claim(Print print, const std::string& key, const std::string& claim_line,
                             const std::string& rule_line) {
    std::ostringstream out;
    cachebook::Report report("test", false, out);
    print(report);
    CHECK(out.str() == "test\n  " + claim_line + "\n  " + rule_line + "\n");
    return report.json().at("claims").at(key);
}

}  // namespace

TEST_CASE("the kit runs the sides in A B B A order after one untimed call of each", "[experiment]") {
    FakeMachine m;
    const auto o = cachebook::run_experiment(m.experiment({1.5}, {0, 6}), false, m.instruments());
    CHECK(m.order == cachebook_test::kSixRunsAbba);
    CHECK(o.slow_runs == times(2.0, 6));
    CHECK(o.fast_runs == times(1.0, 6));
    CHECK(o.result.effect == Approx(2.0));
    CHECK(o.result.verdict == Verdict::holds);
}

TEST_CASE("a carry-over from the side run before shows in the control", "[experiment]") {
    // The fast side takes 1.3 s right after the slow side and 1.0 s when it runs first. In A B B A
    // order it runs second in its even runs (0, 2, 4) and first in its odd runs: the control sees
    // a 30 % gap. (Run always after the slow side, as A B A B would, every run took 1.3 s and
    // the control saw nothing.)
    FakeMachine m;
    m.fast_costs = {1.3, 1.3, 1.0, 1.3, 1.0, 1.3, 1.0};  // the untimed call (after S), then runs 0 to 5
    const auto o = cachebook::run_experiment(m.experiment({1.5}, {0, 6}), false, m.instruments());
    CHECK_THAT(o.fast_runs, Catch::Matchers::Approx(std::vector<double>{1.3, 1.0, 1.3, 1.0, 1.3, 1.0}));
    CHECK(cachebook::control_gap(o.fast_runs) == Approx(0.3));
    CHECK(o.result.noise == Approx(0.3));  // the slow side's gap is 0
}

TEST_CASE("a run lasts the time budget: the same number of calls of each side", "[experiment]") {
    FakeMachine m;
    m.slow_costs = {0.004};
    m.fast_costs = {0.001};
    // budget 0.01 s over the faster side's 0.001 s a call: 10 calls a run, for both sides
    const auto o = cachebook::run_experiment(m.experiment({2.0}, {0.01, 8, 0.003, 6}), false, m.instruments());
    CHECK(o.calls_per_run == 10);
    CHECK(o.slow_runs.size() == 8);
    CHECK(m.slow_calls == 1 + 1 + 8 * 10);        // the sizing call, the untimed call, eight runs of ten
    CHECK(o.slow_runs.front() == Approx(0.004));  // seconds per call, not per run
    CHECK(o.result.effect == Approx(4.0));
    // --quick: its own budget (three calls) and run count
    FakeMachine q;
    q.slow_costs = {0.004};
    q.fast_costs = {0.001};
    const auto quick = cachebook::run_experiment(q.experiment({2.0}, {0.01, 8, 0.003, 6}), true, q.instruments());
    CHECK(quick.calls_per_run == 3);
    CHECK(quick.fast_runs.size() == 6);
}

TEST_CASE("fewer than six runs a side give no verdict", "[experiment]") {
    // An effect of 2.0 against 1.5 on a quiet control would hold, but five runs a side are too few.
    const auto five = decide_claim(times(2.0, 5), times(1.0, 5), Claim{1.5});
    CHECK(five.effect == Approx(2.0));
    CHECK(five.verdict == Verdict::inconclusive);
    CHECK(five.reason == "2.00x against at least 1.50x, noise 0 %: 5 runs a side, fewer than 6, give no verdict");
    // the floor counts the shorter side
    CHECK(decide_claim(times(2.0, 8), times(1.0, 5), Claim{1.5}).verdict == Verdict::inconclusive);
    CHECK(decide_claim(times(2.0, 6), times(1.0, 6), Claim{1.5}).verdict == Verdict::holds);
    CHECK(decide_claim(times(1.0, 6), times(1.0, 6), Claim{1.5}).verdict == Verdict::fails);
    // one run a side: no control at all, still no verdict (and no exception)
    CHECK(decide_claim({2.0}, {1.0}, Claim{1.5}).verdict == Verdict::inconclusive);
}

TEST_CASE("the control compounds both sides' gaps", "[experiment]") {
    // slow: even runs' minimum 1.65, odd runs' 1.815: gap 10 %. fast: 1.0 and 1.1: gap 10 %.
    // effect 1.65 / 1.0. The noise is 1.1 x 1.1 - 1 = 21 %, not the larger gap, 10 %.
    const std::vector<double> slow{1.65, 1.815, 1.65, 1.815, 1.65, 1.815};
    const std::vector<double> fast{1.0, 1.1, 1.0, 1.1, 1.0, 1.1};
    const auto r = decide_claim(slow, fast, Claim{1.5});
    CHECK(r.effect == Approx(1.65));
    CHECK(r.noise == Approx(0.21));
    // With 10 % the effect would clear 1.5 x 1.1 = 1.65 and hold; with 21 % it must clear 1.815,
    // and a control noisier than 20 % gives no fails: inconclusive.
    CHECK(r.verdict == Verdict::inconclusive);
    CHECK(
        r.reason ==
        "1.65x against at least 1.50x, noise 21 %: the control is noisier than 20 %, the machine is too busy to tell");
    // The same runs against 1.3: 1.65 >= 1.3 x 1.21 = 1.573, holds.
    CHECK(decide_claim(slow, fast, Claim{1.3}).verdict == Verdict::holds);
}

TEST_CASE("an effect within the combined noise of the threshold is inconclusive", "[experiment]") {
    // slow 1.5 and 1.53 (gap 2 %), fast 1.0 and 1.03 (gap 3 %): noise 1.02 x 1.03 - 1 = 5.06 %.
    // effect 1.5 against 1.5: between 1.5 / 1.0506 and 1.5 x 1.0506.
    const auto r = decide_claim({1.5, 1.53, 1.5, 1.53, 1.5, 1.53}, {1.0, 1.03, 1.0, 1.03, 1.0, 1.03}, Claim{1.5});
    CHECK(r.noise == Approx(0.0506));
    CHECK(r.verdict == Verdict::inconclusive);
    CHECK(r.reason == "1.50x against at least 1.50x, noise 5 %: within the noise of the threshold");
}

TEST_CASE("a claim of at most R is the rule on the inverted ratio", "[experiment]") {
    const Claim at_most{1.2, Direction::at_most};
    // effect 1.0: at most 1.2 by more than a quiet control's noise
    const auto holds = decide_claim(times(1.0, 6), times(1.0, 6), at_most);
    CHECK(holds.verdict == Verdict::holds);
    CHECK(holds.reason == "1.00x against at most 1.20x, noise 0 %: clears the threshold by more than the noise");
    // effect 1.5 on a quiet control: past it
    const auto fails = decide_claim(times(1.5, 6), times(1.0, 6), at_most);
    CHECK(fails.verdict == Verdict::fails);
    CHECK(fails.reason == "1.50x against at most 1.20x, noise 0 %: past the threshold by more than the noise");
}

TEST_CASE("threads that did not each get a core give no verdict, with the share each got", "[experiment]") {
    FakeMachine m;
    m.shares = {{0.98, 0.95}, {0.97, 0.45}};  // before the runs, after them
    const auto o =
        cachebook::run_experiment(m.experiment({1.5, Direction::at_least, 2}, {0, 6}), false, m.instruments());
    CHECK(o.shares == std::vector<double>{0.97, 0.45});  // each thread's lesser look
    CHECK(o.result.effect == Approx(2.0));               // the effect is still measured and shown
    cachebook_test::check_no_core_each(o.result, "2.00x against at least 1.50x, noise 0 %", "0.97, 0.45");
}

TEST_CASE("threads that each got a core keep the rule's verdict", "[experiment]") {
    FakeMachine m;
    m.shares = {{0.98, 0.95}, {0.90, 0.92}};
    const auto o =
        cachebook::run_experiment(m.experiment({1.5, Direction::at_least, 2}, {0, 6}), false, m.instruments());
    CHECK(o.shares == std::vector<double>{0.90, 0.92});
    CHECK(o.result.verdict == Verdict::holds);
    // a claim on one thread asks for no shares
    FakeMachine one;
    const auto single = cachebook::run_experiment(one.experiment({1.5}, {0, 6}), false, one.instruments());
    CHECK(single.shares.empty());
    CHECK(one.looks == 0);
}

TEST_CASE("a memory-bound claim on a busy machine cannot fail, but can hold", "[experiment]") {
    // One thread, bound by memory bandwidth: the kit looks at a busy thread on each usable cpu.
    cachebook::Claim memory{1.5};
    memory.memory_bound = true;
    FakeMachine busy;
    busy.slow_costs = {1.0};
    busy.shares = {{0.95, 0.96}, {0.93, 0.5}};  // the second cpu ran other work after the runs
    const auto short_of = cachebook::run_experiment(busy.experiment(memory, {0, 6}), false, busy.instruments());
    CHECK(busy.looks == 2);
    CHECK(short_of.shares == std::vector<double>{0.93, 0.5});
    // 1.00x against 1.5x on a quiet control is "fails" by the rule; the busy machine makes it no verdict
    CHECK(cachebook::decide_claim(short_of.slow_runs, short_of.fast_runs, memory).verdict == Verdict::fails);
    CHECK(short_of.result.verdict == Verdict::inconclusive);
    CHECK(short_of.result.reason ==
          "1.00x against at least 1.50x, noise 0 %: the machine is busy (a busy thread got 0.50 of a core), so others "
          "shared the memory bandwidth");
    FakeMachine clear;  // 2.00x: holds, busy or not
    clear.shares = busy.shares;
    CHECK(cachebook::run_experiment(clear.experiment(memory, {0, 6}), false, clear.instruments()).result.verdict ==
          Verdict::holds);
    FakeMachine quiet;  // every cpu free: the rule's "fails" stands
    quiet.slow_costs = {1.0};
    CHECK(cachebook::run_experiment(quiet.experiment(memory, {0, 6}), false, quiet.instruments()).result.verdict ==
          Verdict::fails);
}

TEST_CASE("the thread's CPU clock stands still while the thread does not run", "[experiment]") {
    const auto cpu = cachebook::thread_cpu_instruments();
    const double start = cpu.now();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(cpu.now() - start < 0.025);  // asleep: a few microseconds of CPU, not 50 ms
}

TEST_CASE("a claim that needs more cpus than the process may use is not timed", "[experiment]") {
    FakeMachine m;
    m.cpus = 1;
    const auto o = cachebook::run_experiment(m.experiment({1.5, Direction::at_least, 2}), false, m.instruments());
    CHECK(m.order.empty());
    CHECK(o.result.effect == 0);
    CHECK(o.result.verdict == Verdict::inconclusive);
    CHECK(o.result.reason == "this process may use 1 cpu(s); the claim needs 2, one a thread");
}

TEST_CASE("an experiment is recorded under its key, each figure as printed", "[experiment]") {
    FakeMachine m;
    m.slow_costs = {2.0e-6};
    m.fast_costs = {1.0e-6};
    const auto e = m.experiment({1.5, Direction::at_least, 2}, {0, 6});
    const auto o = cachebook::run_experiment(e, false, m.instruments());
    const auto c =
        printed_claim([&](cachebook::Report& report) { cachebook::report_experiment(report, o); }, "fake",
                      "claim: slow / fast at least 1.50x: holds (2.00x, margin +33 %, noise 0 %)",
                      "the rule: 2.00x against at least 1.50x, noise 0 %: clears the threshold by more than the noise");
    CHECK(c["threshold"] == 1.5);
    CHECK(c["verdict"] == "holds");
    CHECK(c["effect"] == 2.0);
    CHECK(c["noise"] == 0.0);
    CHECK(c["runs"] == 6);
    CHECK(c["calls_per_run"] == 1);
    CHECK(c["slow_ns"] == 2000.0);
    CHECK(c["fast_ns"] == 1000.0);
    CHECK(c["shares"] == nlohmann::json::array({1.0, 1.0}));
}

TEST_CASE("a claim of at most R prints as one", "[experiment]") {
    std::ostringstream out;
    cachebook::Report report("test", false, out);
    cachebook::report_claim(report, "band", "packed / padded",
                            decide_claim(times(1.0, 6), times(1.0, 6), Claim{1.25, Direction::at_most}));
    // margin: 1.25 / 1.00 - 1 = +25 %, how far inside the bound
    CHECK(out.str().find("claim: packed / padded at most 1.25x: holds (1.00x, margin +25 %, noise 0 %)") !=
          std::string::npos);
}

// --- Derived sides: a claim on a ratio of ratios ----------------------------------------------

TEST_CASE("a timed side is its least run with its control gap as noise", "[experiment]") {
    const auto side = cachebook::timed_side({1.1, 1.0, 1.1, 1.0, 1.1, 1.0});  // even runs' least 1.1, odd 1.0
    CHECK(side.value == 1.0);
    CHECK(side.noise == Approx(0.1));
    CHECK(side.runs == 6);
    CHECK(cachebook::timed_side({2.0}).noise == 0);  // one run: no control, and no verdict later
}

TEST_CASE("a derived side divides two figures and compounds their noise", "[experiment]") {
    // 2.0 s with 10 % noise over 0.5 s with 5 %: 4.0, off by up to 1.1 x 1.05 - 1 = 15.5 %
    const auto ratio = cachebook::ratio_side({2.0, 0.10, 8}, {0.5, 0.05, 6});
    CHECK(ratio.value == Approx(4.0));
    CHECK(ratio.noise == Approx(0.155));
    CHECK(ratio.runs == 6);                                           // the fewer runs of the two
    CHECK(cachebook::ratio_side({2.0, 0, 6}, {0, 0, 6}).value == 0);  // nothing to divide by: no figure
}

TEST_CASE("a ratio of ratios carries the noise of all four sides", "[experiment]") {
    // a: least 3.3 (gap 5 %), b: 1.0 (quiet), c: 1.0 (quiet), d: least 1.0 (gap 5 %).
    // a / b = 3.3 with 5 % noise, c / d = 1.0 with 5 %: the effect 3.3, the noise 1.05 x 1.05 - 1 = 10.25 %.
    const std::vector<double> a{3.3, 3.465, 3.3, 3.465, 3.3, 3.465}, quiet(6, 1.0), d{1.0, 1.05, 1.0, 1.05, 1.0, 1.05};
    const auto over = cachebook::ratio_side(cachebook::timed_side(a), cachebook::timed_side(quiet));
    const auto under = cachebook::ratio_side(cachebook::timed_side(quiet), cachebook::timed_side(d));
    const auto r = cachebook::decide_sides(over, under, Claim{3.0});
    CHECK(r.effect == Approx(3.3));
    CHECK(r.noise == Approx(0.1025));
    // 3.3 must clear 3.0 x 1.1025 = 3.3075 to hold; with only the larger gap, 5 %, it would have (3.15)
    CHECK(r.verdict == Verdict::inconclusive);
    CHECK(r.reason == "3.30x against at least 3.00x, noise 10 %: within the noise of the threshold");
    // The same sides against 2.9: 3.3 >= 2.9 x 1.1025 = 3.197, holds
    CHECK(cachebook::decide_sides(over, under, Claim{2.9}).verdict == Verdict::holds);
    // and against 4.0: 3.3 < 4.0 / 1.1025 = 3.628 on a control under 20 %, fails
    CHECK(cachebook::decide_sides(over, under, Claim{4.0}).verdict == Verdict::fails);
}

namespace {

// Four sides on a clock they advance by their cost, recording the order they ran in.
struct FourSides {
    double clock = 0;
    std::string order;
    cachebook::RatioOfRatios declared(double a, double b, double c, double d, Claim claim) {
        auto side = [this](char name, double cost) { return [this, name, cost] { order += name, clock += cost; }; };
        return {"ratios", "a / b over c / d", side('a', a), side('b', b), side('c', c), side('d', d), 6, 6, claim};
    }
    cachebook::Instruments instruments() {
        cachebook::Instruments i;
        i.now = [this] { return clock; };
        i.shares = [](int) { return std::vector<double>{}; };
        i.wait_idle = [] {};
        i.usable_cpus = [] { return 1; };
        return i;
    }
};

}  // namespace

TEST_CASE("the sides of a ratio of ratios run in rounds, in order and then in reverse", "[experiment]") {
    FourSides m;
    const auto o = cachebook::run_ratio_of_ratios(m.declared(8.0, 1.0, 1.5, 1.0, Claim{3.0}), false, m.instruments());
    CHECK(m.order ==
          "abcd"  // untimed
          "abcd"
          "dcba"
          "abcd"
          "dcba"
          "abcd"
          "dcba");
    CHECK(o.a_runs == times(8.0, 6));
    CHECK(o.d_runs == times(1.0, 6));
    CHECK(o.over.value == Approx(8.0));
    CHECK(o.under.value == Approx(1.5));
    CHECK(o.result.effect == Approx(8.0 / 1.5));  // 5.33 against 3: holds
    CHECK(o.result.verdict == Verdict::holds);
    FourSides wrong;  // a ratio of ratios is timed on one thread
    CHECK_THROWS_AS(cachebook::run_ratio_of_ratios(wrong.declared(1, 1, 1, 1, Claim{3.0, Direction::at_least, 2}),
                                                   false, wrong.instruments()),
                    std::invalid_argument);
}

TEST_CASE("a ratio of ratios is recorded with both ratios and their noise", "[experiment]") {
    FourSides m;
    const auto o =
        cachebook::run_ratio_of_ratios(m.declared(8e-6, 2e-6, 1e-6, 1e-6, Claim{3.0}), true, m.instruments());
    const auto c =
        printed_claim([&](cachebook::Report& report) { cachebook::report_ratio_of_ratios(report, o); }, "ratios",
                      "claim: a / b over c / d at least 3.00x: holds (4.00x, margin +33 %, noise 0 %)",
                      "the rule: 4.00x against at least 3.00x, noise 0 %: clears the threshold by more than the noise");
    CHECK(c["runs"] == 6);
    CHECK(c["a_ns"] == 8000.0);
    CHECK(c["b_ns"] == 2000.0);
    CHECK(c["over"] == 4.0);
    CHECK(c["under"] == 1.0);
    CHECK(c["over_noise"] == 0.0);
}
