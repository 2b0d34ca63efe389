// The cache model, proved against the course notes' tables before any chapter uses it.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

#include "cachebook/cache.hpp"
#include "cachebook/trace.hpp"
#include "list_cache.hpp"
#include "six_orders_table.hpp"

using namespace cachebook;

namespace {

// The cache of the row and column miss table and the tiled transpose table:
// 4096 B, 64 B lines, 8-way, 8 sets, LRU.
CacheConfig small_cache() {
    return CacheConfig{8, 8, 64};
}

std::uint64_t transpose_misses(std::size_t n, std::size_t tile) {
    Cache cache(small_cache());
    for_each_transpose_access(n, tile, 8, [&](const Access& a) { cache.access(a.address, 0, a.write); });
    return cache.total().misses;
}

// Misses per inner iteration, to three decimals, as the course notes print them.
std::string per_iter(std::uint64_t misses, std::size_t n) {
    return fmt::format("{:.3f}", static_cast<double>(misses) / static_cast<double>(n * n * n));
}

struct Row {
    std::string a, b, c, total;
};

Row matmul_row(LoopOrder order, std::size_t lines, std::size_t tile = 0) {
    const std::size_t n = 64;
    Cache cache = abc_cache(CacheConfig::fully_associative(lines, 64));
    auto sink = [&](const Access& a) { cache.access(a.address, a.stream, a.write); };
    const MatmulLayout at = MatmulLayout::packed(n, 8, 64);
    if (tile == 0)
        for_each_matmul_access(order, n, 8, at, sink);
    else
        for_each_tiled_matmul_access(n, tile, 8, at, sink);
    return {per_iter(cache.stream(1).misses, n), per_iter(cache.stream(2).misses, n),
            per_iter(cache.stream(3).misses, n), per_iter(cache.total().misses, n)};
}

}  // namespace

TEST_CASE("a configuration's capacity is sets x ways x line bytes", "[cache]") {
    CHECK(small_cache().capacity_bytes() == 4096);
    const auto l1 = CacheConfig::from_capacity(48 * 1024, 12, 64);  // a 48 KiB 12-way L1
    CHECK(l1.sets == 64);
    CHECK(l1.ways == 12);
    CHECK(CacheConfig::fully_associative(32, 64).sets == 1);
    CHECK(CacheConfig::direct_mapped(32, 64).ways == 1);
}

TEST_CASE("invalid configurations are rejected with a reason", "[cache]") {
    CHECK_THROWS_WITH(Cache(CacheConfig{0, 8, 64}), Catch::Contains("sets"));
    CHECK_THROWS_WITH(Cache(CacheConfig{8, 0, 64}), Catch::Contains("ways"));
    CHECK_THROWS_WITH(Cache(CacheConfig{8, 8, 48}), Catch::Contains("power of two"));
    CHECK_THROWS_WITH(Cache(CacheConfig{8, 12, 64, Policy::PLRU}), Catch::Contains("PLRU"));
    CHECK_THROWS_WITH(CacheConfig::from_capacity(1000, 8, 64), Catch::Contains("whole number"));
    CHECK_THROWS_AS(parse_policy("mru"), std::invalid_argument);
}

TEST_CASE("a 12-way set keeps 12 lines and evicts the least recently used", "[cache]") {
    Cache c(CacheConfig::from_capacity(48 * 1024, 12, 64));
    const std::uint64_t set_stride = 64 * 64;  // same set, different tag
    for (std::uint64_t k = 0; k < 12; ++k) CHECK_FALSE(c.access(k * set_stride).hit);
    for (std::uint64_t k = 0; k < 12; ++k) CHECK(c.access(k * set_stride).hit);
    c.access(0);  // 0 becomes most recent; 1 is now the oldest
    const auto r = c.access(12 * set_stride);
    CHECK(r.evicted);
    CHECK(r.evicted_line == set_stride / 64);
    CHECK(c.total() == Counts{13, 13, 1, 0});
}

TEST_CASE("counts are kept per stream and in total", "[cache]") {
    Cache c(CacheConfig::fully_associative(2, 64));
    const int a = c.add_stream("A"), b = c.add_stream("B");
    c.access(0, a);
    c.access(8, a);
    c.access(64, b);
    c.access(128, b, true);  // evicts line 0
    CHECK(c.stream(a) == Counts{1, 1, 0, 0});
    CHECK(c.stream(b) == Counts{0, 2, 1, 0});
    CHECK(c.total() == Counts{1, 3, 1, 0});
    CHECK(c.stream_name(b) == "B");
    c.access(0, a);   // evicts line 1 (clean); line 2 is dirty and stays
    c.access(64, a);  // evicts line 2, dirty
    CHECK(c.total().dirty_evictions == 1);
}

TEST_CASE("FIFO ignores hits, LRU does not", "[cache]") {
    for (Policy p : {Policy::LRU, Policy::FIFO}) {
        Cache c(CacheConfig{1, 2, 64, p});
        c.access(0);
        c.access(64);
        c.access(0);                   // a hit: refreshes line 0 under LRU only
        const auto r = c.access(128);  // evicts line 1 under LRU, line 0 under FIFO
        CHECK(r.evicted_line == (p == Policy::LRU ? 1u : 0u));
    }
}

TEST_CASE("tree-PLRU on 4 ways evicts the way the tree points at", "[cache]") {
    Cache c(CacheConfig{1, 4, 64, Policy::PLRU});
    for (std::uint64_t k = 0; k < 4; ++k) c.access(k * 64);
    c.access(0);  // touches way 0: the tree now points right, then to way 2
    CHECK(c.access(4 * 64).evicted_line == 2);
}

TEST_CASE("Random replacement is reproducible for a seed", "[cache]") {
    auto run = [](std::uint64_t seed) {
        Cache c(CacheConfig{1, 4, 64, Policy::Random, seed});
        for (std::uint64_t k = 0; k < 1000; ++k) c.access((k * 7919 % 23) * 64);
        return c.total();
    };
    CHECK(run(3) == run(3));
}

TEST_CASE("a 4 KiB 8-way cache gives the course notes' row and column miss table", "[cache][reference]") {
    const auto [n, row, column] = GENERATE(table<std::size_t, std::uint64_t, std::uint64_t>({
        {16, 32, 32},
        {32, 128, 1024},
        {48, 288, 2304},
        {73, 667, 4573},
    }));
    INFO("n = " << n);
    CHECK(simulate(small_cache(), row_major_trace(n)).misses == row);
    CHECK(simulate(small_cache(), col_major_trace(n)).misses == column);
}

TEST_CASE("the row and column miss table needs set associativity: direct-mapped and fully associative differ",
          "[cache][reference]") {
    CHECK(simulate(CacheConfig::direct_mapped(64, 64), col_major_trace(73)).misses != 4573);
    CHECK(simulate(CacheConfig::fully_associative(64, 64), col_major_trace(48)).misses != 2304);
}

TEST_CASE("the same cache gives the course notes' tiled transpose table for 73 x 73", "[cache][reference]") {
    const auto [tile, misses] = GENERATE(table<std::size_t, std::uint64_t>({
        {0, 5996},
        {4, 2603},
        {8, 2036},
        {16, 1960},
        {32, 1714},
    }));
    INFO("tile " << tile);
    CHECK(transpose_misses(73, tile) == misses);
}

TEST_CASE("4- and 32-line fully associative LRU caches give the course notes' six loop orders tables",
          "[cache][reference]") {
    const auto [lines, order, a, b, c, total] = GENERATE(from_range(cachebook_test::notes_six_orders()));
    INFO(lines << " lines, order " << order_name(order));
    const Row got = matmul_row(order, lines);
    CHECK(got.a == a);
    CHECK(got.b == b);
    CHECK(got.c == c);
    CHECK(got.total == total);
}

TEST_CASE("tiled ikj in the 32-line cache gives the course notes' tiled rows", "[cache][reference]") {
    const auto [tile, a, b, c, total] =
        GENERATE(table<std::size_t, const char*, const char*, const char*, const char*>({
            {8, "0.016", "0.016", "0.002", "0.033"},
            {16, "0.008", "0.125", "0.008", "0.141"},
        }));
    INFO("tile " << tile);
    const Row got = matmul_row(LoopOrder::ikj, 32, tile);
    CHECK(got.a == a);
    CHECK(got.b == b);
    CHECK(got.c == c);
    CHECK(got.total == total);
}

TEST_CASE("trace generators visit every cell once", "[trace]") {
    CHECK(row_major_trace(4) ==
          std::vector<std::uint64_t>{0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120});
    const auto col = col_major_trace(4);
    CHECK(std::vector<std::uint64_t>(col.begin(), col.begin() + 6) == std::vector<std::uint64_t>{0, 32, 64, 96, 8, 40});
    auto tiled = visit_order(7, 3);
    std::sort(tiled.begin(), tiled.end());
    CHECK(tiled == visit_order(7));
    std::size_t count = 0;
    for_each_matmul_access(LoopOrder::kji, 5, 8, MatmulLayout::packed(5, 8, 64), [&](const Access&) { ++count; });
    CHECK(count == 3 * 125);
    count = 0;
    for_each_tiled_matmul_access(7, 3, 8, MatmulLayout::packed(7, 8, 64), [&](const Access&) { ++count; });
    CHECK(count == 3 * 343);
    CHECK(MatmulLayout::packed(5, 8, 64).b == 256);  // 200 bytes rounded to a whole line
    CHECK(parse_order("kij") == LoopOrder::kij);
    CHECK_THROWS_AS(parse_order("ijj"), std::invalid_argument);
}

TEST_CASE("the highest address is a line like any other, not an empty way", "[cache]") {
    // With 1-byte lines the line number of address 2^64-1 is 2^64-1 itself.
    for (Policy p : {Policy::LRU, Policy::FIFO, Policy::Random, Policy::PLRU}) {
        Cache c(CacheConfig{2, 2, 1, p});
        const std::uint64_t top = ~std::uint64_t{0};
        CHECK_FALSE(c.contains(top));
        CHECK_FALSE(c.access(top).hit);
        CHECK(c.access(top).hit);
        CHECK(c.contains(top));
        CHECK(c.resident_lines(1) == std::vector<std::uint64_t>{top});
        CHECK(c.total() == Counts{1, 1, 0, 0});
    }
}

TEST_CASE("the model agrees with a plain list per set", "[cache][differential]") {
    // LRU and FIFO against one list per set (tests/list_cache.hpp), on random
    // accesses: every outcome, every count and every set's lines.
    cachebook_test::RandomCases random(20261130);
    for (int t = 0; t < 1000; ++t) {
        const CacheConfig config = random.config();
        Cache cache(config);
        cachebook_test::ListCache expected(config);
        const std::vector<std::uint64_t> pool = random.addresses(config);
        INFO(fmt::format("case {}: {}", t, config.describe()));
        for (int op = 0; op < 400; ++op) {
            const std::uint64_t address = pool[random.pick(0, pool.size() - 1)];
            const bool write = random.pick(0, 2) == 0;
            const AccessResult r = cache.access(address, 0, write);
            cachebook_test::require_same_outcome(r, expected.access(address, write));
            REQUIRE(cache.contains(address));
        }
        cachebook_test::require_same_state(cache, expected, config.sets);
    }
}

TEST_CASE("reset() empties the cache and zeroes the counts but keeps the streams", "[cache]") {
    Cache c(CacheConfig{2, 2, 64, Policy::Random, 7});
    const int a = c.add_stream("A");
    std::vector<bool> first;
    for (std::uint64_t k = 0; k < 50; ++k) first.push_back(c.access((k * 37 % 11) * 64, a).hit);
    c.reset();
    CHECK(c.total() == Counts{});
    CHECK(c.resident_lines(0).empty());
    CHECK(c.stream_name(a) == "A");
    std::vector<bool> again;
    for (std::uint64_t k = 0; k < 50; ++k) again.push_back(c.access((k * 37 % 11) * 64, a).hit);
    CHECK(again == first);  // the Random policy's generator starts over too
    CHECK(c.stream(a) == c.total());
}
