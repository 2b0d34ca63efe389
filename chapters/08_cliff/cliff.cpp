// Chapter 8, the lesson: every line of this file is on the chapter's page, in this order.
#include "cliff.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace ch08 {

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

// [snippet: smooth]
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
// [end: smooth]

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

// [snippet: levels]
std::vector<Level> levels_from(const std::vector<Cliff>& cliffs,
                               const std::vector<std::optional<std::size_t>>& reported) {
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
// [end: levels]

// [snippet: flush]
#if defined(__x86_64__)
void flush_line(const void* p) {
    asm volatile("clflush (%0)" : : "r"(p) : "memory");
}
void fence() {
    asm volatile("mfence" : : : "memory");
}
// clflush acts on 64 bytes on every x86-64 core.
std::size_t flush_step() {
    return 64;
}
#elif defined(__aarch64__)
// Clean and invalidate to the point of coherence: out of every cache, as clflush. Linux lets
// user code run it (SCTLR_EL1.UCI).
void flush_line(const void* p) {
    asm volatile("dc civac, %0" : : "r"(p) : "memory");
}
void fence() {
    asm volatile("dsb ish" : : : "memory");
}
// The smallest data-cache line of any level, from CTR_EL0.DminLine (log2 of 4-byte words), so
// that flushing a page one step at a time reaches every line in it.
std::size_t flush_step() {
    std::uint64_t ctr = 0;
    asm volatile("mrs %0, ctr_el0" : "=r"(ctr));
    return std::size_t{4} << ((ctr >> 16) & 0xF);
}
#endif

namespace {

// Every load adds the value of the load before it (always 0: the pages are
// zero), so no two loads overlap.
std::uint64_t load(const std::byte* p, std::uint64_t carry) {
    std::uint64_t v;
    std::memcpy(&v, p + carry, sizeof v);
    return v;
}

}  // namespace
// [end: flush]

// [snippet: touches]
std::uint64_t touch_chunks(const std::byte* buf, const std::vector<std::size_t>& order, std::size_t gap,
                           std::size_t offset, std::size_t stride, std::uint64_t carry) {
    for (std::size_t c = 0; c < order.size(); ++c) {
        const std::byte* base = buf + order[c] * gap + offset;
        for (int k = 0; k < kTouches; ++k) carry = load(base + static_cast<std::size_t>(k) * stride, carry);
    }
    return carry;
}
// [end: touches]

// [snippet: touch_rule]
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
// [end: touch_rule]

// [snippet: probe]
#if defined(CH08_CAN_FLUSH)
std::uint64_t load_then_flush(const std::byte* buf, const std::vector<std::size_t>& order, std::size_t gap,
                              std::size_t offset, std::size_t stride, std::uint64_t carry) {
    for (std::size_t c = 0; c < order.size(); ++c) {  // bring in base and base + S, then flush base's line
        const std::byte* base = buf + order[c] * gap + offset;
        carry = load(base + stride, load(base, carry));
        flush_line(base);
    }
    fence();
    return carry;
}
#endif

std::uint64_t probe_chunks(const std::byte* buf, const std::vector<std::size_t>& order, std::size_t gap,
                           std::size_t offset, std::size_t stride, std::uint64_t carry) {
    for (std::size_t c = 0; c < order.size(); ++c) carry = load(buf + order[c] * gap + offset + stride, carry);
    return carry;
}
// [end: probe]

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

}  // namespace ch08
