#pragma once
/// @file in_flight.hpp
/// @brief Loads in flight: several independent chases at once, spaced along one random cycle,
/// and the knee where more chases stop helping (chapter 8's second page; the machine profile).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cachebook {

/// Up to this many chases at once, every count is run (chase_counts).
inline constexpr std::size_t kMaxChases = 16;
/// The most chases chase_together follows at once: the profile goes past kMaxChases, to this, so
/// that a core keeping more than sixteen misses in flight shows its knee.
inline constexpr std::size_t kMostChases = 48;

/// Advances `chases.size()` independent chases (1 to kMostChases) by `hops` hops each, in lock
/// step: one hop of every chase, then the next. Each entry is where its chase stands, before and after.
void chase_together(std::span<const void*> chases, std::size_t hops);

/// The chase counts chapter 8's curve and the machine profile run: every count to kMaxChases,
/// then steps of eight to kMostChases, so that a core keeping more than sixteen misses in flight
/// shows where it stops gaining.
std::vector<std::size_t> chase_counts();

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
/// The same over chase counts that need not be consecutive: `ns[i]` with `counts[i]` chases,
/// counts rising from 1. Throws std::invalid_argument when empty, of unequal lengths or not from 1.
Knee knee_of(const std::vector<std::size_t>& counts, const std::vector<double>& ns, double margin = 0.1);

}  // namespace cachebook
