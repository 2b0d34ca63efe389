// Chapter 6's measured claims, each decided by the book's one rule (cachebook/claim.hpp) from
// runs the lab already times interleaved: the program prints the verdict and the tests use it.
#include <fmt/format.h>

#include <utility>

#include "lab.hpp"

namespace ch06 {

using cachebook::ClaimResult;
using cachebook::ClaimRule;
using cachebook::Verdict;

namespace {

// No verdict from fewer than two chunks a side: the control needs two halves.
ClaimResult too_few(std::size_t slow, std::size_t fast, double threshold) {
    return unmeasured_claim(
        threshold,
        fmt::format("{} packed and {} padded chunks counted, fewer than two a side: the machine was too busy to tell",
                    slow, fast));
}

}  // namespace

ClaimResult unmeasured_claim(double threshold, std::string reason) {
    ClaimResult r;
    r.threshold = threshold;
    r.reason = std::move(reason);
    return r;
}

ClaimResult claim_at_least(const LayoutComparison& comparison, double threshold) {
    const auto& packed = comparison.packed.counted_ns;
    const auto& padded = comparison.padded.counted_ns;
    if (packed.size() < 2 || padded.size() < 2) return too_few(packed.size(), padded.size(), threshold);
    const int runs = static_cast<int>(std::min(packed.size(), padded.size()));
    return cachebook::decide(packed, padded, ClaimRule{threshold, runs, kClaimMaxNoise});
}

// The lower bound as "packed at least band[0] times padded"; the upper as "padded at least
// 1 / band[1] times packed", which is "packed at most band[1] times padded".
std::pair<ClaimResult, ClaimResult> one_core_bounds(const LayoutComparison& comparison) {
    const auto& packed = comparison.packed.counted_ns;
    const auto& padded = comparison.padded.counted_ns;
    if (packed.size() < 2 || padded.size() < 2)
        return {too_few(packed.size(), padded.size(), kOneCoreBand[0]),
                too_few(packed.size(), padded.size(), 1 / kOneCoreBand[1])};
    const ClaimRule lower{kOneCoreBand[0], static_cast<int>(packed.size()), kClaimMaxNoise};
    const ClaimRule upper{1 / kOneCoreBand[1], static_cast<int>(padded.size()), kClaimMaxNoise};
    return {cachebook::decide(packed, padded, lower), cachebook::decide(padded, packed, upper)};
}

// Both bounds hold: holds. Either fails: fails. Otherwise no verdict.
ClaimResult claim_one_core(const LayoutComparison& comparison) {
    const auto [above, below] = one_core_bounds(comparison);
    ClaimResult r = above;
    r.threshold = kOneCoreBand[1];
    if (above.effect <= 0) return r;  // too few chunks: the reason says so
    const std::string figures = fmt::format("{:.2f}x against {:.2f}x to {:.2f}x, noise {:.0f} %", above.effect,
                                            kOneCoreBand[0], kOneCoreBand[1], 100 * above.noise);
    if (above.verdict == Verdict::fails || below.verdict == Verdict::fails) {
        r.verdict = Verdict::fails;
        r.reason = figures + ": outside the band by more than the noise";
    } else if (above.verdict == Verdict::holds && below.verdict == Verdict::holds) {
        r.verdict = Verdict::holds;
        r.reason = figures + ": inside the band by more than the noise";
    } else {
        r.verdict = Verdict::inconclusive;
        r.reason = figures + ": " + (above.verdict == Verdict::inconclusive ? above.reason : below.reason);
    }
    return r;
}

}  // namespace ch06
