// Chapter 5's experiment, its measured claims: each decided by the book's one rule
// (cachebook/claim.hpp) on the interleaved runs the timing loops make.
#include <fmt/format.h>

#include "lab.hpp"

namespace ch05 {

cachebook::ClaimResult decide_claim(const cachebook::Timing& slow, const cachebook::Timing& fast, ClaimBound bound) {
    const cachebook::ClaimRule rule{bound.threshold, static_cast<int>(slow.runs.size()), bound.max_noise};
    if (slow.runs.size() >= 2 && fast.runs.size() >= 2) return cachebook::decide(slow.runs, fast.runs, rule);
    cachebook::ClaimResult r;
    r.threshold = bound.threshold;
    r.effect = fast.min() > 0 ? slow.min() / fast.min() : 0;
    r.reason = fmt::format("{:.2f}x against at least {:.2f}x from one run a side: no control, so no verdict", r.effect,
                           bound.threshold);
    return r;
}

cachebook::ClaimResult decide_bandwidth_claim(const cachebook::Timing& slow, const cachebook::Timing& fast,
                                              ClaimBound bound, double cpu_share) {
    auto r = decide_claim(slow, fast, bound);
    if (r.verdict == cachebook::Verdict::fails && cpu_share < kBusyShare) {
        r.verdict = cachebook::Verdict::inconclusive;
        r.reason += fmt::format(
            ", but the machine is busy (a busy thread got {:.2f} of a CPU), so others shared the memory bandwidth",
            cpu_share);
    }
    return r;
}

cachebook::ClaimResult aos_over_soa_claim(const LayoutTimes& t) {
    return decide_bandwidth_claim(t.aos, t.soa, kAosOverSoa, t.cpu_share);
}

cachebook::ClaimResult aos_over_hot_cold_claim(const LayoutTimes& t) {
    return decide_bandwidth_claim(t.aos, t.hot_cold, kAosOverHotCold, t.cpu_share);
}

cachebook::ClaimResult scattered_over_vector_claim(const ListTimes& t) {
    return decide_claim(t.scattered, t.vector, kScatteredOverVector);
}

cachebook::ClaimResult scattered_over_gather_claim(const ListTimes& t) {
    return decide_claim(t.scattered, t.gather, kScatteredOverGather);
}

cachebook::ClaimResult fusion_claim(const FusionTimes& t) {
    return decide_bandwidth_claim(t.separate, t.fused, kSeparateOverFused, t.cpu_share);
}

namespace {

// Each round's two versions added up: the time one placement costs the pair.
cachebook::Timing both_versions(const cachebook::Timing& separate, const cachebook::Timing& fused) {
    cachebook::Timing sum;
    for (std::size_t r = 0; r < separate.runs.size() && r < fused.runs.size(); ++r)
        sum.runs.push_back(separate.runs[r] + fused.runs[r]);
    return sum;
}

}  // namespace

PlacementVerdict placement_verdict(const FusionTimes& t) {
    const auto apart = both_versions(t.separate, t.fused);
    const auto close = both_versions(t.separate_close, t.fused_close);
    const ClaimBound slower{1.0, kSeparateOverFused.max_noise};
    // Slower means by more than the noise; equal times in a run without noise are neither.
    const auto is_slower = [](const cachebook::ClaimResult& r) {
        return r.verdict == cachebook::Verdict::holds && r.effect > 1.0;
    };
    const auto close_slower = decide_claim(close, apart, slower);
    if (is_slower(close_slower)) return {"close", close_slower};
    const auto apart_slower = decide_claim(apart, close, slower);
    if (is_slower(apart_slower)) return {"apart", apart_slower};
    return {"neither", close_slower};
}

nlohmann::json to_json(const cachebook::ClaimResult& c) {
    return {{"verdict", cachebook::verdict_name(c.verdict)},
            {"effect", c.effect},
            {"noise", c.noise},
            {"threshold", c.threshold},
            {"margin", c.threshold > 0 ? c.effect / c.threshold - 1 : 0.0},
            {"reason", c.reason}};
}

}  // namespace ch05
