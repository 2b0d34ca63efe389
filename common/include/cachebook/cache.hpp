#pragma once
/// @file cache.hpp
/// @brief A set-associative cache model: the simulator behind every miss count in the book.
///
/// The model counts hits, misses and evictions of one cache level. Fully
/// associative (one set) and direct-mapped (one way) caches are ordinary
/// configurations of it. Counts are kept in total and per named stream, so a
/// chapter can say which array missed.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cachebook {

/// Which line a full set gives up.
enum class Policy {
    LRU,    ///< least recently used (the book's default, and the cachelab reference's)
    FIFO,   ///< first in, first out: the oldest fill leaves, hits do not refresh
    Random, ///< a pseudo-random way, from a seeded generator (reproducible)
    PLRU,   ///< tree pseudo-LRU, as many real L1s do it; ways must be a power of two
};

/// Parses "lru", "fifo", "random" or "plru"; throws std::invalid_argument otherwise.
Policy parse_policy(std::string_view name);
/// The lower-case name of a policy.
std::string_view policy_name(Policy p);

/// The geometry of one cache level. Capacity = sets x ways x line_bytes.
struct CacheConfig {
    std::size_t sets = 1;         ///< number of sets, at least 1
    std::size_t ways = 1;         ///< lines per set, at least 1; need not be a power of two
    std::size_t line_bytes = 64;  ///< bytes per line, a power of two
    Policy policy = Policy::LRU;  ///< replacement policy
    std::uint64_t seed = 1;       ///< seed of the Random policy

    /// Total bytes the cache holds.
    [[nodiscard]] std::size_t capacity_bytes() const { return sets * ways * line_bytes; }
    /// Total lines the cache holds.
    [[nodiscard]] std::size_t lines() const { return sets * ways; }
    /// Throws std::invalid_argument naming the first thing wrong with the geometry.
    void validate() const;
    /// A one-line description, e.g. "4096 B, 8 sets x 8 ways x 64 B lines, LRU".
    [[nodiscard]] std::string describe() const;

    /// One set holding `lines` lines.
    static CacheConfig fully_associative(std::size_t lines, std::size_t line_bytes);
    /// One way per set, `lines` sets.
    static CacheConfig direct_mapped(std::size_t lines, std::size_t line_bytes);
    /// The sets follow from capacity / (ways x line_bytes), which must divide exactly.
    static CacheConfig from_capacity(std::size_t capacity_bytes, std::size_t ways,
                                     std::size_t line_bytes);
};

/// Counts of one stream, or of all streams together.
struct Counts {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t evictions = 0;        ///< misses that pushed out a valid line
    std::uint64_t dirty_evictions = 0;  ///< evictions of a line written since its fill (write-back traffic)
    [[nodiscard]] std::uint64_t accesses() const { return hits + misses; }
    /// Misses per access; 0 when there were no accesses.
    [[nodiscard]] double miss_rate() const {
        return accesses() == 0 ? 0.0 : static_cast<double>(misses) / static_cast<double>(accesses());
    }
    friend bool operator==(const Counts&, const Counts&) = default;
};

/// What one access did.
struct AccessResult {
    bool hit = false;
    bool evicted = false;                ///< a valid line was replaced
    bool dirty_evicted = false;          ///< ... and it had been written
    std::uint64_t evicted_line = 0;      ///< line number (address / line_bytes) of the evicted line
    std::size_t set = 0;                 ///< the set the address maps to
    std::size_t way = 0;                 ///< the way it now occupies
};

/// One cache level. Write-allocate: a write that misses fills the line like a read.
class Cache {
public:
    /// Validates the configuration (throws std::invalid_argument) and starts empty.
    explicit Cache(const CacheConfig& config);

    /// Registers a named stream (an array, say) and returns its id for access().
    /// Stream 0, "all", exists from the start.
    int add_stream(std::string name);

    /// Touches the line that holds byte `address`. The size of the access is
    /// not considered: an access never spans two lines here.
    AccessResult access(std::uint64_t address, int stream = 0, bool write = false) {
        const std::uint64_t line = address >> line_shift_;
        Counts& counts = per_stream_[static_cast<std::size_t>(stream)];
        // Fast path: the line touched last is still the most recent one of its
        // set, so touching it again is a hit that changes no replacement state.
        if (has_last_ && line == last_line_) {
            dirty_[last_index_] = dirty_[last_index_] | static_cast<std::uint8_t>(write);
            ++counts.hits;
            ++total_.hits;
            return {true, false, false, 0, last_set_, last_way_};
        }
        const std::size_t set = pow2_sets_ ? static_cast<std::size_t>(line & set_mask_)
                                           : static_cast<std::size_t>(line % config_.sets);
        const std::size_t base = set * config_.ways;
        const std::uint64_t* tags = &tags_[base];
        const std::uint64_t* stamps = &stamp_[base];
        // One pass finds the line or, for LRU and FIFO, the victim: the smallest
        // stamp (empty ways carry 0, so the lowest empty way wins).
        std::size_t oldest_way = 0;
        std::uint64_t oldest = stamps[0];
        for (std::size_t w = 0; w < config_.ways; ++w) {
            if (tags[w] == line && stamps[w] != 0) {
                on_hit(set, w, write);
                ++counts.hits;
                ++total_.hits;
                return {true, false, false, 0, set, w};
            }
            const bool older = stamps[w] < oldest;
            oldest = older ? stamps[w] : oldest;
            oldest_way = older ? w : oldest_way;
        }
        return on_miss(line, set, stamp_victim_ ? oldest_way : victim(set), counts, write);
    }

    /// True if the line holding `address` is cached; changes nothing.
    [[nodiscard]] bool contains(std::uint64_t address) const;

    /// What invalidate() found.
    struct Invalidated {
        bool present = false;  ///< the line was cached (and now is not)
        bool dirty = false;    ///< ... and had been written since its fill
    };
    /// Drops the line holding `address` if cached, as an inclusive lower level
    /// does when it evicts that line. Counts and the other lines are unchanged.
    Invalidated invalidate(std::uint64_t address);
    /// Marks the line holding `address` written, if cached (a write-back from
    /// the level above). Counts and replacement order are unchanged. Returns
    /// whether the line was cached.
    bool mark_dirty(std::uint64_t address);
    /// The lines (address / line_bytes) held in `set`, way by way; empty ways are skipped.
    [[nodiscard]] std::vector<std::uint64_t> resident_lines(std::size_t set = 0) const;
    /// Empties the cache and zeroes every count; streams stay registered.
    void reset();

    [[nodiscard]] const CacheConfig& config() const { return config_; }
    [[nodiscard]] const Counts& total() const { return total_; }
    [[nodiscard]] const Counts& stream(int id) const { return per_stream_.at(static_cast<std::size_t>(id)); }
    [[nodiscard]] const std::string& stream_name(int id) const { return names_.at(static_cast<std::size_t>(id)); }
    [[nodiscard]] int stream_count() const { return static_cast<int>(names_.size()); }

private:
    static constexpr std::uint64_t kInvalid = ~std::uint64_t{0};

    void on_hit(std::size_t set, std::size_t way, bool write) {
        const std::size_t i = set * config_.ways + way;
        last_line_ = tags_[i];
        has_last_ = true;
        last_index_ = i;
        last_set_ = set;
        last_way_ = way;
        if (config_.policy == Policy::LRU) stamp_[i] = ++clock_;
        else if (config_.policy == Policy::PLRU) plru_touch(set, way);
        dirty_[i] = dirty_[i] | static_cast<std::uint8_t>(write);
    }
    AccessResult on_miss(std::uint64_t line, std::size_t set, std::size_t way, Counts& counts, bool write);
    std::size_t victim(std::size_t set);
    void plru_touch(std::size_t set, std::size_t way);
    std::size_t plru_victim(std::size_t set) const;

    CacheConfig config_;
    unsigned line_shift_ = 0;
    bool pow2_sets_ = false;
    std::uint64_t set_mask_ = 0;
    std::vector<std::uint64_t> tags_;    // sets x ways line numbers, kInvalid when empty
    std::vector<std::uint64_t> stamp_;   // LRU: last use; FIFO: fill time
    std::vector<std::uint8_t> dirty_;
    std::vector<std::uint64_t> plru_;    // one tree of ways-1 bits per set
    std::uint64_t clock_ = 0;
    std::uint64_t rng_ = 0;
    // A way is empty when its stamp is 0 (every fill stamps it), so no line
    // number, not even kInvalid's, can be mistaken for an empty way.
    std::uint64_t last_line_ = kInvalid;  // the line of the previous access, for the fast path
    bool has_last_ = false;
    std::size_t last_index_ = 0, last_set_ = 0, last_way_ = 0;
    bool stamp_victim_ = true;  // LRU and FIFO pick the smallest stamp
    Counts total_;
    std::vector<Counts> per_stream_;
    std::vector<std::string> names_;
};

}  // namespace cachebook
