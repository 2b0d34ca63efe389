// Chapter 5's experiment, fusion and fission: how large the arrays are on this machine,
// where they lie, and the timing of each version (the thread's CPU clock).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch05 {

StreamSize choose_stream_size(std::size_t llc_bytes, std::size_t l2_bytes, std::size_t budget, std::size_t arrays) {
    constexpr std::size_t mib = std::size_t{1} << 20;
    if (llc_bytes > 0 && 2 * llc_bytes <= budget)
        return {2 * llc_bytes, "L3", fmt::format("twice the {} MiB last-level cache", llc_bytes / mib)};
    // A large LLC: the arrays streamed at once still overflow it together at the budget.
    if (llc_bytes > 0 && arrays * budget > llc_bytes)
        return {budget, "L3",
                fmt::format("{} arrays of {} MiB overflow the {} MiB last-level cache together", arrays, budget / mib,
                            llc_bytes / mib)};
    if (l2_bytes > 0 && 8 * l2_bytes <= budget)
        return {8 * l2_bytes, "L2",
                fmt::format("the {} MiB last-level cache is too large to overflow cheaply; 8x the {} MiB L2",
                            llc_bytes / mib, l2_bytes / mib)};
    return {budget, "default", "no usable cache sizes; the largest size allowed"};
}

StreamSize stream_size(std::int64_t stream_mib, bool quick, std::size_t budget, std::size_t arrays) {
    if (quick) return {std::size_t{8} << 20, "quick", "--quick: 8 MiB"};
    if (stream_mib > 0) return {static_cast<std::size_t>(stream_mib) << 20, "option", "--stream-mib"};
    const auto& machine = cachebook::machine();
    const auto l2 = machine.data_cache(2);
    const auto l3 = machine.data_cache(3);
    return choose_stream_size(l3 ? l3->size_bytes : 0, l2 ? l2->size_bytes : 0, budget, arrays);
}

StreamSize fusion_stream_size(std::int64_t stream_mib, bool quick) {
    return stream_size(stream_mib, quick, std::size_t{128} << 20, 3);  // a, b and c
}

namespace {

// b = 2a and c = 2a + 1, exactly, as both fusion versions compute them.
bool fusion_right(const double* a, const double* b, const double* c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (b[i] != a[i] * 2.0 || c[i] != a[i] * 2.0 + 1.0) return false;
    return true;
}

// One round of the two fusion versions over the same a, b, c; run -1, the warm-up, also
// checks each version's result (zeroing b and c between the two).
bool fusion_round(int r, const double* a, double* b, double* c, std::size_t n, cachebook::Timing& separate,
                  cachebook::Timing& fused) {
    bool right = true;
    time_run(
        r, [&] { separate_loops(a, b, c, n); }, separate);
    if (r < 0) {
        right = fusion_right(a, b, c, n);
        std::fill(b, b + n, 0.0);
        std::fill(c, c + n, 0.0);
    }
    time_run(
        r, [&] { fused_loop(a, b, c, n); }, fused);
    return r >= 0 || (right && fusion_right(a, b, c, n));
}

}  // namespace

FusionTimes time_fusion(std::size_t n, std::size_t fission_n, std::size_t ways, int runs, std::size_t gap_bytes,
                        std::size_t close_gap_bytes) {
    if (gap_bytes % sizeof(double) != 0 || close_gap_bytes % sizeof(double) != 0)
        throw std::invalid_argument("time_fusion: gaps must be whole doubles");
    FusionTimes t;
    t.n = n;
    t.fission_n = fission_n;
    t.fission_ways = ways;
    t.gap_bytes = gap_bytes;
    t.close_gap_bytes = close_gap_bytes;
    // One allocation: the distance between the arrays is then the program's choice, not the
    // allocator's. Both versions use the same three arrays, so their placement (cache sets,
    // pages, the low address bits loads and stores are matched by) weighs on both alike.
    const std::size_t stride = n + gap_bytes / sizeof(double);
    const std::size_t close_stride = n + close_gap_bytes / sizeof(double);
    std::vector<double> block(3 * std::max(stride, close_stride));
    double* a = block.data();
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<double>(i % 4096);
    std::vector<std::vector<double>> fa1(ways, std::vector<double>(fission_n, 1.0)), fa2 = fa1;
    std::vector<std::vector<double>> fb(ways, std::vector<double>(fission_n));
    for (std::size_t k = 0; k < ways; ++k)
        for (std::size_t i = 0; i < fission_n; ++i) fb[k][i] = static_cast<double>((i + k) % 8);
    t.cpu_share = cachebook::cpu_shares(cachebook::usable_cpus());
    // Every run times each version once, in turn: apart, close (b and c moved closer to a),
    // then the fission pair, so that what each leaves in the caches weighs on all alike.
    t.same_result = true;
    for (int r = -1; r < runs; ++r) {
        t.same_result = fusion_round(r, a, a + stride, a + 2 * stride, n, t.separate, t.fused) && t.same_result;
        if (close_gap_bytes > 0)
            t.same_result =
                fusion_round(r, a, a + close_stride, a + 2 * close_stride, n, t.separate_close, t.fused_close) &&
                t.same_result;
        time_run(
            r, [&] { one_loop_many_arrays(fa1, fb); }, t.fission_one);
        time_run(
            r, [&] { one_loop_per_array(fa2, fb); }, t.fission_split);
    }
    t.same_result = t.same_result && fa1 == fa2;
    t.cpu_share = std::min(t.cpu_share, cachebook::cpu_shares(cachebook::usable_cpus()));
    return t;
}

}  // namespace ch05
