// The decision rule of every measured claim (common/include/cachebook/claim.hpp), on runs made
// up for each verdict: the figures are worked by hand in the comments.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cachebook/claim.hpp"
#include "kit_checks.hpp"

using cachebook::ClaimRule;
using cachebook::decide;
using cachebook::Verdict;

TEST_CASE("a clear effect on a quiet machine holds", "[claim]") {
    // slow minima 2.0 (even) and 2.1 (odd): gap 5 %; fast 1.0 and 1.0: gap 0; effect 2.0 / 1.0;
    // noise 1.05 x 1.0 - 1.
    const auto r = decide({2.0, 2.1, 2.2, 2.3, 2.2, 2.3}, {1.0, 1.0, 1.1, 1.2, 1.1, 1.2}, ClaimRule{1.5, 6, 0.2});
    CHECK(r.effect == Approx(2.0));
    CHECK(r.noise == Approx(0.05));
    CHECK(r.verdict == Verdict::holds);  // 2.0 >= 1.5 x 1.05
    CHECK(r.reason == "2.00x against at least 1.50x, noise 5 %: clears the threshold by more than the noise");
}

TEST_CASE("no effect on a quiet machine fails", "[claim]") {
    // effect 1.0, noise 0: 1.0 < 1.5 / 1.0
    const std::vector<double> same(6, 1.0);
    const auto r = decide(same, same, ClaimRule{1.5, 6, 0.2});
    CHECK(r.verdict == Verdict::fails);
    CHECK(cachebook::verdict_name(r.verdict) == "fails");
}

TEST_CASE("a noisy control gives no fails, and a holds only to an effect that clears the noise", "[claim]") {
    // slow minima 5.0 and 8.0: gap 60 %, over 20 %; effect 5.0 >= 1.5 x 1.6 = 2.4: holds all the same
    const std::vector<double> noisy{5.0, 8.0, 9.0, 9.0, 9.0, 9.0}, quiet(6, 1.0);
    const auto clear = decide(noisy, quiet, ClaimRule{1.5, 6, 0.2});
    CHECK(clear.noise == Approx(0.6));
    CHECK(clear.verdict == Verdict::holds);
    // the same runs against R = 4: 5.0 < 4 x 1.6 = 6.4, and the control is too noisy for a fails
    const auto unclear = decide(noisy, quiet, ClaimRule{4.0, 6, 0.2});
    CHECK(unclear.verdict == Verdict::inconclusive);
    CHECK(unclear.reason.find("too busy to tell") != std::string::npos);
    // no effect at all (1.0 against R = 1.5) under that noise: inconclusive, never fails
    const auto none = decide({1.0, 1.6, 1.7, 1.7, 1.7, 1.7}, quiet, ClaimRule{1.5, 6, 0.2});
    CHECK(none.verdict == Verdict::inconclusive);
}

TEST_CASE("an effect within the noise of the threshold is inconclusive", "[claim]") {
    // slow 1.5 and 1.65 (gap 10 %), fast 1.0 and 1.0: effect 1.5, between 1.5 / 1.1 and 1.5 x 1.1
    const auto r = decide({1.5, 1.65, 1.5, 1.65, 1.5, 1.65}, std::vector<double>(6, 1.0), ClaimRule{1.5, 6, 0.2});
    CHECK(r.effect == Approx(1.5));
    CHECK(r.verdict == Verdict::inconclusive);
    CHECK(r.reason.find("within the noise of the threshold") != std::string::npos);
}

TEST_CASE("the rule gives no verdict from fewer than six runs a side", "[claim]") {
    // two runs a side, the floor the rule once had: a clear 2x is still no verdict
    const auto r = decide({2.0, 2.0}, {1.0, 1.0}, ClaimRule{1.5, 2, 0.2});
    CHECK(r.verdict == Verdict::inconclusive);
    CHECK(r.reason.find("2 runs a side, fewer than 6") != std::string::npos);
    CHECK(decide({1.0}, {1.0, 1.0}, ClaimRule{}).verdict == Verdict::inconclusive);
}

TEST_CASE("measure_claim times both sides in A B B A order, the runs the rule asks for", "[claim]") {
    std::string order;
    const auto r = cachebook::measure_claim([&] { order += 'S'; }, [&] { order += 'F'; }, ClaimRule{1.0, 6, 10.0});
    CHECK(order == cachebook_test::kSixRunsAbba);  // one untimed call each, then six timed each
    CHECK(r.threshold == 1.0);
}
