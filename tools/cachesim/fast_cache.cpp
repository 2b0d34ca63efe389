#include "fast_cache.hpp"

#include <fmt/format.h>

#include <bit>
#include <stdexcept>

namespace cachesim {

FastCache::FastCache(const CacheConfig& config) : config_(config) {
    config_.validate();
    line_shift_ = static_cast<unsigned>(std::countr_zero(config_.line_bytes));
    pow2_sets_ = std::has_single_bit(config_.sets);
    set_mask_ = config_.sets - 1;
    const std::size_t n = config_.sets * config_.ways;
    small_ = config_.ways <= 8;
    tags_.assign(n + (small_ ? 8 : 0), kInvalid);  // find8() reads 8 tags from a set's first
    stamp_.assign(n, 0);
    dirty_.assign(n, 0);
    if (config_.policy == Policy::PLRU) plru_.assign(config_.sets, 0);
    stamp_victim_ = config_.policy == Policy::LRU || config_.policy == Policy::FIFO;
    use_order_ = small_ && stamp_victim_;
    way_mask_ = config_.ways >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << config_.ways) - 1;
    victim_shift_ = static_cast<unsigned>(8 * (config_.ways - 1));
    order_mask_ = config_.ways >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * config_.ways)) - 1;
    reset_order();
    if (use_order_ && pow2_sets_) {
        print_shift_ = static_cast<unsigned>(std::countr_zero(config_.sets));
        print_.assign(config_.sets, 0);
    }
    rng_ = config_.seed * 0x9E3779B97F4A7C15ull + 1;
    names_.emplace_back("all");
    per_stream_.emplace_back();
}

void FastCache::reset_order() {
    if (!use_order_) return;
    // All empty: way 0 last (the first victim), then way 1, ...
    std::uint64_t order = 0;
    for (std::size_t w = 0; w < config_.ways; ++w) order |= std::uint64_t{w} << (8 * (config_.ways - 1 - w));
    order_.assign(config_.sets, order);
}

int FastCache::add_stream(std::string name) {
    names_.push_back(std::move(name));
    per_stream_.emplace_back();
    return static_cast<int>(names_.size() - 1);
}

bool FastCache::contains(std::uint64_t address) const {
    const std::uint64_t line = address >> line_shift_;
    const std::size_t set = static_cast<std::size_t>(line % config_.sets);
    for (std::size_t w = 0; w < config_.ways; ++w)
        if (tags_[set * config_.ways + w] == line && stamp_[set * config_.ways + w] != 0) return true;
    return false;
}

FastCache::Invalidated FastCache::invalidate(std::uint64_t address) {
    const std::uint64_t line = address >> line_shift_;
    const std::size_t set = static_cast<std::size_t>(line % config_.sets);
    for (std::size_t w = 0; w < config_.ways; ++w) {
        const std::size_t i = set * config_.ways + w;
        if (tags_[i] == line && stamp_[i] != 0) {
            const bool dirty = dirty_[i] != 0;
            tags_[i] = kInvalid;
            dirty_[i] = 0;
            stamp_[i] = 0;  // an empty way carries stamp 0: it is the next victim, as on a fresh cache
            if (use_order_) {
                // The same in the order: filled ways keep their order, then the
                // empty ones, the lowest last.
                std::uint64_t order = 0;
                unsigned at = 0;
                const std::uint64_t old = order_[set];
                for (std::size_t k = 0; k < config_.ways; ++k) {
                    const std::size_t v = static_cast<std::size_t>(old >> (8 * k) & 0xff);
                    if (stamp_[set * config_.ways + v] != 0) order |= std::uint64_t{v} << (8 * at++);
                }
                for (std::size_t v = config_.ways; v-- > 0;)
                    if (stamp_[set * config_.ways + v] == 0) order |= std::uint64_t{v} << (8 * at++);
                order_[set] = order;
            }
            if (line == last_line_) has_last_ = false;  // no fast-path hit on a dropped line
            return {true, dirty};
        }
    }
    return {};
}

bool FastCache::mark_dirty(std::uint64_t address) {
    const std::uint64_t line = address >> line_shift_;
    const std::size_t set = static_cast<std::size_t>(line % config_.sets);
    for (std::size_t w = 0; w < config_.ways; ++w) {
        const std::size_t i = set * config_.ways + w;
        if (tags_[i] == line && stamp_[i] != 0) {
            dirty_[i] = 1;
            return true;
        }
    }
    return false;
}

std::vector<std::uint64_t> FastCache::resident_lines(std::size_t set) const {
    std::vector<std::uint64_t> out;
    if (set >= config_.sets) return out;
    for (std::size_t w = 0; w < config_.ways; ++w)
        if (stamp_[set * config_.ways + w] != 0) out.push_back(tags_[set * config_.ways + w]);
    return out;
}

void FastCache::reset() {
    std::fill(tags_.begin(), tags_.end(), kInvalid);
    std::fill(stamp_.begin(), stamp_.end(), 0);
    std::fill(dirty_.begin(), dirty_.end(), 0);
    std::fill(plru_.begin(), plru_.end(), 0);
    reset_order();
    std::fill(print_.begin(), print_.end(), 0);
    clock_ = 0;
    last_line_ = kInvalid;
    has_last_ = false;
    rng_ = config_.seed * 0x9E3779B97F4A7C15ull + 1;
    total_ = {};
    for (auto& c : per_stream_) c = {};
}

Counts FastCache::access_batch(const std::uint64_t* refs, std::size_t n) {
    if (!batch_ready()) throw std::logic_error("FastCache::access_batch: not an LRU or FIFO cache of up to 8 ways");
    const bool lru = config_.policy == Policy::LRU, eight = config_.ways == 8;
    const Counts c = lru ? (eight ? batch<true, true>(refs, n) : batch<true, false>(refs, n))
                         : (eight ? batch<false, true>(refs, n) : batch<false, false>(refs, n));
    total_ += c;
    per_stream_[0] += c;
    return c;
}

// access() for a whole batch, its state in locals the compiler keeps in
// registers. A hit on the most recent way of its set (the order's low byte)
// changes no order, and takes one tag compare. Otherwise the set's print
// (a byte of each way's tag) says which ways may hold the line: usually
// none on a miss, so a miss costs no look at the tags themselves.
template <bool kLru, bool kEight>
Counts FastCache::batch(const std::uint64_t* refs, std::size_t n) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    std::uint64_t* const tags = tags_.data();
    std::uint64_t* const stamps = stamp_.data();
    std::uint8_t* const dirty = dirty_.data();
    std::uint64_t* const orders = order_.data();
    std::uint64_t* const prints = print_.data();
    const unsigned shift = line_shift_, print_shift = print_shift_;
    const std::uint64_t set_mask = set_mask_;
    const std::size_t ways = config_.ways;
    const std::uint64_t order_mask = order_mask_;
    const unsigned victim_shift = victim_shift_;
    // With lines of 2 bytes or more no line number is kInvalid: it stands for
    // "no previous line", and a tag that matches is a filled way's.
    std::uint64_t last_line = has_last_ ? last_line_ : kInvalid;
    std::size_t last_index = last_index_;
    std::uint64_t clock = clock_;
    std::uint64_t hits = 0, misses = 0, evictions = 0, dirty_evictions = 0;
    for (const std::uint64_t* const end = refs + n; refs != end; ++refs) {
        const std::uint64_t ref = *refs;
        const auto write = static_cast<std::uint8_t>(ref & 1);
        const std::uint64_t line = ref >> shift;
        if (line == last_line) {
            dirty[last_index] |= write;
            ++hits;
            continue;
        }
        const auto set = static_cast<std::size_t>(line & set_mask);
        const std::size_t base = set * ways;
        const std::uint64_t order = orders[set];
        auto way = static_cast<std::size_t>(order & 0xff);
        if (tags[base + way] != line) {
            const std::uint64_t mark = line >> print_shift & 0xff;
            const std::uint64_t print = prints[set];
            // A byte of x is zero where the way's mark matches. The lowest such
            // flag is exact, the ones above it may be false: each is checked.
            const std::uint64_t x = print ^ (kOnes * mark);
            std::uint64_t maybe = (x - kOnes) & ~x & kHigh & order_mask;
            for (; maybe != 0; maybe &= maybe - 1)
                if (tags[base + static_cast<std::size_t>(std::countr_zero(maybe)) / 8] == line) break;
            if (maybe != 0) {
                way = static_cast<std::size_t>(std::countr_zero(maybe)) / 8;
                if constexpr (kLru) orders[set] = to_front(order, way);
            } else {
                // The last way in the order leaves; its refill becomes the most recent.
                if constexpr (kEight) {
                    way = static_cast<std::size_t>(order >> 56);
                    orders[set] = std::rotl(order, 8);
                } else {
                    way = static_cast<std::size_t>(order >> victim_shift & 0xff);
                    orders[set] = (order << 8 | way) & order_mask;
                }
                const std::size_t i = base + way;
                ++misses;
                evictions += stamps[i] != 0;
                dirty_evictions += dirty[i];  // 0 in an empty way
                tags[i] = line;
                stamps[i] = ++clock;
                dirty[i] = write;
                prints[set] = (print & ~(std::uint64_t{0xff} << (8 * way))) | mark << (8 * way);
                last_line = line;
                last_index = i;
                continue;
            }
        }
        const std::size_t i = base + way;
        dirty[i] |= write;
        ++hits;
        last_line = line;
        last_index = i;
    }
    has_last_ = last_line != kInvalid;
    if (has_last_) {
        last_line_ = last_line;
        last_index_ = last_index;
        last_set_ = last_index / ways;
        last_way_ = last_index % ways;
    }
    clock_ = clock;
    Counts c;
    c.hits = hits;
    c.misses = misses;
    c.evictions = evictions;
    c.dirty_evictions = dirty_evictions;
    return c;
}

std::size_t FastCache::victim(std::size_t set) {
    const std::size_t base = set * config_.ways;
    if (use_order_) return static_cast<std::size_t>(order_[set] >> victim_shift_ & 0xff);
    if (config_.policy == Policy::LRU || config_.policy == Policy::FIFO) return oldest(&stamp_[base], config_.ways);
    // An empty way is always filled first, lowest index first.
    for (std::size_t w = 0; w < config_.ways; ++w)
        if (stamp_[base + w] == 0) return w;
    if (config_.policy == Policy::Random) {
        // xorshift64*: reproducible for a given seed.
        rng_ ^= rng_ >> 12;
        rng_ ^= rng_ << 25;
        rng_ ^= rng_ >> 27;
        return static_cast<std::size_t>((rng_ * 0x2545F4914F6CDD1Dull) % config_.ways);
    }
    return plru_victim(set);
}

// Tree-PLRU: node 1 is the root, node n has children 2n and 2n+1; a bit of 0
// sends the next victim search left, 1 right. A touch points every node on
// the way's path away from it.
void FastCache::plru_touch(std::size_t set, std::size_t way) {
    if (config_.ways == 1) return;
    std::uint64_t& bits = plru_[set];
    std::size_t node = 1;
    for (std::size_t half = config_.ways / 2; half >= 1; half /= 2) {
        const bool right = (way & half) != 0;
        if (right)
            bits &= ~(std::uint64_t{1} << node);
        else
            bits |= (std::uint64_t{1} << node);
        node = 2 * node + (right ? 1 : 0);
        if (half == 1) break;
    }
}

std::size_t FastCache::plru_victim(std::size_t set) const {
    if (config_.ways == 1) return 0;
    const std::uint64_t bits = plru_[set];
    std::size_t node = 1, way = 0;
    for (std::size_t half = config_.ways / 2; half >= 1; half /= 2) {
        const bool right = (bits >> node) & 1u;
        if (right) way |= half;
        node = 2 * node + (right ? 1 : 0);
        if (half == 1) break;
    }
    return way;
}

}  // namespace cachesim
