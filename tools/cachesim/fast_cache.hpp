#pragma once
// cachesim's cache engine: the same cache as the plain model of
// common/include/cachebook/cache.hpp (same configuration, same counts, same
// outcome of every access), made fast for traces of many millions of lines.
// Sets of up to 8 ways keep their ways in order of use, one byte each, so a
// victim needs no search; a batch of references runs in one loop with its
// state in registers; each set keeps a "print" (a byte of every way's line)
// so most misses are known without comparing tags. SSE2 compares tags two at a
// time where the target has it, and plain compares do the same elsewhere
// (aarch64, or any target without __SSE2__).
// tests/test_fast_cache.cpp holds it to the plain model on random traces.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cachebook/cache.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cachesim {

using cachebook::AccessResult;
using cachebook::CacheConfig;
using cachebook::Counts;
using cachebook::Policy;

/// One cache level. Write-allocate: a write that misses fills the line like a read.
class FastCache {
public:
    /// Validates the configuration (throws std::invalid_argument) and starts empty.
    explicit FastCache(const CacheConfig& config);

    /// Registers a named stream (an array, say) and returns its id for access().
    /// Stream 0, "all", exists from the start.
    int add_stream(std::string name);

    /// Touches the line that holds byte `address`. The size of the access is
    /// not considered: an access never spans two lines here.
    [[gnu::always_inline]] AccessResult access(std::uint64_t address, int stream = 0, bool write = false) {
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
        const std::size_t set =
            pow2_sets_ ? static_cast<std::size_t>(line & set_mask_) : static_cast<std::size_t>(line % config_.sets);
        const std::size_t base = set * config_.ways;
        const std::size_t way = small_ ? find8(base, line) : find(&tags_[base], &stamp_[base], config_.ways, line);
        if (way != kNone) {
            on_hit(set, way, write);
            ++counts.hits;
            ++total_.hits;
            return {true, false, false, 0, set, way};
        }
        // LRU and FIFO evict the least recent way: the last of the set's order,
        // or the smallest stamp (empty ways carry 0, so the lowest empty way goes first).
        if (use_order_) {
            // The last way in the order leaves, and its refill becomes the most recent.
            const std::uint64_t order = order_[set];
            const auto v = static_cast<std::size_t>(order >> victim_shift_ & 0xff);
            order_[set] = (order << 8 | v) & order_mask_;
            return on_miss(line, set, v, counts, write);
        }
        const std::size_t v = stamp_victim_ ? oldest(&stamp_[base], config_.ways) : victim(set);
        if (config_.policy == Policy::PLRU) plru_touch(set, v);
        return on_miss(line, set, v, counts, write);
    }

    /// True when access_batch() can run this cache: LRU or FIFO, at most 8
    /// ways, a power-of-two number of sets, lines of 2 bytes or more.
    [[nodiscard]] bool batch_ready() const { return use_order_ && pow2_sets_ && line_shift_ >= 1; }
    /// Accesses on stream 0, in order: refs[i] is an address with bit 0 set
    /// for a write (bit 0 never picks the line, lines being 2 bytes or more).
    /// The counts and the state after it are those of access(refs[i] & ~1, 0,
    /// refs[i] & 1) called for each in turn; only for a batch_ready() cache.
    /// Returns the counts of the batch alone (they are also added to the totals).
    Counts access_batch(const std::uint64_t* refs, std::size_t n);

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

private:
    static constexpr std::uint64_t kInvalid = ~std::uint64_t{0};
    static constexpr std::size_t kNone = ~std::size_t{0};

    // Bit i set where v[i] == key, for i < n <= 64. Branch-free: on SSE2 two
    // ways per compare, so a set's ways are checked together instead of one
    // data-dependent branch per way.
    static std::uint64_t equal_mask(const std::uint64_t* v, std::size_t n, std::uint64_t key) {
        std::uint64_t mask = 0;
        std::size_t i = 0;
#if defined(__SSE2__)
        const __m128i k = _mm_set1_epi64x(static_cast<long long>(key));
        for (; i + 4 <= n; i += 4) {
            __m128i a = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)), k);
            __m128i b = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i + 2)), k);
            // A 64-bit lane is equal when both of its 32-bit halves are.
            a = _mm_and_si128(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
            b = _mm_and_si128(b, _mm_shuffle_epi32(b, _MM_SHUFFLE(2, 3, 0, 1)));
            const auto bits = static_cast<std::uint64_t>(_mm_movemask_pd(_mm_castsi128_pd(a)) |
                                                         (_mm_movemask_pd(_mm_castsi128_pd(b)) << 2));
            mask |= bits << i;
        }
#endif
        for (; i < n; ++i) mask |= static_cast<std::uint64_t>(v[i] == key) << i;
        return mask;
    }
    // Bit i set where v[i] == key, for the eight values from v (which may run
    // into the next set or the padding after the last: the caller masks them).
    // Eight 8-byte compares without a branch. Not 16-byte vector loads: a miss
    // has just stored an 8-byte tag into the set, and a wider load of it cannot
    // take the value from the store buffer, so it waits for the store to retire
    // (a sequence of misses to one set ran at half the speed that way).
    [[gnu::always_inline]] static std::uint64_t equal_mask8(const std::uint64_t* v, std::uint64_t key) {
        std::uint64_t m = 0;
        for (unsigned i = 0; i < 8; ++i) m |= static_cast<std::uint64_t>(v[i] == key) << i;
        return m;
    }
    // find() for sets of at most 8 ways: one fixed compare of 8 tags.
    [[gnu::always_inline]] std::size_t find8(std::size_t base, std::uint64_t line) const {
        for (std::uint64_t m = equal_mask8(&tags_[base], line) & way_mask_; m != 0; m &= m - 1) {
            const std::size_t w = static_cast<std::size_t>(std::countr_zero(m));
            if (stamp_[base + w] != 0) [[likely]]
                return w;
        }
        return kNone;
    }
    // The order of a set of at most 8 ways (one byte per way, most recent in the
    // low byte) with `way` moved to the front: the bytes before it move up one.
    [[gnu::always_inline]] static std::uint64_t to_front(std::uint64_t order, std::size_t way) {
        constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
        const std::uint64_t x = order ^ (kOnes * way);                  // a zero byte where `way` is
        const std::uint64_t zero = (x - kOnes) & ~x & kHigh;            // its lowest flag is exact
        const std::uint64_t through = ((zero & (~zero + 1)) << 1) - 1;  // bytes up to and including it
        return (order & ~through) | ((order << 8) & through) | way;
    }

    // The way of `set` (tags and stamps from its first way) holding `line`, or kNone.
    static std::size_t find(const std::uint64_t* tags, const std::uint64_t* stamps, std::size_t ways,
                            std::uint64_t line) {
        for (std::size_t first = 0; first < ways; first += 64) {
            const std::size_t n = ways - first < 64 ? ways - first : 64;
            for (std::uint64_t m = equal_mask(tags + first, n, line); m != 0; m &= m - 1) {
                // An empty way's tag is kInvalid, which is also a line's (with 1-byte
                // lines): a match counts only in a filled way (stamp not 0).
                const std::size_t w = first + static_cast<std::size_t>(std::countr_zero(m));
                if (stamps[w] != 0) [[likely]]
                    return w;
            }
        }
        return kNone;
    }
    // The first way with the smallest stamp: four independent minimum chains,
    // then one compare for where it is.
    static std::size_t oldest(const std::uint64_t* stamps, std::size_t ways) {
        std::uint64_t m0 = stamps[0], m1 = m0, m2 = m0, m3 = m0;
        std::size_t i = 1;
        for (; i + 4 <= ways; i += 4) {
            m0 = stamps[i] < m0 ? stamps[i] : m0;
            m1 = stamps[i + 1] < m1 ? stamps[i + 1] : m1;
            m2 = stamps[i + 2] < m2 ? stamps[i + 2] : m2;
            m3 = stamps[i + 3] < m3 ? stamps[i + 3] : m3;
        }
        for (; i < ways; ++i) m0 = stamps[i] < m0 ? stamps[i] : m0;
        m0 = m1 < m0 ? m1 : m0;
        m2 = m3 < m2 ? m3 : m2;
        const std::uint64_t least = m2 < m0 ? m2 : m0;
        for (std::size_t first = 0;; first += 64) {
            const std::size_t n = ways - first < 64 ? ways - first : 64;
            const std::uint64_t m = equal_mask(stamps + first, n, least);
            if (m != 0) return first + static_cast<std::size_t>(std::countr_zero(m));
        }
    }

    [[gnu::always_inline]] void on_hit(std::size_t set, std::size_t way, bool write) {
        const std::size_t i = set * config_.ways + way;
        last_line_ = tags_[i];
        has_last_ = true;
        last_index_ = i;
        last_set_ = set;
        last_way_ = way;
        if (config_.policy == Policy::LRU) {
            if (use_order_)
                order_[set] = to_front(order_[set], way);
            else
                stamp_[i] = ++clock_;
        } else if (config_.policy == Policy::PLRU)
            plru_touch(set, way);
        dirty_[i] = dirty_[i] | static_cast<std::uint8_t>(write);
    }
    // Fills `w` of `set` with `line`; the caller has updated the replacement state.
    [[gnu::always_inline]] AccessResult on_miss(std::uint64_t line, std::size_t set, std::size_t w, Counts& s,
                                                bool write) {
        const std::size_t i = set * config_.ways + w;
        AccessResult r{false, false, false, 0, set, w};
        ++s.misses;
        ++total_.misses;
        if (stamp_[i] != 0) {
            r.evicted = true;
            r.evicted_line = tags_[i];
            r.dirty_evicted = dirty_[i] != 0;
            ++s.evictions;
            ++total_.evictions;
            s.dirty_evictions += r.dirty_evicted;
            total_.dirty_evictions += r.dirty_evicted;
        }
        tags_[i] = line;
        if (!print_.empty()) {
            const std::uint64_t mark = line >> print_shift_ & 0xff;
            print_[set] = (print_[set] & ~(std::uint64_t{0xff} << (8 * w))) | mark << (8 * w);
        }
        last_line_ = line;
        has_last_ = true;
        last_index_ = i;
        last_set_ = set;
        last_way_ = w;
        stamp_[i] = ++clock_;
        dirty_[i] = static_cast<std::uint8_t>(write);
        return r;
    }
    template <bool kLru, bool kEight>
    Counts batch(const std::uint64_t* refs, std::size_t n);
    std::size_t victim(std::size_t set);
    void plru_touch(std::size_t set, std::size_t way);
    std::size_t plru_victim(std::size_t set) const;

    CacheConfig config_;
    unsigned line_shift_ = 0;
    bool pow2_sets_ = false;
    std::uint64_t set_mask_ = 0;
    std::vector<std::uint64_t> tags_;   // sets x ways line numbers, kInvalid when empty
    std::vector<std::uint64_t> stamp_;  // LRU: last use; FIFO: fill time
    std::vector<std::uint8_t> dirty_;
    std::vector<std::uint64_t> plru_;  // one tree of ways-1 bits per set
    std::uint64_t clock_ = 0;
    std::uint64_t rng_ = 0;
    // A way is empty when its stamp is 0 (every fill stamps it), so no line
    // number, not even kInvalid's, can be mistaken for an empty way.
    std::uint64_t last_line_ = kInvalid;  // the line of the previous access, for the fast path
    bool has_last_ = false;
    std::size_t last_index_ = 0, last_set_ = 0, last_way_ = 0;
    bool stamp_victim_ = true;  // LRU and FIFO pick the smallest stamp
    // Sets of at most 8 ways: their tags are compared 8 at a time (tags_ has 8
    // ways of padding), and under LRU and FIFO each set keeps its ways in order
    // of last use (or fill), one byte each, most recent first, empty ways last
    // with the lowest last. The victim is then the last byte, without a search.
    // Stamps still mark filled ways (not 0) but are not LRU times then.
    bool small_ = false;
    bool use_order_ = false;
    std::uint64_t way_mask_ = 0;    // the low `ways` bits
    unsigned victim_shift_ = 0;     // 8 x (ways - 1): the last byte of an order
    std::uint64_t order_mask_ = 0;  // the low `ways` bytes
    std::vector<std::uint64_t> order_;
    void reset_order();
    // LRU and FIFO with a power-of-two number of sets: per set, byte w is the
    // mark of way w's line (its 8 bits above the set index), kept by every fill.
    // A way whose mark differs cannot hold the line; one whose mark matches
    // may (an emptied way keeps its old mark), and its tag says.
    std::vector<std::uint64_t> print_;
    unsigned print_shift_ = 0;  // bits of a line number below its mark: the set index
    Counts total_;
    std::vector<Counts> per_stream_;
    std::vector<std::string> names_;
};

}  // namespace cachesim
