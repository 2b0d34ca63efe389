// The decision rule of every measured claim (common/include/cachebook/claim.hpp), on runs made
// up for each verdict: the figures are worked by hand in the comments.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "cachebook/claim.hpp"

using cachebook::ClaimRule;
using cachebook::decide;
using cachebook::Verdict;

TEST_CASE("a clear effect on a quiet machine holds", "[claim]") {
    // slow minima 2.0 (even) and 2.1 (odd): gap 5 %; fast 1.0 and 1.0: gap 0; effect 2.0 / 1.0.
    const auto r = decide({2.0, 2.1, 2.2, 2.3}, {1.0, 1.0, 1.1, 1.2}, ClaimRule{1.5, 4, 0.2});
    CHECK(r.effect == Approx(2.0));
    CHECK(r.noise == Approx(0.05));
    CHECK(r.verdict == Verdict::holds);  // 2.0 >= 1.5 x 1.05
    CHECK(r.reason == "2.00x against at least 1.50x, noise 5 %: clears the threshold by more than the noise");
}

TEST_CASE("no effect on a quiet machine fails", "[claim]") {
    // effect 1.0, noise 0: 1.0 < 1.5 / 1.0
    const auto r = decide({1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}, ClaimRule{1.5, 4, 0.2});
    CHECK(r.verdict == Verdict::fails);
    CHECK(cachebook::verdict_name(r.verdict) == "fails");
}

TEST_CASE("a noisy control gives no fails, and a holds only to an effect that clears the noise", "[claim]") {
    // slow minima 5.0 and 8.0: gap 60 %, over 20 %; effect 5.0 >= 1.5 x 1.6 = 2.4: holds all the same
    const auto clear = decide({5.0, 8.0, 9.0, 9.0}, {1.0, 1.0, 1.0, 1.0}, ClaimRule{1.5, 4, 0.2});
    CHECK(clear.noise == Approx(0.6));
    CHECK(clear.verdict == Verdict::holds);
    // the same runs against R = 4: 5.0 < 4 x 1.6 = 6.4, and the control is too noisy for a fails
    const auto unclear = decide({5.0, 8.0, 9.0, 9.0}, {1.0, 1.0, 1.0, 1.0}, ClaimRule{4.0, 4, 0.2});
    CHECK(unclear.verdict == Verdict::inconclusive);
    CHECK(unclear.reason.find("too busy to tell") != std::string::npos);
    // no effect at all (1.0 against R = 1.5) under that noise: inconclusive, never fails
    const auto none = decide({1.0, 1.6, 1.7, 1.7}, {1.0, 1.0, 1.0, 1.0}, ClaimRule{1.5, 4, 0.2});
    CHECK(none.verdict == Verdict::inconclusive);
}

TEST_CASE("an effect within the noise of the threshold is inconclusive", "[claim]") {
    // slow 1.5 and 1.65 (gap 10 %), fast 1.0 and 1.0: effect 1.5, between 1.5 / 1.1 and 1.5 x 1.1
    const auto r = decide({1.5, 1.65}, {1.0, 1.0}, ClaimRule{1.5, 2, 0.2});
    CHECK(r.effect == Approx(1.5));
    CHECK(r.verdict == Verdict::inconclusive);
    CHECK(r.reason.find("within the noise of the threshold") != std::string::npos);
}

TEST_CASE("the rule needs two runs a side", "[claim]") {
    CHECK_THROWS_AS(decide({1.0}, {1.0, 1.0}, ClaimRule{}), std::invalid_argument);
}

TEST_CASE("measure_claim times both sides, interleaved, the runs the rule asks for", "[claim]") {
    int slow_calls = 0, fast_calls = 0, last = 0, switches = 0;
    const auto r =
        cachebook::measure_claim([&] { ++slow_calls, switches += last != 1, last = 1; },
                                 [&] { ++fast_calls, switches += last != 2, last = 2; }, ClaimRule{1.0, 6, 10.0});
    CHECK(slow_calls == 7);  // one untimed call, then six timed
    CHECK(fast_calls == 7);
    CHECK(switches == 14);  // A B A B ...: every call switches side
    CHECK(r.threshold == 1.0);
}
