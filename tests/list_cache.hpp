#pragma once
// A cache as plain as it can be written: one list of lines per set, most
// recent (LRU) or newest (FIFO) first. The differential tests hold the book's
// model and cachesim's fast engine to it, access by access.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <list>
#include <random>
#include <vector>

#include "cachebook/cache.hpp"

namespace cachebook_test {

class ListCache {
public:
    explicit ListCache(const cachebook::CacheConfig& config) : config_(config), sets_(config.sets) {}

    /// What one access does, in the fields of cachebook::AccessResult it shares.
    struct Outcome {
        bool hit = false;
        bool evicted = false;
        std::uint64_t evicted_line = 0;
        bool dirty_evicted = false;
    };

    Outcome access(std::uint64_t address, bool write) {
        std::list<Line>& set = set_of(address);
        const auto it = find(set, line_of(address));
        Outcome out;
        if (it != set.end()) {
            out.hit = true;
            it->dirty = it->dirty || write;
            if (config_.policy == cachebook::Policy::LRU) set.splice(set.begin(), set, it);
            ++counts_.hits;
            return out;
        }
        ++counts_.misses;
        if (set.size() == config_.ways) {
            out = {false, true, set.back().line, set.back().dirty};
            ++counts_.evictions;
            counts_.dirty_evictions += set.back().dirty;
            set.pop_back();
        }
        set.push_front({line_of(address), write});
        return out;
    }

    /// Drops the line of `address`; returns {present, dirty}.
    std::pair<bool, bool> invalidate(std::uint64_t address) {
        std::list<Line>& set = set_of(address);
        const auto it = find(set, line_of(address));
        if (it == set.end()) return {false, false};
        const bool dirty = it->dirty;
        set.erase(it);
        return {true, dirty};
    }

    /// Marks the line of `address` dirty where it is held; returns whether it is.
    bool mark_dirty(std::uint64_t address) {
        std::list<Line>& set = set_of(address);
        const auto it = find(set, line_of(address));
        if (it != set.end()) it->dirty = true;
        return it != set.end();
    }

    bool contains(std::uint64_t address) {
        std::list<Line>& set = set_of(address);
        return find(set, line_of(address)) != set.end();
    }

    /// The lines set `s` holds, sorted.
    std::vector<std::uint64_t> resident_lines(std::size_t s) const {
        std::vector<std::uint64_t> lines;
        for (const Line& l : sets_[s]) lines.push_back(l.line);
        std::sort(lines.begin(), lines.end());
        return lines;
    }

    const cachebook::Counts& counts() const { return counts_; }

private:
    struct Line {
        std::uint64_t line;
        bool dirty;
    };
    std::uint64_t line_of(std::uint64_t address) const { return address / config_.line_bytes; }
    std::list<Line>& set_of(std::uint64_t address) { return sets_[line_of(address) % config_.sets]; }
    static std::list<Line>::iterator find(std::list<Line>& set, std::uint64_t line) {
        return std::find_if(set.begin(), set.end(), [&](const Line& l) { return l.line == line; });
    }

    cachebook::CacheConfig config_;
    std::vector<std::list<Line>> sets_;
    cachebook::Counts counts_;
};

/// One access's outcome in a cache under test (the model or the fast engine) against the list's.
inline void require_same_outcome(const cachebook::AccessResult& got, const ListCache::Outcome& want) {
    REQUIRE(got.hit == want.hit);
    REQUIRE(got.evicted == want.evicted);
    if (want.evicted) {
        REQUIRE(got.evicted_line == want.evicted_line);
        REQUIRE(got.dirty_evicted == want.dirty_evicted);
    }
}

/// After a run: the same counts, and every set holding the same lines.
template <typename CacheUnderTest>
void require_same_state(const CacheUnderTest& cache, const ListCache& expected, std::size_t sets) {
    REQUIRE(cache.total() == expected.counts());
    for (std::size_t s = 0; s < sets; ++s) {
        std::vector<std::uint64_t> held = cache.resident_lines(s);
        std::sort(held.begin(), held.end());
        REQUIRE(held == expected.resident_lines(s));
    }
}

/// Random small caches and addresses for the differential tests: 1-5 sets,
/// 1-20 ways, lines of 1-16 bytes, a third FIFO; a few addresses at the top
/// of the address space, where a line number's arithmetic could overflow.
class RandomCases {
public:
    explicit RandomCases(std::uint64_t seed) : rng_(seed) {}

    std::uint64_t pick(std::uint64_t lo, std::uint64_t hi) { return lo + rng_() % (hi - lo + 1); }

    cachebook::CacheConfig config() {
        const bool fifo = pick(0, 2) == 0;
        return cachebook::CacheConfig{pick(1, 5), pick(1, 20), std::size_t{1} << pick(0, 4),
                                      fifo ? cachebook::Policy::FIFO : cachebook::Policy::LRU};
    }

    /// A pool of addresses somewhat larger than the cache, so that lines come back.
    std::vector<std::uint64_t> addresses(const cachebook::CacheConfig& config) {
        std::vector<std::uint64_t> pool(pick(2, 3 * config.lines() + 2));
        for (auto& a : pool) a = pick(0, 19) == 0 ? ~std::uint64_t{0} - pick(0, 3) : pick(0, 4096);
        return pool;
    }

private:
    std::mt19937_64 rng_;
};

}  // namespace cachebook_test
