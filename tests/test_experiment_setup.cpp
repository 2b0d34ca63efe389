// The experiment kit's set-up step (experiment.hpp, SetUp) on a made-up machine: a clock that moves
// only when a side or a set-up step is called, by the seconds each is given, and the order of the
// calls kept, S and F for the sides, s and f for their set-up steps.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cachebook/experiment.hpp"

using cachebook::Verdict;

namespace {

struct SetUpMachine {
    double clock = 0;
    std::string order;
    double slow_cost = 2.0, fast_cost = 1.0, set_up_cost = 128.0;
    int slow_set_ups = 0, fast_set_ups = 0;

    cachebook::Experiment experiment(cachebook::Sizing sizing) {
        return {"set_up",
                "slow / fast",
                [this] { order += 'S', clock += slow_cost; },
                [this] { order += 'F', clock += fast_cost; },
                sizing,
                {1.5}};
    }
    cachebook::SetUp set_up() {
        return {[this] { order += 's', clock += set_up_cost, ++slow_set_ups; },
                [this] { order += 'f', clock += set_up_cost, ++fast_set_ups; }};
    }
    cachebook::Instruments instruments() {
        cachebook::Instruments i;
        i.now = [this] { return clock; };
        i.shares = [](int threads) { return std::vector<double>(static_cast<std::size_t>(threads), 1.0); };
        i.wait_idle = [] {};
        i.usable_cpus = [] { return 1; };
        return i;
    }
};

std::vector<double> each_run(double seconds, int runs) {
    return std::vector<double>(static_cast<std::size_t>(runs), seconds);
}

}  // namespace

TEST_CASE("a side's set-up step runs before each of its calls, the untimed one too", "[experiment]") {
    SetUpMachine m;
    cachebook::run_experiment(m.experiment({0, 6}), m.set_up(), false, m.instruments());
    // the untimed call of each, then six runs in A B B A order, every call after its own step
    CHECK(m.order ==
          "sSfF"
          "sSfF"
          "fFsS"
          "sSfF"
          "fFsS"
          "sSfF"
          "fFsS");
}

TEST_CASE("the clock does not see a set-up step", "[experiment]") {
    // Each step costs 128 s on the made-up clock; the sides 2 s and 1 s. Timed with the steps, a run
    // would read 130 s against 129 s, an effect of 1.01 that fails the claim of 1.5.
    SetUpMachine m;
    const auto o = cachebook::run_experiment(m.experiment({0, 6}), m.set_up(), false, m.instruments());
    CHECK(o.slow_runs == each_run(2.0, 6));
    CHECK(o.fast_runs == each_run(1.0, 6));
    CHECK(o.result.effect == Approx(2.0));
    CHECK(o.result.verdict == Verdict::holds);
}

TEST_CASE("with several calls a run, each call has its step and the run times only the calls", "[experiment]") {
    SetUpMachine m;
    m.slow_cost = 0.25;  // every figure a sum of powers of two, so the clock adds them exactly
    m.fast_cost = 0.0625;
    // budget 0.625 s over the faster side's 0.0625 s: 10 calls a run, found from one call of each,
    // itself after its step (with the step's 128 s in it, one call would fill the budget)
    const auto o = cachebook::run_experiment(m.experiment({0.625, 6}), m.set_up(), false, m.instruments());
    CHECK(o.calls_per_run == 10);
    CHECK(m.slow_set_ups == 1 + 1 + 6 * 10);  // the sizing call, the untimed call, six runs of ten
    CHECK(m.fast_set_ups == 1 + 1 + 6 * 10);
    CHECK(o.slow_runs == each_run(0.25, 6));
    CHECK(o.fast_runs == each_run(0.0625, 6));
    // every call right after its own step: no two side calls in a row
    CHECK(m.order.find("SS") == std::string::npos);
    CHECK(m.order.find("FF") == std::string::npos);
}

TEST_CASE("a side with no set-up step is timed as before, one clock reading around its calls", "[experiment]") {
    SetUpMachine m;
    auto steps = m.set_up();
    steps.fast = nullptr;
    const auto o = cachebook::run_experiment(m.experiment({0, 6}), steps, false, m.instruments());
    CHECK(m.fast_set_ups == 0);
    CHECK(m.slow_set_ups == 7);
    CHECK(o.fast_runs == each_run(1.0, 6));
    CHECK(o.slow_runs == each_run(2.0, 6));
}
