// Chapter 8, the lab: the sweeps, the line-size trials and the run's bookkeeping, around the
// lesson of cliff.cpp.
#include "lab.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>

namespace ch08 {

using cachebook::size_text;

std::vector<std::size_t> sweep_sizes(std::size_t min_bytes, std::size_t max_bytes, int steps_per_octave,
                                     std::size_t node_bytes) {
    if (steps_per_octave < 1) throw std::invalid_argument("sweep_sizes: at least one step per octave");
    if (node_bytes == 0 || min_bytes < node_bytes || max_bytes < min_bytes)
        throw std::invalid_argument(
            fmt::format("sweep_sizes: bad range {}..{} for {}-byte nodes", min_bytes, max_bytes, node_bytes));
    std::vector<std::size_t> sizes;
    const double octaves = std::log2(static_cast<double>(max_bytes) / static_cast<double>(min_bytes));
    const auto steps = static_cast<int>(std::floor(octaves * steps_per_octave + 1e-9));
    for (int k = 0; k <= steps; ++k) {
        const double exact = static_cast<double>(min_bytes) * std::exp2(static_cast<double>(k) / steps_per_octave);
        auto s = static_cast<std::size_t>(std::llround(exact / static_cast<double>(node_bytes))) * node_bytes;
        s = std::clamp(s, min_bytes, max_bytes);
        if (sizes.empty() || s > sizes.back()) sizes.push_back(s);
    }
    if (sizes.back() != max_bytes) sizes.push_back(max_bytes / node_bytes * node_bytes);
    return sizes;
}

UpperBound sweep_upper_bound(std::optional<std::size_t> llc_bytes, std::size_t floor_bytes, std::size_t cap_bytes) {
    if (!llc_bytes || *llc_bytes == 0)
        return {cap_bytes, fmt::format("no last-level cache reported; sweeping to {}", size_text(cap_bytes))};
    const std::size_t want = 4 * *llc_bytes;
    if (want > cap_bytes)
        return {cap_bytes, fmt::format("4 x the reported last-level cache ({}) would be {}; capped at {}, where "
                                       "the curve is main memory already and each size costs a tenth of a second",
                                       size_text(*llc_bytes), size_text(want), size_text(cap_bytes))};
    if (want < floor_bytes)
        return {floor_bytes, fmt::format("4 x the reported last-level cache ({}) is below the floor of {}",
                                         size_text(*llc_bytes), size_text(floor_bytes))};
    return {want, fmt::format("4 x the reported last-level cache ({})", size_text(*llc_bytes))};
}

std::size_t nearest_size(const std::vector<std::size_t>& sizes, std::size_t want) {
    auto distance = [want](std::size_t size) {
        return std::abs(std::log(static_cast<double>(size) / static_cast<double>(want)));
    };
    std::size_t nearest = 0;
    for (std::size_t k = 1; k < sizes.size(); ++k)
        if (distance(sizes[k]) < distance(sizes[nearest])) nearest = k;
    return nearest;
}

Hops hops_for(std::size_t nodes, std::size_t timed, std::size_t max_warmup) {
    return {std::min(nodes, max_warmup), timed};
}

double strided_ns_per_load(const std::byte* data, std::size_t bytes, std::size_t stride, std::size_t loads, int runs,
                           int warmup) {
    const std::size_t per_pass = (bytes - sizeof(std::uint64_t)) / stride + 1;
    const std::size_t passes = std::max<std::size_t>(1, (loads + per_pass - 1) / per_pass);
    std::uint64_t sink = 0;
    const auto t = cachebook::time_runs(
        runs, [&] { sink += strided_sum(data, bytes, stride, passes); }, warmup);
    cachebook::do_not_optimize(sink);
    return t.min() / static_cast<double>(per_pass * passes) * 1e9;
}

// [snippet: sweep]
namespace {

// The sizes a sweep interleaves: the leading ones up to interleave_max_bytes.
std::size_t interleaved_count(const SweepConfig& config) {
    if (!std::is_sorted(config.sizes.begin(), config.sizes.end()))
        throw std::invalid_argument("run_sweep: sizes must be in ascending order");
    if (config.runs < 1) throw std::invalid_argument("run_sweep: at least one run");
    std::size_t n = 0;
    while (n < config.sizes.size() && config.sizes[n] <= config.interleave_max_bytes) ++n;
    return n;
}

}  // namespace

std::size_t sweep_steps(const SweepConfig& config) {
    const std::size_t small = interleaved_count(config);
    return (small > 0 ? static_cast<std::size_t>(config.runs) : 0) + (config.sizes.size() - small);
}

std::size_t sweep_peak_bytes(const SweepConfig& config) {
    constexpr std::size_t huge = std::size_t{2} << 20;
    std::size_t together = 0, largest = 0;
    for (std::size_t b : config.sizes) {
        if (b <= config.interleave_max_bytes)
            together += (b + huge - 1) / huge * huge;
        else
            largest = std::max(largest, b);
    }
    return together + largest;
}

namespace {

// One size of a sweep: its bytes (the start of a buffer), the chase laid over them, the best times so far.
struct SweepSize {
    const std::byte* data;
    const void* start;
    Hops hops;
    Point best;
};

// Lays size k's chase over the start of `buf`. An interleaved size warms up with two laps (at most
// 4 x max_warmup hops): the other sizes ran in between, and one lap does not refill a victim-filled L3.
SweepSize prepare(const SweepConfig& config, std::size_t k, bool interleaved, const cachebook::PageBuffer& buf) {
    const std::size_t bytes = config.sizes[k];
    const std::size_t nodes = bytes / kNodeBytes;
    Hops hops = hops_for(nodes, config.timed_hops, config.max_warmup);
    if (interleaved) hops.warmup = std::min(2 * nodes, 4 * config.max_warmup);
    const void* start = cachebook::link_chase(buf, nodes, kNodeBytes, config.seed + k);
    Point p;
    p.bytes = bytes;
    p.chase_ns = 1e300;
    p.strided_ns = config.strided ? 1e300 : -1;
    return {buf.data(), start, hops, p};
}

// One run of an interleaved size, from the start of its cycle.
void time_size(const SweepConfig& config, SweepSize& s) {
    s.best.chase_ns = std::min(s.best.chase_ns, cachebook::chase_ns_per_hop(s.start, s.hops.timed, s.hops.warmup, 1));
    if (config.strided)
        s.best.strided_ns =
            std::min(s.best.strided_ns, strided_ns_per_load(s.data, s.best.bytes, kNodeBytes, s.hops.timed, 1));
    ++s.best.runs;
}

// A larger size, its runs back to back along the cycle until its best has settled: at least
// kMinSettledRuns runs, and the last kHeldRuns lowered neither best by 1 % (at most config.runs).
void time_size_until_settled(const SweepConfig& config, SweepSize& s) {
    const void* at = s.start;
    int held = 0;
    while (s.best.runs < config.runs && (s.best.runs < kMinSettledRuns || held < kHeldRuns)) {
        const double chase = cachebook::chase_run_ns(at, s.hops.timed, s.hops.warmup);
        const double strided = config.strided ? strided_ns_per_load(s.data, s.best.bytes, kNodeBytes, s.hops.timed, 1,
                                                                    s.best.runs == 0 ? 1 : 0)
                                              : s.best.strided_ns;
        const bool lowered = chase < 0.99 * s.best.chase_ns || (config.strided && strided < 0.99 * s.best.strided_ns);
        held = lowered ? 0 : held + 1;
        s.best.chase_ns = std::min(s.best.chase_ns, chase);
        s.best.strided_ns = std::min(s.best.strided_ns, strided);
        ++s.best.runs;
    }
}

}  // namespace

std::vector<Point> run_sweep(const SweepConfig& config, const std::function<void(const std::string&)>& on_step) {
    // Small sizes: all buffers at once, one run of each per pass, and the
    // larger sizes timed in between the passes. The runs of a small size are
    // then spread over the whole sweep, and a co-runner that takes part of a
    // cache for a while spoils a few runs of every size rather than all the
    // runs of a few sizes.
    const std::size_t interleaved = interleaved_count(config);
    std::vector<cachebook::PageBuffer> buffers;  // a buffer for each small size: all are chased in every pass
    std::vector<SweepSize> small;
    for (std::size_t k = 0; k < interleaved; ++k) {
        buffers.emplace_back(config.sizes[k], config.pages);
        small.push_back(prepare(config, k, true, buffers.back()));
    }
    // The larger sizes, timed one at a time, share one buffer of the largest: each lays its chase
    // over the start of it. Its pages are faulted in once, not once a size, which would cost more
    // than timing the size.
    const std::size_t large = config.sizes.size() - small.size();
    std::optional<cachebook::PageBuffer> large_buffer;
    if (large > 0) large_buffer.emplace(config.sizes.back(), config.pages);
    std::vector<Point> large_points;
    for (int pass = 0; pass < config.runs; ++pass) {
        for (auto& s : small) time_size(config, s);
        if (on_step && !small.empty())
            on_step(fmt::format("pass {} of {} over the sizes up to {}", pass + 1, config.runs,
                                size_text(small.back().best.bytes)));
        // Large sizes, one after another, each with its runs.
        const std::size_t upto = large * static_cast<std::size_t>(pass + 1) / static_cast<std::size_t>(config.runs);
        while (large_points.size() < upto) {
            SweepSize s = prepare(config, small.size() + large_points.size(), false, *large_buffer);
            time_size_until_settled(config, s);
            s.best.huge_bytes = cachebook::huge_page_bytes(s.data, s.best.bytes);
            large_points.push_back(s.best);
            if (on_step)
                on_step(fmt::format("{} {:.1f} ns, {} runs", size_text(s.best.bytes), s.best.chase_ns, s.best.runs));
        }
    }
    std::vector<Point> curve;
    for (auto& s : small) {
        s.best.huge_bytes = cachebook::huge_page_bytes(s.data, s.best.bytes);
        curve.push_back(s.best);
    }
    curve.insert(curve.end(), large_points.begin(), large_points.end());
    return curve;
}
// [end: sweep]

// ---------------------------------------------------------------------------

namespace {

#if defined(CH08_CAN_FLUSH)
constexpr std::size_t kPage = 4096;
constexpr std::size_t kTrialStep = 2 * kPage;  // a fresh page per trial, a page apart from the last

// One trial: ns per timed load at `stride`, on the page at `offset` of every chunk, visited in `order`.
double time_trial(LineMethod method, std::byte* buf, const std::vector<std::size_t>& order, std::size_t gap,
                  std::size_t offset, std::size_t stride) {
    const std::size_t chunks = order.size();
    const std::size_t step = flush_step();
    for (std::size_t c = 0; c < chunks; ++c)  // out of every cache
        for (std::size_t b = 0; b < kPage; b += step) flush_line(buf + c * gap + offset + b);
    fence();
    std::uint64_t carry = 0;
    std::size_t loads = chunks;
    double secs = 0;
    if (method == LineMethod::Touches) {
        const auto start = cachebook::Clock::now();
        carry = touch_chunks(buf, order, gap, offset, stride, carry);
        secs = cachebook::seconds_since(start);
        loads = chunks * kTouches;
    } else {
        carry = load_then_flush(buf, order, gap, offset, stride, carry);
        const auto start = cachebook::Clock::now();
        carry = probe_chunks(buf, order, gap, offset, stride, carry);
        secs = cachebook::seconds_since(start);
    }
    cachebook::do_not_optimize(carry);
    return secs / static_cast<double>(loads) * 1e9;
}
#endif

}  // namespace

LineSizeResult measure_line_size(LineMethod method, const std::vector<std::size_t>& strides, std::size_t chunks,
                                 std::size_t gap, int runs, std::uint64_t seed) {
    LineSizeResult result;
    result.method = method;
#if defined(CH08_CAN_FLUSH)
    const std::size_t trials = strides.size() * static_cast<std::size_t>(runs);
    if (chunks < 2 || runs < 1 || strides.empty() || trials * kTrialStep > gap)
        throw std::invalid_argument("measure_line_size: the chunks' gap must hold a fresh page for every trial");
    for (std::size_t s : strides)
        if (s < sizeof(std::uint64_t) || s % sizeof(std::uint64_t) != 0 || (kTouches - 1) * s + 8 > kPage)
            throw std::invalid_argument(fmt::format("measure_line_size: stride {} does not fit one page", s));

    // Address space only; a page is faulted in (zeroed) only where a trial will read.
    const std::size_t total = chunks * gap;
    void* m = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        throw std::runtime_error(fmt::format("mmap of {} bytes failed: {}", total, std::strerror(errno)));
    auto* buf = static_cast<std::byte*>(m);
    (void)madvise(buf, total, MADV_NOHUGEPAGE);  // 4 KiB pages, so a trial's page is its own
    for (std::size_t c = 0; c < chunks; ++c)
        for (std::size_t t = 0; t < trials; ++t) buf[c * gap + t * kTrialStep] = std::byte{0};

    std::vector<std::size_t> order(chunks);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::uint64_t state = seed;
    std::vector<double> best(strides.size(), 1e300);
    std::size_t trial = 0;
    for (int r = 0; r < runs; ++r) {
        for (std::size_t si = 0; si < strides.size(); ++si, ++trial) {
            for (std::size_t i = chunks; i-- > 1;)  // a new random chunk order for every trial
                std::swap(order[i], order[cachebook::uniform_below(state, i + 1)]);
            best[si] = std::min(best[si], time_trial(method, buf, order, gap, trial * kTrialStep, strides[si]));
        }
    }
    munmap(m, total);
    result.measured = true;
    for (std::size_t si = 0; si < strides.size(); ++si) result.points.push_back({strides[si], best[si]});
    result.line_bytes =
        method == LineMethod::Touches ? line_size_from_touches(result.points) : line_size_from_probe(result.points);
#else
    (void)method, (void)strides, (void)chunks, (void)gap, (void)runs, (void)seed;
#endif
    return result;
}

nlohmann::json to_json(const Point& p) {
    nlohmann::json j = {{"bytes", p.bytes}, {"chase_ns", p.chase_ns}, {"huge_bytes", p.huge_bytes}, {"runs", p.runs}};
    if (p.strided_ns >= 0) j["strided_ns"] = p.strided_ns;
    return j;
}

nlohmann::json to_json(const Cliff& c) {
    return {{"last_flat", c.last_flat},
            {"first_high", c.first_high},
            {"capacity_bytes", c.capacity_bytes},
            {"below_ns", c.below_ns},
            {"above_ns", c.above_ns}};
}

}  // namespace ch08
