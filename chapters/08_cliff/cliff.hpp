#pragma once
// Chapter 8: find the cache levels, their latencies and the line size by timing alone.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/chase.hpp"

namespace ch08 {

using cachebook::PageSize;

/// Bytes per chase node: one node per 64-byte line, so every hop touches a
/// new line and a sweep needs an eighth of the hops of one pointer per 8 bytes.
inline constexpr std::size_t kNodeBytes = 64;

/// Working-set sizes from `min_bytes` to `max_bytes` (both included), spaced
/// evenly on a log scale with `steps_per_octave` steps per doubling, each
/// rounded to a multiple of `node_bytes`, without repeats.
std::vector<std::size_t> sweep_sizes(std::size_t min_bytes, std::size_t max_bytes, int steps_per_octave,
                                     std::size_t node_bytes = kNodeBytes);

/// The index of the size in `sizes` nearest `want` on a log scale (the first of equals).
std::size_t nearest_size(const std::vector<std::size_t>& sizes, std::size_t want);

/// The largest working set of a sweep, and why.
struct UpperBound {
    std::size_t bytes = 0;
    std::string why;
};
/// Four times the last-level cache sysfs reports (to see well past it), but at
/// least `floor_bytes` and at most `cap_bytes`: a VM may report a whole
/// socket's L3 (hundreds of MiB) and the curve is flat DRAM long before that.
/// Without a reported cache, `cap_bytes`.
UpperBound sweep_upper_bound(std::optional<std::size_t> llc_bytes, std::size_t floor_bytes, std::size_t cap_bytes);

/// How many hops to time, and to run untimed first, for a working set of `nodes` nodes.
struct Hops {
    std::size_t warmup = 0;
    std::size_t timed = 0;
};
/// A full lap of warm-up (so a set that fits is resident) up to `max_warmup`;
/// `timed` hops, the same for every size so each size costs about its latency times `timed`.
Hops hops_for(std::size_t nodes, std::size_t timed, std::size_t max_warmup);

/// One size of a sweep.
struct Point {
    std::size_t bytes = 0;
    double chase_ns = 0;         ///< best ns per dependent hop
    double strided_ns = -1;      ///< best ns per load of the strided sum (< 0: not measured)
    std::size_t huge_bytes = 0;  ///< bytes of the buffer the kernel backed with huge pages
};

struct SweepConfig {
    std::vector<std::size_t> sizes;
    PageSize pages = PageSize::Small;
    std::size_t timed_hops = std::size_t{1} << 19;
    std::size_t max_warmup = std::size_t{1} << 20;
    int runs = 5;
    std::uint64_t seed = 1;
    bool strided = false;  ///< also time the strided sum on the same buffer
    /// Sizes up to this many bytes are timed in interleaved passes (every
    /// pass visits each of them once), so the runs of one size are spread over
    /// the whole sweep rather than taken back to back; larger sizes are timed
    /// one after another, each with all its runs, between the passes. 0: none
    /// interleaved.
    /// An interleaved run warms up with two laps (at most 4 x max_warmup
    /// hops): the other sizes ran in between, and one lap does not bring a
    /// working set back into a victim-filled L3.
    std::size_t interleave_max_bytes = std::size_t{4} << 20;
};

/// How many times run_sweep calls its `on_step`: once per interleaved pass
/// and once per larger size.
std::size_t sweep_steps(const SweepConfig& config);

/// The most memory run_sweep holds at once: the interleaved buffers together
/// (each rounded up to a 2 MiB huge page) and the largest other size.
std::size_t sweep_peak_bytes(const SweepConfig& config);

/// Times a dependent chase (and, if asked, the strided sum) at every size,
/// best of `runs`. `on_step` is called after each pass over the interleaved
/// sizes and after each larger size, with a line saying what was done.
std::vector<Point> run_sweep(const SweepConfig& config, const std::function<void(const std::string&)>& on_step = {});

/// The wrong method: sums one 8-byte word per `stride` bytes of `bytes`
/// bytes, `passes` times. The loads are independent, so they overlap and the
/// prefetcher runs ahead. Returns the sum (use it).
std::uint64_t strided_sum(const std::byte* data, std::size_t bytes, std::size_t stride, std::size_t passes);

/// Best-of-`runs` ns per load of strided_sum over at least `loads` loads.
double strided_ns_per_load(const std::byte* data, std::size_t bytes, std::size_t stride, std::size_t loads, int runs);

// ---------------------------------------------------------------------------
// Finding the cliffs.

/// A step up in a latency curve.
struct Cliff {
    std::size_t last_flat = 0;       ///< index of the last point of the plateau below the step
    std::size_t first_high = 0;      ///< index of the first point of the plateau above
    std::size_t capacity_bytes = 0;  ///< where the curve is halfway up (log scale): the lower level's size
    double below_ns = 0;             ///< latency of the plateau below (its median)
    double above_ns = 0;             ///< latency of the plateau above (its median)
};

struct DetectorOptions {
    double min_jump = 1.5;         ///< a step must raise the latency by at least this factor
    double flat_tolerance = 0.15;  ///< a point belongs to a plateau while within this fraction of its level
    int smooth = 3;                ///< running-median window (odd; 1 = none)
};

/// Finds the steps of a latency curve (sizes ascending, ns per access).
/// Returns them in size order; an empty list when there is none.
std::vector<Cliff> detect_cliffs(const std::vector<std::size_t>& bytes, const std::vector<double>& ns,
                                 const DetectorOptions& options = {});

// ---------------------------------------------------------------------------
// The line size.

/// One stride of the line-size experiment.
struct StridePoint {
    std::size_t stride = 0;
    double ns = 0;  ///< best ns per timed load
};

/// The two ways of asking for the line size.
enum class LineMethod {
    /// The course notes' experiment as written: in each chunk, 4 dependent touches at 0, S, 2S, 3S
    /// (ascending) on lines flushed from every cache; ns per touch. Prefetchers
    /// that fetch the next lines on a miss make strides past the line look cheap.
    Touches,
    /// In each chunk, load base and base + S, flush the line of base (clflush
    /// or dc civac acts on exactly one line), then time one dependent load of base + S:
    /// a miss while S is inside base's line, a hit once S reaches the next line.
    FlushProbe,
};

struct LineSizeResult {
    bool measured = false;  ///< false where lines cannot be flushed (neither x86-64 nor 64-bit ARM)
    LineMethod method = LineMethod::Touches;
    std::vector<StridePoint> points;
    std::optional<std::size_t> line_bytes;  ///< nullopt: no clear step
};

/// The stride-doubling experiment: `chunks` chunks `gap` bytes apart, visited
/// in a new random order for every trial, each trial on fresh pages. Best of
/// `runs` per stride; the strides are interleaved across runs.
LineSizeResult measure_line_size(LineMethod method, const std::vector<std::size_t>& strides, std::size_t chunks,
                                 std::size_t gap, int runs, std::uint64_t seed);

/// Touches: the smallest stride from which the cost per touch stops growing:
/// the first stride whose cost reaches `plateau_fraction` of the median of the
/// largest three. nullopt when the smallest stride is not clearly cheaper
/// (below `rise_fraction` of that plateau): no step to see.
std::optional<std::size_t> line_size_from_touches(const std::vector<StridePoint>& points,
                                                  double plateau_fraction = 0.85, double rise_fraction = 0.7);

/// FlushProbe: the smallest stride from which every larger stride is cheap
/// (at most the geometric mean of the dearest and the cheapest). nullopt when
/// the dearest is not at least `min_ratio` times the cheapest, or the
/// smallest stride is already cheap: no step to see.
std::optional<std::size_t> line_size_from_probe(const std::vector<StridePoint>& points, double min_ratio = 1.5);

// ---------------------------------------------------------------------------
// The levels, side by side with what the system reports.

struct Level {
    std::string name;                      ///< "L1d", "L2", "L3"
    std::optional<std::size_t> detected;   ///< capacity from the curve, or nullopt (not found)
    std::optional<double> latency_ns;      ///< plateau latency of this level
    std::optional<std::size_t> reported;   ///< sysfs size, or nullopt
    std::optional<double> difference_pct;  ///< (detected - reported) / reported * 100
};

/// Assigns cliffs to L1d, L2, L3 in size order (the k-th cliff is the end of
/// level k) and pairs them with the sizes sysfs reports (`reported[k]` for level k+1).
std::vector<Level> levels_from(const std::vector<Cliff>& cliffs, const std::vector<Point>& curve,
                               const std::vector<std::optional<std::size_t>>& reported);

/// True when `detected` is within `tolerance` (a fraction) of `reported`.
bool within(std::size_t detected, std::size_t reported, double tolerance);

nlohmann::json to_json(const Point& p);
nlohmann::json to_json(const Cliff& c);
nlohmann::json to_json(const Level& l);

}  // namespace ch08
