#pragma once
// Chapter 8, the lesson of its second page: loads in flight (several independent chases at
// once) and what the memory mountain says. The experiment that runs it is lab_bandwidth.cpp.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ch08 {

/// The most chases chase_together follows at once.
inline constexpr std::size_t kMaxChases = 16;

/// Advances `chases.size()` independent chases (1 to kMaxChases) by `hops` hops each, in lock
/// step: one hop of every chase, then the next. Each entry is where its chase stands, before and after.
void chase_together(std::span<const void*> chases, std::size_t hops);

/// The nodes of the single cycle `next` in the order a chase from node 0 visits them.
std::vector<std::uint32_t> cycle_order(const std::vector<std::uint32_t>& next);

/// `k` nodes evenly spaced along a cycle given by cycle_order, n / k hops apart from its node at
/// position `from`: k chases that start there walk k different stretches of the cycle.
std::vector<std::uint32_t> spaced_starts(const std::vector<std::uint32_t>& order, std::size_t k, std::size_t from = 0);

/// Where more chases stop helping.
struct Knee {
    std::size_t k = 0;     ///< the fewest chases whose time per access is within the margin of the best
    double best_ns = 0;    ///< the lowest ns per access over every k
    double in_flight = 0;  ///< ns per access of one chase over best_ns: the loads the core overlaps
};

/// The knee of `ns_by_k` (entry k - 1: ns per access with k chases): the smallest k whose time
/// per access is at most (1 + `margin`) x the lowest. Throws std::invalid_argument when empty.
Knee knee_of(const std::vector<double>& ns_by_k, double margin = 0.1);

/// The bytes that move for a read of `useful_gbs` GB/s at `stride_words` 8-byte words: every
/// line is read up to a stride of a line, then one line per word read.
double line_traffic_gbs(double useful_gbs, std::size_t stride_words, std::size_t line_bytes = 64);

/// The prefetcher's reach in a row of the mountain (one working set, the strides ascending):
/// the largest stride whose line traffic is at least `fraction` of the traffic at the first
/// stride, with every smaller stride also there. Returns that stride in words.
std::size_t prefetch_reach(const std::vector<std::size_t>& strides, const std::vector<double>& gbs,
                           double fraction = 0.8, std::size_t line_bytes = 64);

}  // namespace ch08
