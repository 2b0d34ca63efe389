#pragma once
/// @file miss_kinds.hpp
/// @brief Why a miss happens (compulsory, capacity, conflict) and the fewest misses any policy could have.
///
/// The three kinds follow Hennessy and Patterson. A compulsory miss is the first
/// touch of a line: no cache avoids it. A capacity miss is one that a fully
/// associative LRU cache of the same number of lines also takes, beyond the
/// compulsory ones: the cache is too small for the walk. A conflict miss is one
/// the real cache takes and that fully associative cache does not: too many lines
/// fell into one set. The split compares two different caches, so the conflict
/// count can be negative: LRU in one big set can do worse than in several small ones.
///
/// optimal_misses() is Belady's optimal replacement (OPT, also called MIN): it
/// knows the whole trace in advance and, on a miss in a full set, gives up the
/// line whose next use lies farthest ahead. No replacement policy that fetches
/// only on a miss does better, so it bounds what any policy could gain.

#include <cstdint>
#include <span>
#include <vector>

#include "cachebook/cache.hpp"

namespace cachebook {

// [snippet: miss_kinds_api]
/// The three-kind split of one cache's misses.
struct MissKinds {
    std::uint64_t misses = 0;      ///< this cache's misses
    std::uint64_t compulsory = 0;  ///< distinct lines touched
    std::int64_t capacity = 0;     ///< misses of a fully associative LRU cache with as many lines, minus compulsory
    std::int64_t conflict = 0;     ///< this cache's misses minus the fully associative one's; may be < 0
    friend bool operator==(const MissKinds&, const MissKinds&) = default;
};

/// Runs `addresses` (byte addresses, in order) through a cache of `config`
/// and through a fully associative LRU cache with as many lines, and splits
/// the first one's misses into the three kinds.
MissKinds classify_misses(const CacheConfig& config, std::span<const std::uint64_t> addresses);

/// Splits `misses`, counted by some other means (OPT, a hierarchy's first
/// level), into the three kinds for a cache of `config`'s geometry.
MissKinds split_misses(std::uint64_t misses, const CacheConfig& config, std::span<const std::uint64_t> addresses);

/// The misses of Belady's optimal replacement on `config`'s geometry
/// (config.policy is not used): per set, a miss in a full set evicts the line
/// whose next use is farthest away, a line never used again being the farthest.
std::uint64_t optimal_misses(const CacheConfig& config, std::span<const std::uint64_t> addresses);

/// OPT's hits, misses, evictions and dirty evictions; access i writes when
/// writes[i] is true (an empty `writes`: no access writes). Write-allocate,
/// as Cache is: a write that misses fills the line.
Counts optimal_counts(const CacheConfig& config, std::span<const std::uint64_t> addresses,
                      const std::vector<bool>& writes = {});
// [end: miss_kinds_api]

}  // namespace cachebook
