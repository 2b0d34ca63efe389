#pragma once
/// @file prefetch.hpp
/// @brief A prefetcher in front of the cache model: next-line, or a stride detector per stream.
///
/// A prefetcher guesses which line a program will want next and brings it in
/// before it is asked for. Two guesses are modelled (chapter 4):
///
/// - next-line: a demand miss on line L also fetches line L + 1;
/// - stride: a small table follows each stream (an array, or the load
///   instruction a real core would key on) and, once the stream has moved by
///   the same number of bytes twice in a row, fetches the line that stride
///   ahead of the access.
///
/// The model has no time, so a prefetch arrives at once; a real one must be
/// issued far enough ahead to arrive before the load that wants it. A prefetch
/// fills a line exactly as a miss does (the same ways, the same replacement);
/// the cache counts it on a stream of its own, "prefetch", so the demand
/// counts of the other streams stay what the program asked for. With the
/// prefetcher off the counts are those of a plain Cache, access for access.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "cachebook/cache.hpp"

namespace cachebook {

// [snippet: prefetch_types]
/// Which guess the prefetcher makes.
enum class PrefetchKind {
    none,       ///< no prefetching: a plain cache
    next_line,  ///< a demand miss on line L also fetches L + 1
    stride,     ///< a stream that moved by the same stride twice is fetched a stride ahead
};
/// "none", "next-line" or "stride".
std::string_view prefetch_name(PrefetchKind kind);

/// The prefetcher's settings.
struct PrefetchConfig {
    PrefetchKind kind = PrefetchKind::none;
    std::size_t degree = 1;         ///< how many lines (next-line) or strides (stride) ahead it fetches, 1 to 64
    std::size_t table_streams = 4;  ///< streams the stride table follows at once, 1 to 1024
    /// Throws std::invalid_argument naming the first setting out of range.
    void validate() const;
};

/// What the prefetcher did, beside the demand accesses it saw.
struct PrefetchCounts {
    std::uint64_t demand_accesses = 0;
    std::uint64_t demand_misses = 0;
    std::uint64_t issued = 0;  ///< prefetches that brought a line in (one already cached is not issued)
    std::uint64_t useful = 0;  ///< prefetched lines a later demand access hit, each counted once
    friend bool operator==(const PrefetchCounts&, const PrefetchCounts&) = default;
};
// [end: prefetch_types]

// [snippet: stride_table]
/// The stride detector: for each stream it follows, the last address and the
/// last stride, and how many times in a row that stride has been seen.
class StrideTable {
public:
    /// Throws std::invalid_argument when `streams` is 0.
    explicit StrideTable(std::size_t streams);

    /// Records an access of `stream` at `address`. Returns the stride in bytes
    /// once the stream has moved by it twice in a row (three accesses a, a + s,
    /// a + 2s), and on every further access with the same stride; nullopt
    /// otherwise, and for a stride of 0. A stream the table does not hold
    /// takes the place of the one used least recently.
    std::optional<std::int64_t> observe(int stream, std::uint64_t address);

private:
    struct Entry {
        int stream = 0;
        std::uint64_t last_address = 0;
        std::int64_t stride = 0;
        int repeats = 0;             ///< accesses in a row that moved by `stride`
        std::uint64_t last_use = 0;  ///< for replacement; 0: the entry is free
    };
    Entry& entry_for(int stream, std::uint64_t address, bool& is_new);

    std::vector<Entry> entries_;
    std::uint64_t clock_ = 0;
};
// [end: stride_table]

// [snippet: prefetching_cache]
/// A Cache with a prefetcher in front of it.
class PrefetchingCache {
public:
    /// Takes over `cache` with the streams it has (abc_cache's A, B, C, say) and adds the
    /// stream "prefetch" after them. Throws std::invalid_argument when `prefetch` is out of range.
    PrefetchingCache(Cache cache, const PrefetchConfig& prefetch);
    /// An empty cache of that geometry, with stream 0 ("all") and "prefetch" only.
    PrefetchingCache(const CacheConfig& cache, const PrefetchConfig& prefetch)
        : PrefetchingCache(Cache(cache), prefetch) {}

    /// A demand access: counted, then shown to the prefetcher, which may fetch lines.
    AccessResult access(std::uint64_t address, int stream = 0, bool write = false);

    [[nodiscard]] const PrefetchCounts& counts() const { return counts_; }
    /// The cache behind it; its stream prefetch_stream() holds the prefetches' fills.
    [[nodiscard]] const Cache& cache() const { return cache_; }
    [[nodiscard]] int prefetch_stream() const { return prefetch_stream_; }

private:
    void fetch_line(std::uint64_t line);
    void forget_evicted(const AccessResult& r);

    Cache cache_;
    PrefetchConfig config_;
    int prefetch_stream_ = 0;
    StrideTable strides_;
    std::unordered_set<std::uint64_t> unused_;  // cached lines a prefetch brought in and no demand has touched
    PrefetchCounts counts_;
};
// [end: prefetching_cache]

}  // namespace cachebook
