// cachesim's fast cache engine (tools/cachesim/fast_cache.hpp): held to the
// plain model of common/ (cachebook::Cache) access by access, to a list per
// set under invalidations and write-backs, and its batches to its single accesses.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "cachebook/cache.hpp"
#include "fast_cache.hpp"
#include "list_cache.hpp"

using namespace cachebook;
using cachesim::FastCache;

namespace {

// A random geometry: any policy, sets and ways not always powers of two
// (tree-PLRU needs ways that are), lines of 1 to 64 bytes.
CacheConfig random_config(std::mt19937_64& rng) {
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    const auto policy = static_cast<Policy>(pick(0, 3));
    CacheConfig config;
    config.sets = pick(0, 1) == 0 ? std::size_t{1} << pick(0, 4) : pick(1, 12);
    config.ways = policy == Policy::PLRU ? std::size_t{1} << pick(0, 5) : pick(1, 20);
    config.line_bytes = std::size_t{1} << pick(0, 6);
    config.policy = policy;
    config.seed = pick(1, 1000);
    return config;
}

// Two caches gave one access the same outcome, field by field.
void require_same(const AccessResult& a, const AccessResult& b) {
    REQUIRE(a.hit == b.hit);
    REQUIRE(a.evicted == b.evicted);
    REQUIRE(a.dirty_evicted == b.dirty_evicted);
    REQUIRE(a.evicted_line == b.evicted_line);
    REQUIRE(a.set == b.set);
    REQUIRE(a.way == b.way);
}

}  // namespace

TEST_CASE("the fast engine gives every access the outcome the plain model gives", "[cachesim][differential]") {
    // Random traces over a pool of addresses a few times the cache's lines (so
    // both hits and evictions are common), with runs of one line now and then
    // (the fast engine's shortcut for the previous line), on two streams.
    // Where the fast engine can batch (LRU or FIFO, up to 8 ways), some stretches
    // go through access_batch() and are compared by their counts and the lines held.
    std::mt19937_64 rng(20261202);
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    for (int t = 0; t < 1500; ++t) {
        const CacheConfig config = random_config(rng);
        INFO(fmt::format("case {}: {} (seed {})", t, config.describe(), config.seed));
        Cache plain(config);
        FastCache fast(config);
        const int stream = plain.add_stream("other");
        REQUIRE(fast.add_stream("other") == stream);
        std::vector<std::uint64_t> pool(pick(2, 3 * config.lines() + 2));
        for (auto& a : pool) a = pick(0, 19) == 0 ? ~std::uint64_t{0} - pick(0, 300) : pick(0, 1 << 14);
        std::uint64_t address = pool[0];
        for (int op = 0; op < 500; ++op) {
            if (pick(0, 3) != 0) address = pool[pick(0, pool.size() - 1)];
            if (fast.batch_ready() && pick(0, 49) == 0) {
                std::vector<std::uint64_t> refs(pick(1, 40));
                for (auto& r : refs) r = (pool[pick(0, pool.size() - 1)] & ~std::uint64_t{1}) | pick(0, 1);
                fast.access_batch(refs.data(), refs.size());
                for (const std::uint64_t r : refs) plain.access(r & ~std::uint64_t{1}, 0, (r & 1) != 0);
                REQUIRE(fast.total() == plain.total());
                continue;
            }
            const bool write = pick(0, 2) == 0;
            const int on = pick(0, 1) == 0 ? 0 : stream;
            require_same(fast.access(address, on, write), plain.access(address, on, write));
        }
        REQUIRE(fast.total() == plain.total());
        REQUIRE(fast.stream(stream) == plain.stream(stream));
        for (std::size_t s = 0; s < config.sets; ++s) REQUIRE(fast.resident_lines(s) == plain.resident_lines(s));
    }
}

TEST_CASE("the fast engine agrees with a plain list per set, with invalidations and write-backs",
          "[cachesim][differential]") {
    // Small sets keep an order byte per way, larger ones (over 8 ways) stamps:
    // both against one list per set (tests/list_cache.hpp), on random operations.
    cachebook_test::RandomCases random(20261130);
    for (int t = 0; t < 2000; ++t) {
        const CacheConfig config = random.config();
        FastCache cache(config);
        cachebook_test::ListCache expected(config);
        const std::vector<std::uint64_t> pool = random.addresses(config);
        INFO(fmt::format("case {}: {}", t, config.describe()));
        for (int op = 0; op < 400; ++op) {
            const std::uint64_t address = pool[random.pick(0, pool.size() - 1)];
            const auto kind = random.pick(0, 19);
            if (kind == 0) {  // an inclusive lower level drops the line
                const FastCache::Invalidated gone = cache.invalidate(address);
                const auto [present, dirty] = expected.invalidate(address);
                REQUIRE(gone.present == present);
                if (present) REQUIRE(gone.dirty == dirty);
            } else if (kind == 1) {  // a write-back from the level above
                REQUIRE(cache.mark_dirty(address) == expected.mark_dirty(address));
            } else {
                const bool write = random.pick(0, 2) == 0;
                const AccessResult r = cache.access(address, 0, write);
                cachebook_test::require_same_outcome(r, expected.access(address, write));
            }
            REQUIRE(cache.contains(address) == expected.contains(address));
        }
        cachebook_test::require_same_state(cache, expected, config.sets);
    }
}

TEST_CASE("access_batch() runs only where it is exact", "[cachesim]") {
    CHECK(FastCache(CacheConfig{64, 8, 64}).batch_ready());
    CHECK(FastCache(CacheConfig{1, 1, 2, Policy::FIFO}).batch_ready());
    CHECK_FALSE(FastCache(CacheConfig{4, 4, 1}).batch_ready());  // 1-byte lines: bit 0 is an address bit
    CHECK_FALSE(FastCache(CacheConfig{4, 9, 64}).batch_ready());
    CHECK_FALSE(FastCache(CacheConfig{3, 4, 64}).batch_ready());
    CHECK_FALSE(FastCache(CacheConfig{4, 4, 64, Policy::PLRU}).batch_ready());
    CHECK_FALSE(FastCache(CacheConfig{4, 4, 64, Policy::Random}).batch_ready());
    FastCache plru(CacheConfig{4, 4, 64, Policy::PLRU});
    const std::uint64_t ref = 64;
    CHECK_THROWS_AS(plru.access_batch(&ref, 1), std::logic_error);
}

TEST_CASE("access_batch() leaves the counts and state access() would, one by one", "[cachesim][differential]") {
    // Two caches side by side: batches on one, the same accesses one at a time
    // on the other, with single accesses, invalidations and write-backs between
    // batches. Every count, every way's line and dirty bit, and what the next
    // single access finds (its set and way too) must agree.
    std::mt19937_64 rng(20261201);
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    for (int t = 0; t < 1500; ++t) {
        const bool fifo = pick(0, 2) == 0;
        const CacheConfig config{std::size_t{1} << pick(0, 4), pick(1, 8), std::size_t{2} << pick(0, 4),
                                 fifo ? Policy::FIFO : Policy::LRU};
        FastCache batched(config), single(config);
        REQUIRE(batched.batch_ready());
        std::vector<std::uint64_t> pool(pick(2, 3 * config.lines() + 2));
        for (auto& a : pool) a = pick(0, 19) == 0 ? ~std::uint64_t{0} - pick(0, 300) : pick(0, 4096);
        INFO(fmt::format("case {}: {}", t, config.describe()));
        std::vector<std::uint64_t> refs;
        for (int round = 0; round < 12; ++round) {
            refs.resize(pick(0, 60));
            for (auto& r : refs) {
                // Runs of one line now and then, for the fast path on the previous line.
                r = pick(0, 3) == 0 && &r != refs.data() ? (&r)[-1] : pool[pick(0, pool.size() - 1)];
                r = (r & ~std::uint64_t{1}) | pick(0, 1);
            }
            const Counts before = batched.total();
            const Counts got = batched.access_batch(refs.data(), refs.size());
            for (const std::uint64_t r : refs) single.access(r & ~std::uint64_t{1}, 0, (r & 1) != 0);
            REQUIRE(batched.total() == single.total());
            REQUIRE(batched.stream(0) == single.stream(0));
            REQUIRE(got.hits == batched.total().hits - before.hits);
            REQUIRE(got.misses == batched.total().misses - before.misses);
            REQUIRE(got.evictions == batched.total().evictions - before.evictions);
            REQUIRE(got.dirty_evictions == batched.total().dirty_evictions - before.dirty_evictions);
            for (std::size_t s = 0; s < config.sets; ++s)
                REQUIRE(batched.resident_lines(s) == single.resident_lines(s));
            // Between batches: a single access, an invalidation or a write-back, on both.
            const std::uint64_t address = pool[pick(0, pool.size() - 1)];
            const auto kind = pick(0, 3);
            if (kind == 0) {
                const FastCache::Invalidated a = batched.invalidate(address), b = single.invalidate(address);
                REQUIRE(a.present == b.present);
                REQUIRE(a.dirty == b.dirty);
            } else if (kind == 1) {
                REQUIRE(batched.mark_dirty(address) == single.mark_dirty(address));
            } else {
                // The previous line again (the fast path) or any line.
                const std::uint64_t at = kind == 2 && !refs.empty() ? refs.back() & ~std::uint64_t{1} : address;
                const bool write = pick(0, 1) == 1;
                require_same(batched.access(at, 0, write), single.access(at, 0, write));
            }
        }
        // Every line's dirty bit: dropping it says whether it was written.
        for (std::size_t s = 0; s < config.sets; ++s)
            for (const std::uint64_t line : single.resident_lines(s)) {
                const FastCache::Invalidated a = batched.invalidate(line * config.line_bytes);
                const FastCache::Invalidated b = single.invalidate(line * config.line_bytes);
                REQUIRE(a.present);
                REQUIRE(a.dirty == b.dirty);
            }
        REQUIRE(batched.total() == single.total());
    }
}
