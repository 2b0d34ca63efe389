#pragma once
/// @file hierarchy.hpp
/// @brief Two or three cache levels over the one-level engine of fast_cache.hpp.
///
/// An access goes to L1; on a miss it goes on to L2, and so on, and the line is
/// filled into every level it missed in (write-allocate at every level). Writes
/// dirty the line in L1 only (write-back): a dirty line leaving a level is
/// written into the next level down that holds it (marking it dirty there), or
/// to memory. An inclusive hierarchy keeps every upper level a subset of the
/// levels below: a line evicted from L2 or L3 is also dropped from the levels
/// above (a back-invalidation). A non-inclusive one does not.
///
/// An access may span several lines (its size counts, as in cachegrind): it
/// is one reference, a miss at a level if any of its lines misses there, and
/// only then does it go on to the next level (all of its lines).

#include <cstdint>
#include <string>
#include <vector>

#include "fast_cache.hpp"

namespace cachesim {

/// Whether a lower level evicting a line also drops it from the levels above.
enum class Inclusion {
    NonInclusive,  ///< no back-invalidation (cachegrind's model)
    Inclusive,     ///< back-invalidation keeps L1 within L2 within L3
};

/// What one reference did.
struct HierarchyResult {
    int level = 0;                   ///< the level that hit (0 = L1), or levels() for memory
    std::uint32_t l1_evictions = 0;  ///< lines L1 evicted to make room
};

/// One to three cache levels with per-level, per-stream counts.
class Hierarchy {
public:
    /// `levels[0]` is L1. Throws std::invalid_argument for no level, more
    /// than three, an invalid geometry, or (inclusive) a line size that shrinks
    /// going down.
    Hierarchy(std::vector<CacheConfig> levels, Inclusion inclusion);

    /// Registers a stream (stream 0 is "all") at every level; returns its id.
    int add_stream(const std::string& name);

    /// One reference of `size` bytes (at least 1) at `address`.
    [[gnu::always_inline]] HierarchyResult access(std::uint64_t address, std::uint32_t size, bool write,
                                                  int stream = 0) {
        HierarchyResult r;
        if (single_level_ && (address & l1_offset_mask_) + size <= l1_line_bytes_) [[likely]] {
            // The common case, kept short: one level, one line.
            const AccessResult a = l1_->access(address, stream, write);
            Counts& t = l1_counts_[0];
            Counts& s = l1_counts_[stream];
            if (a.hit) {
                ++t.hits;
                s.hits += stream != 0;
                return r;
            }
            ++t.misses;
            s.misses += stream != 0;
            r.level = 1;
            if (a.evicted) {
                r.l1_evictions = 1;
                ++t.evictions;
                s.evictions += stream != 0;
                if (a.dirty_evicted) {
                    ++t.dirty_evictions;
                    s.dirty_evictions += stream != 0;
                    ++memory_writebacks_;
                }
            }
            return r;
        }
        return access_levels(address, size, write, stream);
    }

    /// True when access_batch() can run: one level, batch_ready() (fast_cache.hpp).
    [[nodiscard]] bool batch_ready() const { return single_level_ && l1_->batch_ready(); }
    /// One-byte references on stream 0, in order: refs[i] is an address with
    /// bit 0 set for a write. The same counts and state as access(refs[i] & ~1,
    /// 1, refs[i] & 1) for each; only when batch_ready().
    void access_batch(const std::uint64_t* refs, std::size_t n);

    [[nodiscard]] int levels() const { return static_cast<int>(caches_.size()); }
    [[nodiscard]] Inclusion inclusion() const { return inclusion_; }
    [[nodiscard]] const FastCache& cache(int level) const { return caches_.at(static_cast<std::size_t>(level)); }
    /// References at `level` (hits + misses) and their outcome, with the lines
    /// evicted (and dirty lines evicted) at that level.
    [[nodiscard]] const Counts& counts(int level, int stream = 0) const {
        return counts_.at(static_cast<std::size_t>(level)).at(static_cast<std::size_t>(stream));
    }
    /// Lines dropped from the levels above because `level` evicted them (inclusive only).
    [[nodiscard]] std::uint64_t back_invalidations(int level) const {
        return back_invalidations_.at(static_cast<std::size_t>(level));
    }
    /// Dirty lines written to memory (left the last level that could hold them).
    [[nodiscard]] std::uint64_t memory_writebacks() const { return memory_writebacks_; }

private:
    // access() beyond one level or one line.
    HierarchyResult access_levels(std::uint64_t address, std::uint32_t size, bool write, int stream);
    // Touches every line of the reference at level k; true when all hit.
    bool reference(int k, std::uint64_t address, std::uint32_t size, bool write, int stream, HierarchyResult& r) {
        FastCache& c = caches_[static_cast<std::size_t>(k)];
        std::vector<Counts>& by_stream = counts_[static_cast<std::size_t>(k)];
        Counts& t = by_stream[0];
        Counts& s = by_stream[static_cast<std::size_t>(stream)];  // may be t itself
        const unsigned shift = shifts_[static_cast<std::size_t>(k)];
        const std::uint64_t end = address + (size - 1);
        const std::uint64_t last = (end < address ? ~std::uint64_t{0} : end) >> shift;  // no wrap past 2^64
        bool hit = true;
        for (std::uint64_t line = address >> shift;; ++line) {
            const AccessResult a = c.access(line << shift, stream, write);
            if (!a.hit) {
                hit = false;
                if (a.evicted) {
                    ++t.evictions;
                    if (stream != 0) ++s.evictions;
                    if (k == 0) ++r.l1_evictions;
                    if (a.dirty_evicted) {
                        ++t.dirty_evictions;
                        if (stream != 0) ++s.dirty_evictions;
                    }
                    evicted(k, a.evicted_line << shift, a.dirty_evicted);
                }
            }
            if (line == last) break;
        }
        if (hit) {
            ++t.hits;
            if (stream != 0) ++s.hits;
        } else {
            ++t.misses;
            if (stream != 0) ++s.misses;
        }
        return hit;
    }
    void evicted(int k, std::uint64_t line_address, bool dirty);
    void write_back(int from_level, std::uint64_t address);

    void refresh_fast_path();

    std::vector<FastCache> caches_;
    // The one-level, one-line path: L1 and its counts without indirection.
    bool single_level_ = false;
    FastCache* l1_ = nullptr;
    Counts* l1_counts_ = nullptr;
    std::uint64_t l1_offset_mask_ = 0;
    std::uint64_t l1_line_bytes_ = 0;
    std::vector<unsigned> shifts_;
    Inclusion inclusion_;
    std::vector<std::vector<Counts>> counts_;  // [level][stream]
    std::vector<std::uint64_t> back_invalidations_;
    std::uint64_t memory_writebacks_ = 0;
};

}  // namespace cachesim
