#pragma once
// Chapter 8, the lesson: what the chapter teaches about finding the cache levels, their
// latencies and the line size by timing alone. The experiment that runs it is lab.hpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ch08 {

/// Bytes per chase node: one node per 64-byte line, so every hop touches a
/// new line and a sweep needs an eighth of the hops of one pointer per 8 bytes.
inline constexpr std::size_t kNodeBytes = 64;

/// The wrong method: sums one 8-byte word per `stride` bytes of `bytes`
/// bytes, `passes` times. The loads are independent, so they overlap and the
/// prefetcher runs ahead. Returns the sum (use it).
std::uint64_t strided_sum(const std::byte* data, std::size_t bytes, std::size_t stride, std::size_t passes);

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
std::vector<Level> levels_from(const std::vector<Cliff>& cliffs,
                               const std::vector<std::optional<std::size_t>>& reported);

/// True when `detected` is within `tolerance` (a fraction) of `reported`.
bool within(std::size_t detected, std::size_t reported, double tolerance);

// ---------------------------------------------------------------------------
// The line size.

#if defined(__x86_64__) || defined(__aarch64__)
#define CH08_CAN_FLUSH 1
/// Evicts the line holding `p` from every cache (clflush, or dc civac on AArch64).
void flush_line(const void* p);
/// Waits until the flushes before it are done.
void fence();
/// The step at which flushing a page one line at a time reaches every line in it.
std::size_t flush_step();
#endif

/// Touches per chunk in the course notes' experiment.
inline constexpr int kTouches = 4;

/// The course notes' experiment: in the chunk at `order[c] * gap + offset` of `buf`, for
/// every c, kTouches dependent loads at 0, S, 2S, 3S. Returns the carried value (use it).
std::uint64_t touch_chunks(const std::byte* buf, const std::vector<std::size_t>& order, std::size_t gap,
                           std::size_t offset, std::size_t stride, std::uint64_t carry);

#if defined(CH08_CAN_FLUSH)
/// The flush probe, untimed part: in each chunk load base and base + S, then flush base's line.
std::uint64_t load_then_flush(const std::byte* buf, const std::vector<std::size_t>& order, std::size_t gap,
                              std::size_t offset, std::size_t stride, std::uint64_t carry);
#endif
/// The flush probe, timed part: one dependent load of base + S in each chunk.
std::uint64_t probe_chunks(const std::byte* buf, const std::vector<std::size_t>& order, std::size_t gap,
                           std::size_t offset, std::size_t stride, std::uint64_t carry);

/// One stride of the line-size experiment.
struct StridePoint {
    std::size_t stride = 0;
    double ns = 0;  ///< best ns per timed load
};

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

}  // namespace ch08
