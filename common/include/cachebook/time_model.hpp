#pragma once
/// @file time_model.hpp
/// @brief A time for a walk, from the lines each level serves (the cache model's counts) and
/// what this machine's profile measured of each level (profile.hpp): latency, bandwidth and the
/// loads the core keeps in flight. Nothing in it is fitted to the walk it prices.
///
/// - A dependent load (its address is the value of the one before) waits for the whole latency
///   of the level that serves it: the loads add up, as AMAT says.
/// - Independent loads overlap: a level serving them costs the larger of its traffic over its
///   bandwidth and its latency over the loads in flight (12 loads in flight at 36 ns: 3 ns a load).
/// - Loads in a stream the prefetcher follows (in address order) are fetched before they are
///   asked for: a level serving them costs its traffic over its bandwidth, as ECM prices streams.
/// - The levels, and the core's own work, either overlap (the time is the largest of them) or
///   add (the time is their sum): the Execution-Cache-Memory model of Hofmann, Hager, Wellein et
///   al. asks which, per machine. Both are here, and a page compares both with measurement.

#include <cstddef>
#include <string>
#include <vector>

#include "cachebook/hierarchy.hpp"

namespace cachebook {

/// One level as the profile measured it.
struct LevelPrice {
    std::string name;       ///< "L1", "L2", "L3", "memory"
    double latency_ns = 0;  ///< one dependent load served here
    double gbs = 0;         ///< bytes a ns (GB/s) it delivers to a stream of loads
    double in_flight = 1;   ///< loads the core keeps in flight to it (the k-chase knee), at least 1
    /// L1 only: ns between two lines brought into one set (0: not priced). Misses to the set of
    /// the miss before wait for it, however many loads the core keeps in flight elsewhere.
    double set_refill_ns = 0;
};

/// What a walk asks of one level: the loads it serves and the bytes they bring to the core.
struct LevelTraffic {
    double loads = 0;
    double bytes = 0;
    double same_set_misses = 0;  ///< L1 only: its misses to the set of the miss before
};

/// What the core's own work costs: one add of a dependency chain (each waits for the one
/// before), as the profile measured it. A chain of adds runs at one add a latency however many
/// ports the core has, so a loop whose loads are fast waits for its chain.
struct CorePrice {
    double int_add_ns = 0;  ///< an integer add (scalar or SSE2 paddq: one cycle on x86-64 cores alike)
    double fp_add_ns = 0;   ///< a double add (addsd), never reordered without -ffast-math
};

/// The core's work of a loop, read from its compiled code: the adds in the loop's one dependency
/// chain, per load of the walk (the sum's accumulator). A vectorised sum with one accumulator of
/// four ints in two paddq has 0.5 a load; a scalar sum 1; a loop with no chain across iterations 0.
struct InCore {
    double int_adds = 0;
    double fp_adds = 0;
};

/// The core's time for `loads` loads of a loop with `in_core` chained adds a load.
double core_ns(const CorePrice& price, const InCore& in_core, double loads);

/// How the levels' times combine.
enum class Combine { overlapped, added };

/// The model's input: a level's traffic for each priced level (same order), the loads' kind, the core's work.
struct Work {
    std::vector<LevelTraffic> levels;
    bool dependent = false;   ///< each load's address comes from the one before it
    bool prefetched = false;  ///< the loads walk memory in address order: the prefetcher runs ahead
    double core_ns = 0;       ///< the core's own work that is not a load (0: none priced)
};

/// One level's share of the time.
struct LevelTime {
    double bandwidth_ns = 0;  ///< bytes / bandwidth (independent loads only)
    double latency_ns = 0;    ///< loads x latency, over the loads in flight when independent
    double refill_ns = 0;     ///< L1: same-set misses x the set's refill time (independent loads only)
    [[nodiscard]] double ns() const;
};

/// The model's answer.
struct Prediction {
    double ns = 0;
    std::string bottleneck;  ///< "latency-bound in L3", "bandwidth-bound in memory", "refill-bound in L1", "core-bound"
    std::vector<LevelTime> levels;
};

/// The time of `work` on a machine priced by `levels` (one LevelPrice per entry of work.levels).
/// Dependent loads add their latencies whatever `combine` says: one waits for the other.
Prediction predict(const std::vector<LevelPrice>& levels, const Work& work, Combine combine);

/// The traffic of a walk from the hierarchy's counts (`counts[k]` for level k of `levels`, the
/// last entry of `levels` being memory): L1 serves the loads that hit it, and all `loads` x
/// `bytes_per_load` bytes pass its ports, and refills a set for each same-set miss; a lower level
/// serves the lines that hit it, memory the misses of the last cache, `line_bytes` each.
std::vector<LevelTraffic> traffic_of(const std::vector<LevelCounts>& counts, double bytes_per_load, double line_bytes);

/// "overlapped" or "added".
std::string combine_name(Combine c);

}  // namespace cachebook
