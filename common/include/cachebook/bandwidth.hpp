#pragma once
/// @file bandwidth.hpp
/// @brief Read bandwidth: a sum that reads one 8-byte word every `stride` words of an array,
/// its throughput in GB/s, and the working-set sizes at which each cache level is measured
/// (chapter 8 draws the memory mountain with it, chapter 9 its roofs).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/chase.hpp"

namespace cachebook {

/// Sums words[0], words[stride], words[2 x stride], ... below `count`, `passes` times.
/// Unlike a chase, no load waits for another: the core overlaps them and the prefetcher runs
/// ahead, so the loop measures how many bytes a level delivers, not how long one takes.
std::uint64_t read_sum(const std::uint64_t* words, std::size_t count, std::size_t stride, std::size_t passes);

/// Best-of-`runs` read throughput of read_sum over the first `bytes` bytes of `buf` at `stride`
/// words: GB/s (10^9 bytes) of the words it reads, 8 bytes each, as CS:APP's memory mountain
/// counts them. Each run makes whole passes reading at least `min_bytes`; one untimed pass first.
double read_gbs(const PageBuffer& buf, std::size_t bytes, std::size_t stride, std::size_t min_bytes, int runs);

/// The working sets at which the read bandwidth of each level is measured (0: not measured).
struct LevelSizes {
    std::size_t l1 = 0, l2 = 0, l3 = 0, memory = 0;
};

/// From the data caches' sizes in bytes (0: unknown), working sets that sit well inside each
/// level and well above the one below it: L1, half of L1d; L2, the geometric mean of L1d and
/// L2; L3, the geometric mean of L2 and L3, at most 4 x L2 (a VM may report a whole socket's
/// L3, of which it gets a share); memory, 4 x the last-level cache, at least 16 MiB and at
/// most 128 MiB. A level whose size, or that of the level below, is unknown gets 0.
LevelSizes level_sizes(std::size_t l1, std::size_t l2, std::size_t l3);

/// The same from the caches `machine()` reports.
LevelSizes level_sizes_of_this_machine();

/// One level's sequential read bandwidth.
struct LevelBandwidth {
    std::string name;           ///< "L1", "L2", "L3", "memory"
    std::size_t bytes = 0;      ///< the working set (0: not measured)
    std::optional<double> gbs;  ///< GB/s, nullopt when not measured
};

/// read_gbs at stride 1 at each size of `sizes`, best of `runs`, each run at least `min_bytes`.
std::vector<LevelBandwidth> read_bandwidth_by_level(const LevelSizes& sizes, std::size_t min_bytes, int runs);

}  // namespace cachebook
