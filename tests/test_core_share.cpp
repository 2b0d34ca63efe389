// The kit's core check on shares the race's own threads note (common/include/cachebook/core_share.hpp),
// on a made-up machine: a clock the sides advance, and each call noting the shares the test chose.
#include <catch2/catch.hpp>

#include "cachebook/core_share.hpp"
#include "kit_checks.hpp"

using cachebook::CoreShares;
using cachebook::Verdict;

TEST_CASE("each thread's share is its CPU time over its wall time, summed over the races", "[experiment]") {
    CoreShares shares;
    CHECK(shares.each().empty());
    shares.note({0.9, 1.0}, {1.0, 1.0});
    shares.note({1.9, 0.2}, {2.0, 2.0});  // thread 1 waited most of this race for its turn
    CHECK(shares.races() == 2);
    // thread 0: (0.9 + 1.9) / 3 = 0.933; thread 1: (1.0 + 0.2) / 3 = 0.4, not 0.1, its worst race alone
    CHECK_THAT(shares.each(), Catch::Matchers::Approx(std::vector<double>{2.8 / 3, 0.4}));
    shares.note({1.0, 1.0, 2.0}, {1.0, 1.0, 1.0});  // a third thread; CPU past wall (clock grain) counts as 1
    CHECK(shares.each().at(2) == 1.0);
    shares.note({0.0}, {0.0});
    CHECK_THROWS_AS(shares.note({1.0, 1.0}, {1.0}), std::invalid_argument);
    shares.clear();
    CHECK(shares.races() == 0);
    CHECK(shares.each().empty());
    shares.note({0.0}, {0.0});  // a thread with no wall time got no core
    CHECK(shares.each() == std::vector<double>{0.0});
}

namespace {

// Two sides whose every call takes the given seconds on the fake clock and notes `noted`, the
// share each of its two threads got; the probe reports two free cores.
struct RacedMachine {
    double clock = 0;
    std::vector<double> noted{1.0, 1.0};
    CoreShares shares;
    int probes = 0;

    cachebook::Experiment experiment(double slow_seconds, double fast_seconds) {
        return {"raced",
                "packed / padded",
                [this, slow_seconds] { race(slow_seconds); },
                [this, fast_seconds] { race(fast_seconds); },
                {.runs = 6},
                {.threshold = 1.5, .cpus = 2}};
    }
    cachebook::Instruments instruments() {
        cachebook::Instruments i;
        i.now = [this] { return clock; };
        i.shares = [this](int threads) {
            ++probes;
            return std::vector<double>(static_cast<std::size_t>(threads), 1.0);
        };
        i.wait_idle = [] {};
        i.usable_cpus = [] { return 2; };
        return i;
    }

private:
    void race(double seconds) {
        clock += seconds;
        std::vector<double> cpu;
        for (double share : noted) cpu.push_back(share * seconds);
        shares.note(cpu, std::vector<double>(noted.size(), seconds));
    }
};

}  // namespace

TEST_CASE("threads that took turns on one core give no verdict, though a probe saw two free cores", "[experiment]") {
    // Packed as fast as padded: by the rule alone, 1.00x against 1.50x on a quiet control fails.
    RacedMachine m;
    m.noted = {0.5, 0.5};
    const auto o = cachebook::run_experiment(m.experiment(1.0, 1.0), m.shares, false, m.instruments());
    CHECK(m.probes == 1);  // before the runs; after them, the races' threads say
    CHECK_THAT(o.shares, Catch::Matchers::Approx(std::vector<double>{0.5, 0.5}));
    CHECK(o.result.effect == Approx(1.0));
    cachebook_test::check_no_core_each(o.result, "1.00x against at least 1.50x, noise 0 %", "0.50, 0.50");
}

TEST_CASE("threads that each had a core keep the rule's verdict, fails included", "[experiment]") {
    RacedMachine fails;
    fails.noted = {0.95, 0.9};
    const auto o = cachebook::run_experiment(fails.experiment(1.0, 1.0), fails.shares, false, fails.instruments());
    CHECK_THAT(o.shares, Catch::Matchers::Approx(std::vector<double>{0.95, 0.9}));
    CHECK(o.result.verdict == Verdict::fails);
    RacedMachine holds;
    const auto h = cachebook::run_experiment(holds.experiment(2.0, 1.0), holds.shares, false, holds.instruments());
    CHECK(h.result.verdict == Verdict::holds);
    // shares left from an earlier experiment are cleared first
    holds.noted = {0.9, 0.9};
    const auto again = cachebook::run_experiment(holds.experiment(2.0, 1.0), holds.shares, false, holds.instruments());
    CHECK_THAT(again.shares, Catch::Matchers::Approx(std::vector<double>{0.9, 0.9}));
}
