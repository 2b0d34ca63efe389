#pragma once
/// @file cache.hpp
/// @brief A set-associative cache model: the simulator behind every miss count in the book.
///
/// The model counts hits, misses and evictions of one cache level. Fully
/// associative (one set) and direct-mapped (one way) caches are ordinary
/// configurations of it. Counts are kept in total and per named stream, so a
/// chapter can say which array missed.
///
/// It is written to be read (book/simulator.md shows it whole): a set is a
/// few ways, a lookup scans them in turn, and each replacement policy is a
/// few lines. tools/cachesim has a faster engine for long traces, held to
/// this one by a test.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cachebook {

// [snippet: cache_types]
/// Which line a full set gives up.
enum class Policy {
    LRU,     ///< least recently used (the book's default, and the cachelab reference's)
    FIFO,    ///< first in, first out: the oldest fill leaves, hits do not refresh
    Random,  ///< a pseudo-random way, from a seeded generator (reproducible)
    PLRU,    ///< tree pseudo-LRU, as many real L1s do it; ways must be a power of two
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
    static CacheConfig from_capacity(std::size_t capacity_bytes, std::size_t ways, std::size_t line_bytes);
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
    Counts& operator+=(const Counts& o) {
        hits += o.hits;
        misses += o.misses;
        evictions += o.evictions;
        dirty_evictions += o.dirty_evictions;
        return *this;
    }
    friend bool operator==(const Counts&, const Counts&) = default;
};

/// What one access did.
struct AccessResult {
    bool hit = false;
    bool evicted = false;            ///< a valid line was replaced
    bool dirty_evicted = false;      ///< ... and it had been written
    std::uint64_t evicted_line = 0;  ///< line number (address / line_bytes) of the evicted line
    std::size_t set = 0;             ///< the set the address maps to
    std::size_t way = 0;             ///< the way it now occupies
};

// [end: cache_types]

// [snippet: cache_class]
/// One cache level. Write-allocate: a write that misses fills the line like a read.
class Cache {
public:
    /// Validates the configuration (throws std::invalid_argument) and starts empty.
    explicit Cache(const CacheConfig& config);

    /// Registers a named stream (an array, say) and returns its id for access().
    /// Stream 0, "all", exists from the start.
    int add_stream(std::string name);

    /// Touches the line that holds byte `address`, counted on `stream`. The
    /// size of the access is not considered: an access never spans two lines here.
    AccessResult access(std::uint64_t address, int stream = 0, bool write = false);

    /// True if the line holding `address` is cached; changes nothing.
    [[nodiscard]] bool contains(std::uint64_t address) const;
    /// The lines (address / line_bytes) held in `set`, way by way; empty ways are skipped.
    [[nodiscard]] std::vector<std::uint64_t> resident_lines(std::size_t set = 0) const;
    /// Empties the cache and zeroes every count; streams stay registered.
    void reset();

    [[nodiscard]] const CacheConfig& config() const { return config_; }
    [[nodiscard]] const Counts& total() const { return total_; }
    [[nodiscard]] const Counts& stream(int id) const { return per_stream_.at(static_cast<std::size_t>(id)); }
    [[nodiscard]] const std::string& stream_name(int id) const { return names_.at(static_cast<std::size_t>(id)); }

private:
    /// One way of a set: the line it holds, if it holds one.
    struct Way {
        bool valid = false;       ///< holds a line
        bool dirty = false;       ///< written since it was filled
        std::uint64_t line = 0;   ///< the line number, address / line_bytes
        std::uint64_t stamp = 0;  ///< LRU: the time of its last use; FIFO: the time of its fill
    };

    std::span<Way> ways_of(std::size_t set);
    std::span<const Way> ways_of(std::size_t set) const;
    std::size_t victim(std::size_t set);
    std::size_t random_way();
    void plru_touch(std::size_t set, std::size_t way);
    std::size_t plru_victim(std::size_t set) const;

    CacheConfig config_;
    std::vector<Way> ways_;           // sets x ways, the ways of set 0 first
    std::vector<bool> tree_;          // tree-PLRU: ways nodes per set, node 1 the root (node 0 unused)
    std::uint64_t clock_ = 0;         // counts fills and uses, for the stamps
    std::uint64_t random_state_ = 0;  // the Random policy's generator
    Counts total_;
    std::vector<Counts> per_stream_;
    std::vector<std::string> names_;
};
// [end: cache_class]

}  // namespace cachebook
