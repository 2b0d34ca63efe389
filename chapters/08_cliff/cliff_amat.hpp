#pragma once
// Chapter 8, the lesson of its second page (amat.md): a price for a miss. The average memory
// access time of a walk, from the miss rates the cache model gives for each level and the
// latencies the chase measured for each level.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"

namespace ch08 {

/// What one level of a modelled hierarchy saw: the accesses that reached it and, of those, the misses.
struct LevelCounts {
    std::uint64_t accesses = 0;
    std::uint64_t misses = 0;
    /// misses / accesses (the local miss rate); 0 when nothing reached the level.
    [[nodiscard]] double miss_rate() const;
};

/// Caches one behind the other: an access that misses one level goes on to the next. Each level
/// is the book's plain model (cachebook::Cache), filled on its own misses.
class Hierarchy {
public:
    explicit Hierarchy(const std::vector<cachebook::CacheConfig>& levels);
    /// Sends one load down the levels until one holds its line.
    void access(std::uint64_t address);
    /// Zeroes the counts and keeps the contents (a second pass then counts a warm hierarchy).
    void reset_counts();
    [[nodiscard]] const std::vector<LevelCounts>& counts() const { return counts_; }

private:
    std::vector<cachebook::Cache> caches_;
    std::vector<LevelCounts> counts_;
};

/// A walk: calls the hierarchy's access() for every load, in the walk's order.
using Walk = std::function<void(Hierarchy&)>;

/// The walks the page prices. n x n ints at address 0, read row by row or column by column
/// (chapter 2's two sums); and one load per `line` bytes of a `bytes`-byte buffer, in the
/// order of the chase's random cycle (`next[i]` follows node i) or in address order (the strided sum).
Walk row_walk(std::size_t n);
Walk column_walk(std::size_t n);
Walk chase_walk(std::vector<std::uint32_t> next, std::size_t line);
Walk sequential_walk(std::size_t bytes, std::size_t line);

/// The counts of each level on the second of two passes of `walk`: the timed runs, too, come
/// after a pass that warms the caches.
std::vector<LevelCounts> warm_counts(const std::vector<cachebook::CacheConfig>& levels, const Walk& walk);

/// The average memory access time, in ns, from the latency of a load served by each level
/// (`latency_ns`: the levels in order, then memory, one more than `miss_rates`) and each
/// level's local miss rate:
///   AMAT = t1 + m1 x (t2 - t1 + m2 x (t3 - t2 + ... + mK x (t_memory - tK))).
double amat_ns(const std::vector<double>& latency_ns, const std::vector<double>& miss_rates);

/// The local miss rates of `counts`, level by level.
std::vector<double> miss_rates(const std::vector<LevelCounts>& counts);

}  // namespace ch08
