#include "cliff.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"

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

std::size_t nearest_size(const std::vector<std::size_t>& sizes, std::size_t want) {
    auto distance = [want](std::size_t size) {
        return std::abs(std::log(static_cast<double>(size) / static_cast<double>(want)));
    };
    std::size_t nearest = 0;
    for (std::size_t k = 1; k < sizes.size(); ++k)
        if (distance(sizes[k]) < distance(sizes[nearest])) nearest = k;
    return nearest;
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

Hops hops_for(std::size_t nodes, std::size_t timed, std::size_t max_warmup) {
    return {std::min(nodes, max_warmup), timed};
}

// [snippet: strided]
std::uint64_t strided_sum(const std::byte* data, std::size_t bytes, std::size_t stride, std::size_t passes) {
    std::uint64_t sum = 0;
    for (std::size_t p = 0; p < passes; ++p) {
        for (std::size_t off = 0; off + sizeof(std::uint64_t) <= bytes; off += stride) {
            std::uint64_t v;
            std::memcpy(&v, data + off, sizeof v);  // independent loads: they overlap
            sum += v;
        }
    }
    return sum;
}
// [end: strided]

double strided_ns_per_load(const std::byte* data, std::size_t bytes, std::size_t stride, std::size_t loads, int runs) {
    const std::size_t per_pass = (bytes - sizeof(std::uint64_t)) / stride + 1;
    const std::size_t passes = std::max<std::size_t>(1, (loads + per_pass - 1) / per_pass);
    std::uint64_t sink = 0;
    const auto t = cachebook::time_runs(runs, [&] { sink += strided_sum(data, bytes, stride, passes); });
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

// One size of a sweep: its buffer, the chase laid over it, the best times so far.
struct SweepSize {
    cachebook::PageBuffer buf;
    const void* start;
    Hops hops;
    Point best;
};

// An interleaved size warms up with two laps (at most 4 x max_warmup hops): the
// other sizes ran in between, and one lap does not refill a victim-filled L3.
SweepSize prepare(const SweepConfig& config, std::size_t k, bool interleaved) {
    const std::size_t bytes = config.sizes[k];
    const std::size_t nodes = bytes / kNodeBytes;
    Hops hops = hops_for(nodes, config.timed_hops, config.max_warmup);
    if (interleaved) hops.warmup = std::min(2 * nodes, 4 * config.max_warmup);
    cachebook::PageBuffer buf(bytes, config.pages);
    const void* start = cachebook::link_chase(buf, nodes, kNodeBytes, config.seed + k);
    Point p;
    p.bytes = bytes;
    p.chase_ns = 1e300;
    p.strided_ns = config.strided ? 1e300 : -1;
    return {std::move(buf), start, hops, p};
}

void time_size(const SweepConfig& config, SweepSize& s, int runs) {
    s.best.chase_ns =
        std::min(s.best.chase_ns, cachebook::chase_ns_per_hop(s.start, s.hops.timed, s.hops.warmup, runs));
    if (config.strided)
        s.best.strided_ns = std::min(s.best.strided_ns,
                                     strided_ns_per_load(s.buf.data(), s.buf.size(), kNodeBytes, s.hops.timed, runs));
}

}  // namespace

std::vector<Point> run_sweep(const SweepConfig& config, const std::function<void(const std::string&)>& on_step) {
    // Small sizes: all buffers at once, one run of each per pass, and the
    // larger sizes timed in between the passes. The runs of a small size are
    // then spread over the whole sweep, and a co-runner that takes part of a
    // cache for a while spoils a few runs of every size rather than all the
    // runs of a few sizes.
    std::vector<SweepSize> small;
    const std::size_t interleaved = interleaved_count(config);
    for (std::size_t k = 0; k < interleaved; ++k) small.push_back(prepare(config, k, true));
    const std::size_t large = config.sizes.size() - small.size();
    std::vector<Point> large_points;
    for (int pass = 0; pass < config.runs; ++pass) {
        for (auto& s : small) time_size(config, s, 1);
        if (on_step && !small.empty())
            on_step(fmt::format("pass {} of {} over the sizes up to {}", pass + 1, config.runs,
                                size_text(small.back().best.bytes)));
        // Large sizes, one after another, each with all its runs.
        const std::size_t upto = large * static_cast<std::size_t>(pass + 1) / static_cast<std::size_t>(config.runs);
        while (large_points.size() < upto) {
            SweepSize s = prepare(config, small.size() + large_points.size(), false);
            time_size(config, s, config.runs);
            s.best.huge_bytes = s.buf.huge_page_bytes();
            large_points.push_back(s.best);
            if (on_step) on_step(fmt::format("{} {:.1f} ns", size_text(s.best.bytes), s.best.chase_ns));
        }
    }
    std::vector<Point> curve;
    for (auto& s : small) {
        s.best.huge_bytes = s.buf.huge_page_bytes();
        curve.push_back(s.best);
    }
    curve.insert(curve.end(), large_points.begin(), large_points.end());
    return curve;
}
// [end: sweep]

// ---------------------------------------------------------------------------

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double median_of(const std::vector<double>& y, std::size_t first, std::size_t last) {
    return median(std::vector<double>(y.begin() + static_cast<std::ptrdiff_t>(first),
                                      y.begin() + static_cast<std::ptrdiff_t>(last) + 1));
}

std::vector<double> running_median(const std::vector<double>& y, int window) {
    if (window <= 1) return y;
    const auto half = static_cast<std::size_t>(window / 2);
    std::vector<double> out(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) {
        const std::size_t lo = i >= half ? i - half : 0;
        const std::size_t hi = std::min(y.size() - 1, i + half);
        // Shrink the window symmetrically at the ends, so an end point is never moved towards the inside.
        const std::size_t reach = std::min(i - lo, hi - i);
        out[i] = median_of(y, i - reach, i + reach);
    }
    return out;
}

struct Segment {
    std::size_t first = 0, last = 0;  // plateau points, inclusive
};

}  // namespace

// [snippet: detect]
namespace {

// Whether the curve stays within `tol` of point `at` for the next half octave of sizes.
bool flat_from(const std::vector<double>& y, const std::vector<std::size_t>& bytes, std::size_t at, double tol) {
    for (std::size_t m = at + 1; m < y.size() && bytes[m] <= bytes[at] * 1.4143; ++m)
        if (std::abs(y[m] - y[at]) > tol) return false;
    return true;
}

// 1. Cut the curve into plateaus. A plateau grows while each new point stays
//    within the tolerance of its median; then comes a rise, which ends at the
//    first point from which the curve stays flat for the next half octave.
std::vector<Segment> find_plateaus(const std::vector<double>& y, const std::vector<std::size_t>& bytes, double tol) {
    const std::size_t n = y.size();
    std::vector<Segment> plateaus;
    for (std::size_t i = 0; i < n;) {
        Segment s{i, i};
        while (s.last + 1 < n && y[s.last + 1] <= median_of(y, s.first, s.last) + tol) ++s.last;
        plateaus.push_back(s);
        i = s.last + 1;
        while (i < n && !flat_from(y, bytes, i, tol)) ++i;
    }
    return plateaus;
}

// The level of a plateau's last (first) half octave of sizes.
double tail_level(const std::vector<double>& y, const std::vector<std::size_t>& bytes, const Segment& s) {
    std::size_t f = s.last;
    while (f > s.first && static_cast<double>(bytes[f - 1]) * 1.4143 >= static_cast<double>(bytes[s.last])) --f;
    return median_of(y, f, s.last);
}
double head_level(const std::vector<double>& y, const std::vector<std::size_t>& bytes, const Segment& s) {
    std::size_t l = s.first;
    while (l < s.last && static_cast<double>(bytes[l + 1]) <= static_cast<double>(bytes[s.first]) * 1.4143) ++l;
    return median_of(y, s.first, l);
}

// 2. Keep the steps that are large enough; merge a plateau into the one
//    before when the step between them is too small to be a level.
//    The step is judged locally, from the last half octave before it to the
//    first half octave after, so a slow drift never adds up to a cliff.
std::vector<Segment> merge_small_steps(const std::vector<Segment>& plateaus, const std::vector<double>& y,
                                       const std::vector<std::size_t>& bytes, double min_jump) {
    std::vector<Segment> kept;
    for (const Segment& s : plateaus) {
        if (!kept.empty() && head_level(y, bytes, s) - tail_level(y, bytes, kept.back()) < std::log(min_jump)) {
            kept.back().last = s.last;
            continue;
        }
        kept.push_back(s);
    }
    return kept;
}

// 3. A step is a cliff. It starts where the curve leaves the lower plateau
//    (the last point within the tolerance of its level), and the capacity is
//    where the curve is halfway up, on a log scale, from the lower level to the
//    upper: a sharp step sits there, and a gradual one (some sets overflow
//    before others) is centred there.
Cliff cliff_between(const Segment& low, const Segment& high, const std::vector<double>& y,
                    const std::vector<std::size_t>& bytes, double tol) {
    const double low_level = median_of(y, low.first, low.last);
    const double high_level = median_of(y, high.first, high.last);
    std::size_t last_flat = low.first;
    for (std::size_t m = low.first; m < high.first; ++m)
        if (y[m] <= low_level + tol) last_flat = m;
    const double half = 0.5 * (low_level + high_level);
    std::size_t up = last_flat + 1;  // the first point at least halfway up
    while (up < high.first && y[up] < half) ++up;
    const std::size_t before = up - 1;
    const double t = y[up] > y[before] ? std::clamp((half - y[before]) / (y[up] - y[before]), 0.0, 1.0) : 1.0;
    const double log_lo = std::log(static_cast<double>(bytes[before]));
    const double log_hi = std::log(static_cast<double>(bytes[up]));
    Cliff cliff;
    cliff.last_flat = last_flat;
    cliff.first_high = high.first;
    cliff.capacity_bytes = static_cast<std::size_t>(std::llround(std::exp(log_lo + t * (log_hi - log_lo))));
    cliff.below_ns = std::exp(low_level);
    cliff.above_ns = std::exp(high_level);
    return cliff;
}

}  // namespace

std::vector<Cliff> detect_cliffs(const std::vector<std::size_t>& bytes, const std::vector<double>& ns,
                                 const DetectorOptions& options) {
    if (bytes.size() != ns.size()) throw std::invalid_argument("detect_cliffs: one latency per size");
    const std::size_t n = ns.size();
    if (n < 3) return {};
    for (double v : ns)
        if (!(v > 0)) throw std::invalid_argument("detect_cliffs: latencies must be positive");

    // Work on log latency: a cliff is a ratio, whatever the level's speed.
    std::vector<double> y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = std::log(ns[i]);
    y = running_median(y, options.smooth);  // one noisy size cannot make or hide a cliff
    const double tol = std::log1p(options.flat_tolerance);

    const std::vector<Segment> kept = merge_small_steps(find_plateaus(y, bytes, tol), y, bytes, options.min_jump);
    std::vector<Cliff> cliffs;
    for (std::size_t c = 0; c + 1 < kept.size(); ++c)
        cliffs.push_back(cliff_between(kept[c], kept[c + 1], y, bytes, tol));
    return cliffs;
}
// [end: detect]

// ---------------------------------------------------------------------------

namespace {

#if defined(__x86_64__) || defined(__aarch64__)
#define CH08_CAN_FLUSH 1
#if defined(__x86_64__)
inline void flush_line(const void* p) {
    asm volatile("clflush (%0)" : : "r"(p) : "memory");
}
inline void fence() {
    asm volatile("mfence" : : : "memory");
}
// clflush acts on 64 bytes on every x86-64 core.
inline std::size_t flush_step() {
    return 64;
}
#else
// Clean and invalidate to the point of coherence: out of every cache, as clflush. Linux lets
// user code run it (SCTLR_EL1.UCI).
inline void flush_line(const void* p) {
    asm volatile("dc civac, %0" : : "r"(p) : "memory");
}
inline void fence() {
    asm volatile("dsb ish" : : : "memory");
}
// The smallest data-cache line of any level, from CTR_EL0.DminLine (log2 of 4-byte words), so
// that flushing a page one step at a time reaches every line in it.
inline std::size_t flush_step() {
    std::uint64_t ctr = 0;
    asm volatile("mrs %0, ctr_el0" : "=r"(ctr));
    return std::size_t{4} << ((ctr >> 16) & 0xF);
}
#endif

constexpr std::size_t kPage = 4096;
constexpr std::size_t kTrialStep = 2 * kPage;  // a fresh page per trial, a page apart from the last
constexpr int kTouches = 4;

// Every load adds the value of the load before it (always 0: the pages are
// zero), so no two loads overlap.
inline std::uint64_t load(const std::byte* p, std::uint64_t carry) {
    std::uint64_t v;
    std::memcpy(&v, p + carry, sizeof v);
    return v;
}

// One trial: ns per timed load at `stride`, on the page at `offset` of every chunk, visited in `order`.
double time_trial(LineMethod method, std::byte* buf, const std::vector<std::size_t>& order, std::size_t gap,
                  std::size_t offset, std::size_t stride) {
    const std::size_t chunks = order.size();
    const std::size_t step = flush_step();
    for (std::size_t c = 0; c < chunks; ++c)  // out of every cache
        for (std::size_t b = 0; b < kPage; b += step) flush_line(buf + c * gap + offset + b);
    fence();
    std::uint64_t carry = 0;
    std::size_t loads = 0;
    double secs = 0;
    if (method == LineMethod::Touches) {
        // [snippet: touches]
        const auto start = cachebook::Clock::now();
        for (std::size_t c = 0; c < chunks; ++c) {
            const std::byte* base = buf + order[c] * gap + offset;
            for (int k = 0; k < kTouches; ++k) carry = load(base + static_cast<std::size_t>(k) * stride, carry);
        }
        secs = cachebook::seconds_since(start);
        loads = chunks * kTouches;
        // [end: touches]
    } else {
        // [snippet: probe]
        for (std::size_t c = 0; c < chunks; ++c) {  // bring in base and base + S, then flush base's line
            const std::byte* base = buf + order[c] * gap + offset;
            carry = load(base + stride, load(base, carry));
            flush_line(base);
        }
        fence();
        const auto start = cachebook::Clock::now();
        for (std::size_t c = 0; c < chunks; ++c) carry = load(buf + order[c] * gap + offset + stride, carry);
        secs = cachebook::seconds_since(start);
        loads = chunks;
        // [end: probe]
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

std::optional<std::size_t> line_size_from_touches(const std::vector<StridePoint>& points, double plateau_fraction,
                                                  double rise_fraction) {
    if (points.size() < 4) return std::nullopt;
    std::vector<double> top;
    for (std::size_t i = points.size() - 3; i < points.size(); ++i) top.push_back(points[i].ns);
    const double plateau = median(top);
    if (!(plateau > 0) || points.front().ns >= rise_fraction * plateau) return std::nullopt;
    for (const StridePoint& p : points)
        if (p.ns >= plateau_fraction * plateau) return p.stride;
    return std::nullopt;
}

// [snippet: probe_rule]
std::optional<std::size_t> line_size_from_probe(const std::vector<StridePoint>& points, double min_ratio) {
    if (points.size() < 2) return std::nullopt;
    double lo = points.front().ns, hi = points.front().ns;
    for (const auto& p : points) lo = std::min(lo, p.ns), hi = std::max(hi, p.ns);
    if (!(lo > 0) || hi < min_ratio * lo) return std::nullopt;
    const double cut = std::sqrt(lo * hi);
    if (points.front().ns <= cut) return std::nullopt;  // even the smallest stride hits: no line boundary seen
    // The first stride from which every larger one is cheap: base + S lies on another line.
    std::optional<std::size_t> line;
    for (std::size_t i = points.size(); i-- > 0;) {
        if (points[i].ns > cut) break;
        line = points[i].stride;
    }
    return line;
}
// [end: probe_rule]

// ---------------------------------------------------------------------------

std::vector<Level> levels_from(const std::vector<Cliff>& cliffs, const std::vector<Point>& curve,
                               const std::vector<std::optional<std::size_t>>& reported) {
    (void)curve;
    static const char* const kNames[] = {"L1d", "L2", "L3"};
    std::vector<Level> levels;
    for (std::size_t k = 0; k < 3; ++k) {
        Level l;
        l.name = kNames[k];
        if (k < cliffs.size()) {
            l.detected = cliffs[k].capacity_bytes;
            l.latency_ns = cliffs[k].below_ns;
        }
        if (k < reported.size()) l.reported = reported[k];
        if (l.detected && l.reported && *l.reported > 0)
            l.difference_pct = (static_cast<double>(*l.detected) - static_cast<double>(*l.reported)) /
                               static_cast<double>(*l.reported) * 100.0;
        levels.push_back(l);
    }
    return levels;
}

bool within(std::size_t detected, std::size_t reported, double tolerance) {
    if (reported == 0) return false;
    return std::abs(static_cast<double>(detected) - static_cast<double>(reported)) <=
           tolerance * static_cast<double>(reported);
}

nlohmann::json to_json(const Point& p) {
    nlohmann::json j = {{"bytes", p.bytes}, {"chase_ns", p.chase_ns}, {"huge_bytes", p.huge_bytes}};
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

namespace {
template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
    nlohmann::json j;
    if (v.has_value()) j = v.value();
    return j;
}
}  // namespace

nlohmann::json to_json(const Level& l) {
    return {{"name", l.name},
            {"detected_bytes", or_null(l.detected)},
            {"latency_ns", or_null(l.latency_ns)},
            {"reported_bytes", or_null(l.reported)},
            {"difference_pct", or_null(l.difference_pct)}};
}

}  // namespace ch08
