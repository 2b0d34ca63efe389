#pragma once
/// @file hierarchy.hpp
/// @brief Caches one behind the other, each the book's plain model (cache.hpp), and the walks
/// the book prices through them: chapter 2's row and column sums, a chase over a random cycle and
/// a read of one load per line. Chapter 8 prices the counts with AMAT, the time model
/// (time_model.hpp) with this machine's profile.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/trace.hpp"

namespace cachebook {

/// What one level of a modelled hierarchy saw: the accesses that reached it and, of those, the misses.
struct LevelCounts {
    std::uint64_t accesses = 0;
    std::uint64_t misses = 0;
    /// Of the misses, those to the set of the miss before (counted at the first level only): one
    /// set refilled line after line, which the hardware does one line at a time (profile.hpp).
    std::uint64_t same_set_misses = 0;
    /// misses / accesses (the local miss rate); 0 when nothing reached the level.
    [[nodiscard]] double miss_rate() const;
};

/// Where an operating system puts pages: each 4 KiB page of the program's addresses in a frame
/// drawn at random (fixed by the seed), none twice. A cache indexed by physical address sees these.
class PagePlacement {
public:
    static constexpr std::uint64_t kPageBytes = 4096;
    explicit PagePlacement(std::uint64_t seed) : state_(seed) {}
    /// The physical address of `address`: its page's frame, the same offset in the page.
    std::uint64_t physical(std::uint64_t address);

private:
    std::uint64_t state_;
    std::unordered_map<std::uint64_t, std::uint64_t> frame_of_;
    std::unordered_set<std::uint64_t> frames_taken_;
};

/// Caches one behind the other: an access that misses one level goes on to the next. Each level
/// is the book's plain model (cachebook::Cache), filled on its own misses.
class Hierarchy {
public:
    /// Indexed by the addresses the walk gives, or, with `placement_seed`, by physical addresses
    /// of pages placed at random (PagePlacement).
    explicit Hierarchy(const std::vector<CacheConfig>& levels, std::optional<std::uint64_t> placement_seed = {});
    /// Sends one load down the levels until one holds its line.
    void access(std::uint64_t address);
    /// Zeroes the counts and keeps the contents (a second pass then counts a warm hierarchy).
    void reset_counts();
    [[nodiscard]] const std::vector<LevelCounts>& counts() const { return counts_; }

private:
    std::vector<Cache> caches_;
    std::vector<LevelCounts> counts_;
    std::optional<std::size_t> last_miss_set_;  // the first level's set of the last miss
    std::optional<PagePlacement> placement_;
};

/// A walk: calls the hierarchy's access() for every load, in the walk's order.
using Walk = std::function<void(Hierarchy&)>;

/// The walks the book prices. n x n ints at address 0, read row by row or column by column
/// (chapter 2's two sums); and one load per `line` bytes of a `bytes`-byte buffer, in the
/// order of the chase's random cycle (`next[i]` follows node i) or in address order (the strided sum).
Walk row_walk(std::size_t n);
Walk column_walk(std::size_t n);
Walk chase_walk(std::vector<std::uint32_t> next, std::size_t line);
Walk sequential_walk(std::size_t bytes, std::size_t line);

/// C = A x B on n x n doubles, A, B and C page-aligned one after the other, as the compiled loop
/// loads them: the operand the inner loop does not move is loaded once before it (the compiler
/// keeps it in a register), the other two every iteration (C's store goes to the line its load
/// brought). `order` for a plain nest; `tile` > 0 for the blocked product (tiles ii, jj, kk; inside
/// them i, k, j). Only the outer units [first, first + count) run: one value of the outermost
/// variable, or for the blocked product one (ii, jj) pair of tiles.
Walk matmul_walk(LoopOrder order, std::size_t n, std::size_t tile, std::size_t first, std::size_t count);
/// The outer units of that walk: n, or (n / tile rounded up)^2.
std::size_t matmul_units(std::size_t n, std::size_t tile);
/// Every line of the three matrices once, in address order: what the untimed pass before the
/// timed runs leaves in the caches that are large enough.
Walk matmul_touch(std::size_t n);

/// The counts of each level on the second of two passes of `walk`: the timed runs, too, come
/// after a pass that warms the caches.
std::vector<LevelCounts> warm_counts(const std::vector<CacheConfig>& levels, const Walk& walk);

/// The counts of `counted` after `warm` (the caches it leaves), with pages placed at random
/// `placements` times, averaged as placed_counts does.
std::vector<LevelCounts> placed_counts(const std::vector<CacheConfig>& levels, const Walk& warm, const Walk& counted,
                                       int placements);

/// warm_counts with pages placed at random, `placements` times (seeds 1, 2, ...): each level's
/// accesses, misses and same-set misses summed over the placements and divided by their number, rounded down.
std::vector<LevelCounts> placed_counts(const std::vector<CacheConfig>& levels, const Walk& walk, int placements);

}  // namespace cachebook
