// Miss kinds and Belady's optimal replacement (cachebook/miss_kinds.hpp), on
// traces worked by hand and on random traces against the other policies.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/miss_kinds.hpp"
#include "list_cache.hpp"

using namespace cachebook;

namespace {

// The textbook page-reference string, one 64-byte line per page number.
std::vector<std::uint64_t> classic_trace() {
    std::vector<std::uint64_t> addresses;
    for (const std::uint64_t page : {1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5}) addresses.push_back(page * 64);
    return addresses;
}

std::uint64_t misses_of(const CacheConfig& config, const std::vector<std::uint64_t>& addresses) {
    Cache cache(config);
    for (const std::uint64_t a : addresses) cache.access(a);
    return cache.total().misses;
}

CacheConfig fully(std::size_t lines, Policy policy = Policy::LRU) {
    CacheConfig c = CacheConfig::fully_associative(lines, 64);
    c.policy = policy;
    return c;
}

// The fewest misses of any choice of victims, found by trying them all: the
// definition OPT must meet. One set of `ways` lines; small traces only.
std::uint64_t fewest_misses(const std::vector<std::uint64_t>& lines, std::size_t at, std::vector<std::uint64_t> held,
                            std::size_t ways) {
    if (at == lines.size()) return 0;
    if (std::find(held.begin(), held.end(), lines[at]) != held.end()) return fewest_misses(lines, at + 1, held, ways);
    if (held.size() < ways) {
        held.push_back(lines[at]);
        return 1 + fewest_misses(lines, at + 1, held, ways);
    }
    std::uint64_t best = lines.size();
    for (std::size_t w = 0; w < held.size(); ++w) {
        std::vector<std::uint64_t> next = held;
        next[w] = lines[at];
        best = std::min(best, fewest_misses(lines, at + 1, next, ways));
    }
    return 1 + best;
}

}  // namespace

TEST_CASE("OPT, LRU and FIFO on the classic reference string, with Belady's anomaly", "[miss_kinds]") {
    // 1 2 3 4 1 2 5 1 2 3 4 5 in a fully associative cache.
    // OPT, 3 lines: 1 2 3 miss; 4 misses, evicting 3 (next used last of 1 2 3);
    // 1 2 hit; 5 misses, evicting 4; 1 2 hit; 3 misses, 4 misses (1 and 2 are
    // never used again); 5 hits: 7 misses. 4 lines: 1 2 3 4 miss; 1 2 hit; 5
    // misses, evicting 4; 1 2 3 hit; 4 misses; 5 hits: 6 misses.
    // LRU, 3 lines: only the hits 1 2 after the 5 (ten misses); 4 lines: 1 2 3 4,
    // 5, 3, 4, 5 miss (eight). FIFO, 3 lines: 1 2 3 4 1 2 5 miss, 1 2 hit,
    // 3 4 miss, 5 hits (nine); 4 lines: all but the first 1 2 miss (ten): more
    // lines, more misses.
    const std::vector<std::uint64_t> trace = classic_trace();
    CHECK(optimal_misses(fully(3), trace) == 7);
    CHECK(optimal_misses(fully(4), trace) == 6);
    CHECK(misses_of(fully(3), trace) == 10);
    CHECK(misses_of(fully(4), trace) == 8);
    CHECK(misses_of(fully(3, Policy::FIFO), trace) == 9);
    CHECK(misses_of(fully(4, Policy::FIFO), trace) == 10);
}

TEST_CASE("the three kinds on hand-worked traces", "[miss_kinds]") {
    // Lines 0 2 0 2 (1-byte lines) direct-mapped into 2 sets: 0 and 2 share set 0
    // and evict each other, 4 misses. A fully associative LRU cache of 2 lines
    // misses only on the first 0 and 2. Compulsory 2, capacity 2 - 2 = 0,
    // conflict 4 - 2 = 2.
    const std::vector<std::uint64_t> pingpong{0, 2, 0, 2};
    CHECK(classify_misses(CacheConfig::direct_mapped(2, 1), pingpong) == MissKinds{4, 2, 0, 2});

    // Lines 0 1 2 0 1 2 in the same two caches. Direct-mapped: set 0 sees
    // 0 2 0 2 (4 misses), set 1 sees 1 1 (1 miss): 5. Fully associative LRU
    // of 2 lines on a cycle of 3 misses every time: 6. Compulsory 3, capacity
    // 6 - 3 = 3, conflict 5 - 6 = -1: the sets did better than one big set.
    const std::vector<std::uint64_t> cycle{0, 1, 2, 0, 1, 2};
    CHECK(classify_misses(CacheConfig::direct_mapped(2, 1), cycle) == MissKinds{5, 3, 3, -1});
    // OPT, fully associative: 0 1 2 miss (2 evicts 1, wanted after 0);
    // 0 hits; 1 misses, evicting 0 (never used again); 2 hits: 4 misses.
    // Direct-mapped, OPT has no choice to make: the same 5 as LRU.
    CHECK(optimal_misses(CacheConfig::fully_associative(2, 1), cycle) == 4);
    CHECK(optimal_misses(CacheConfig::direct_mapped(2, 1), cycle) == 5);

    // split_misses() keeps the geometry's compulsory and capacity counts and
    // measures conflicts from the misses it is given: OPT's 4 on the cycle.
    CHECK(split_misses(4, CacheConfig::direct_mapped(2, 1), cycle) == MissKinds{4, 3, 3, -2});
}

TEST_CASE("the kinds of an empty trace, and of one that fits", "[miss_kinds]") {
    const std::vector<std::uint64_t> none;
    CHECK(classify_misses(CacheConfig{8, 8, 64}, none) == MissKinds{});
    CHECK(optimal_misses(CacheConfig{8, 8, 64}, none) == 0);
    // 16 lines walked twice in a 64-line cache: only the first touches miss.
    std::vector<std::uint64_t> twice;
    for (int round = 0; round < 2; ++round)
        for (std::uint64_t line = 0; line < 16; ++line) twice.push_back(line * 64 + 8);
    CHECK(classify_misses(CacheConfig{8, 8, 64}, twice) == MissKinds{16, 16, 0, 0});
    CHECK(optimal_misses(CacheConfig{8, 8, 64}, twice) == 16);
}

TEST_CASE("OPT counts hits, evictions and dirty evictions", "[miss_kinds]") {
    // One line of 64 B: write 0, read 64 (evicts the written 0), read 0
    // (evicts the clean 64), read 0 again (hit). Three misses, two evictions,
    // one of them dirty.
    const std::vector<std::uint64_t> addresses{0, 64, 0, 0};
    const std::vector<bool> writes{true, false, false, false};
    CHECK(optimal_counts(CacheConfig::fully_associative(1, 64), addresses, writes) == Counts{1, 3, 2, 1});
    CHECK(optimal_counts(CacheConfig::fully_associative(1, 64), addresses) == Counts{1, 3, 2, 0});
    CHECK_THROWS_AS(optimal_counts(CacheConfig::fully_associative(1, 64), addresses, {true}), std::invalid_argument);
}

TEST_CASE("a bad geometry is refused", "[miss_kinds]") {
    const std::vector<std::uint64_t> trace{0};
    CHECK_THROWS_AS(optimal_misses(CacheConfig{0, 1, 64}, trace), std::invalid_argument);
    CHECK_THROWS_AS(classify_misses(CacheConfig{1, 1, 48}, trace), std::invalid_argument);
}

TEST_CASE("OPT is the fewest misses of any choice of victims", "[miss_kinds][differential]") {
    // Every possible eviction tried, on short traces over a few lines.
    cachebook_test::RandomCases random(20261202);
    for (int t = 0; t < 300; ++t) {
        const std::size_t ways = random.pick(1, 3);
        std::vector<std::uint64_t> lines(random.pick(1, 11));
        for (auto& line : lines) line = random.pick(0, ways + 2);
        INFO(fmt::format("case {}: {} ways, {} accesses", t, ways, lines.size()));
        CHECK(optimal_misses(CacheConfig::fully_associative(ways, 1), lines) == fewest_misses(lines, 0, {}, ways));
    }
}

TEST_CASE("on random traces: OPT bounds every policy, the kinds add up", "[miss_kinds][differential]") {
    cachebook_test::RandomCases random(20261203);
    for (int t = 0; t < 500; ++t) {
        const std::size_t sets = std::size_t{1} << random.pick(0, 3);
        const std::size_t ways = std::size_t{1} << random.pick(0, 3);
        const std::size_t line_bytes = std::size_t{1} << random.pick(0, 4);
        CacheConfig config{sets, ways, line_bytes};
        std::vector<std::uint64_t> addresses(random.pick(0, 300));
        const std::uint64_t span = 3 * config.capacity_bytes();
        for (auto& a : addresses) a = random.pick(0, span);
        INFO(fmt::format("case {}: {}, {} accesses", t, config.describe(), addresses.size()));

        const std::uint64_t opt = optimal_misses(config, addresses);
        for (const Policy p : {Policy::LRU, Policy::FIFO, Policy::Random, Policy::PLRU}) {
            config.policy = p;
            const MissKinds k = classify_misses(config, addresses);
            CHECK(k.misses == misses_of(config, addresses));
            CHECK(opt <= k.misses);
            CHECK(k.compulsory <= opt);  // no policy avoids a first touch
            CHECK(static_cast<std::int64_t>(k.compulsory) + k.capacity + k.conflict ==
                  static_cast<std::int64_t>(k.misses));
            CHECK(k.capacity >= 0);
        }
        // Fully associative LRU is its own reference: no conflicts (the model's
        // one set scanned way by way against the kinds' list of lines).
        const CacheConfig one_set = CacheConfig::fully_associative(config.lines(), line_bytes);
        CHECK(classify_misses(one_set, addresses).conflict == 0);
        CHECK(optimal_misses(one_set, addresses) <= misses_of(one_set, addresses));
    }
}
