// The prefetcher in front of the cache model: next-line and the stride table, on traces small enough
// to follow by hand. Each expected count is worked out in the comment above it, access by access.
// Lines are 64 bytes; "line L" is bytes 64 L to 64 L + 63.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/prefetch.hpp"
#include "cachebook/trace.hpp"

using namespace cachebook;

namespace Catch {
template <>
struct StringMaker<PrefetchCounts> {
    static std::string convert(const PrefetchCounts& c) {
        return "{accesses " + std::to_string(c.demand_accesses) + ", misses " + std::to_string(c.demand_misses) +
               ", issued " + std::to_string(c.issued) + ", useful " + std::to_string(c.useful) + "}";
    }
};
}  // namespace Catch

namespace {

PrefetchCounts run(const std::vector<std::uint64_t>& addresses, PrefetchKind kind, std::size_t cache_lines,
                   std::size_t degree = 1) {
    PrefetchingCache cache(CacheConfig::fully_associative(cache_lines, 64), PrefetchConfig{kind, degree});
    for (std::uint64_t a : addresses) cache.access(a);
    return cache.counts();
}

PrefetchCounts counts(std::uint64_t accesses, std::uint64_t misses, std::uint64_t issued, std::uint64_t useful) {
    return PrefetchCounts{accesses, misses, issued, useful};
}

std::vector<std::uint64_t> times_64(const std::vector<std::uint64_t>& lines) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t line : lines) out.push_back(line * 64);
    return out;
}

}  // namespace

TEST_CASE("prefetch: a row walk of 32 doubles (4 lines) in an 8-line cache", "[prefetch]") {
    std::vector<std::uint64_t> row;
    for (std::uint64_t a = 0; a < 256; a += 8) row.push_back(a);
    // None: each of the 4 lines misses on its first double.
    CHECK(run(row, PrefetchKind::none, 8) == counts(32, 4, 0, 0));
    // Next-line: the miss at 0 fetches line 1, whose first double (64) hits: useful. Line 2 misses
    // and fetches line 3, which hits. Misses 2 (lines 0, 2), issued 2, useful 2: a useful
    // prefetch is counted once per line, not once per hit on it (8 hits on line 1 count 1).
    CHECK(run(row, PrefetchKind::next_line, 8) == counts(32, 2, 2, 2));
    // Stride: 0, 8, 16 is the stride 8 twice, so from 16 on each access asks for the line of
    // address + 8. That is its own line until 56, which asks for 64: line 1, issued. 120 asks for
    // line 2, 184 for line 3, 248 for line 4, which the walk never reads. Misses 1 (line 0),
    // issued 4, useful 3.
    CHECK(run(row, PrefetchKind::stride, 8) == counts(32, 1, 4, 3));
}

TEST_CASE("prefetch: a column walk, two columns of 8 rows of 16 doubles, in a 4-line cache", "[prefetch]") {
    // Row i starts at 128 i: column 0 reads lines 0, 2, ..., 14, column 1 (from byte 8) the same lines.
    std::vector<std::uint64_t> column;
    for_each_column_walk(8, 2, 16, 8, [&](std::uint64_t a) { column.push_back(a); });
    REQUIRE(column.size() == 16);
    REQUIRE(column[8] == 8);
    // None: 8 lines do not fit in 4, so column 1 finds none of column 0's lines: 16 misses.
    CHECK(run(column, PrefetchKind::none, 4) == counts(16, 16, 0, 0));
    // Next-line: each miss on line 2i fetches line 2i + 1, which no access reads; every access still
    // misses, and each fetch takes a way. Misses 16, issued 16, useful 0.
    CHECK(run(column, PrefetchKind::next_line, 4) == counts(16, 16, 16, 0));
    // Stride: column 0: 0, 128, 256 miss; the third confirms the stride 128 and fetches line 6;
    // then lines 6, 8, 10, 12, 14 hit, each fetching the next (8, 10, 12, 14, 16): 3 misses,
    // 6 issued, 5 useful. Column 1 starts at 8: the stride 8 - 896 is new, 136 starts the stride
    // 128 again (both miss), 264 misses and confirms it, fetching line 6 (LRU evicts line 16,
    // fetched in vain). Lines 6 to 14 hit again and fetch 8 to 16: 3 misses, 6 issued, 5 useful.
    CHECK(run(column, PrefetchKind::stride, 4) == counts(16, 6, 12, 10));
}

TEST_CASE("prefetch: a stride that changes from 64 to 256 bytes", "[prefetch]") {
    const std::vector<std::uint64_t> trace = {0, 64, 128, 192, 448, 704, 960, 1216};  // lines 0 1 2 3 7 11 15 19
    CHECK(run(trace, PrefetchKind::none, 32) == counts(8, 8, 0, 0));
    // Next-line: 0 misses and fetches 1, which hits; 128 misses and fetches 3, which hits; 448, 704,
    // 960, 1216 miss and fetch lines 8, 12, 16, 20, none read. Misses 6, issued 6, useful 2.
    CHECK(run(trace, PrefetchKind::next_line, 32) == counts(8, 6, 6, 2));
    // Stride: 0, 64, 128 miss; 128 confirms 64 and fetches line 3; 192 hits it and fetches line 4.
    // 448 moves by 256: a new stride, seen once, misses. 704 misses and confirms 256: fetches line
    // 15; 960 hits and fetches 19; 1216 hits and fetches 23. Misses 5, issued 5 (lines 3, 4, 15,
    // 19, 23), useful 3 (3, 15, 19).
    CHECK(run(trace, PrefetchKind::stride, 32) == counts(8, 5, 5, 3));
}

TEST_CASE("prefetch: a random walk over lines defeats the stride table", "[prefetch]") {
    // Strides in lines: -3 +7 -9 +7 +7 -11 +9 -11. Only 0, 7, 14 moves by the same stride twice.
    const auto trace = times_64({5, 2, 9, 0, 7, 14, 3, 12, 1});
    CHECK(run(trace, PrefetchKind::none, 32) == counts(9, 9, 0, 0));
    // Next-line: every miss fetches the line after it (6, 3, 10, 1, 8, 15, 13). Two of them are
    // read by chance: 3 (fetched after 2) and 1 (fetched after 0). Misses 7, issued 7, useful 2.
    CHECK(run(trace, PrefetchKind::next_line, 32) == counts(9, 7, 7, 2));
    // Stride: 14 confirms +7 lines and fetches line 21, which never comes. Misses 9, issued 1, useful 0.
    CHECK(run(trace, PrefetchKind::stride, 32) == counts(9, 9, 1, 0));
}

// The places where an off-by-one would change a count: the stride must be seen exactly twice (not
// once, not three times); the next line of the last byte of line 1 is line 2; a stride prefetch
// within a line is not one; the degree fetches exactly that many strides ahead; a table of k
// streams follows k streams, not k - 1.
TEST_CASE("prefetch: off-by-one checks at every boundary of the model", "[prefetch]") {
    SECTION("the stride table answers on the third access, after two equal strides") {
        StrideTable table(1);
        CHECK_FALSE(table.observe(0, 0).has_value());   // no stride yet
        CHECK_FALSE(table.observe(0, 8).has_value());   // the stride 8, once
        CHECK(table.observe(0, 16) == 8);               // twice
        CHECK(table.observe(0, 24) == 8);               // and on
        CHECK_FALSE(table.observe(0, 48).has_value());  // the stride 24, once
        CHECK(table.observe(0, 72) == 24);
        CHECK_FALSE(table.observe(0, 72).has_value());  // stride 0 is not a stream
        CHECK_FALSE(table.observe(0, 72).has_value());
        CHECK(table.observe(0, 40) == std::nullopt);  // -32, once
        CHECK(table.observe(0, 8) == -32);            // downwards, twice
    }
    SECTION("next-line from the last byte of line 1 fetches line 2, all of it, and nothing more") {
        PrefetchingCache cache(CacheConfig::fully_associative(8, 64), PrefetchConfig{PrefetchKind::next_line});
        cache.access(127);
        CHECK(cache.cache().contains(64));
        CHECK(cache.cache().contains(128));
        CHECK(cache.cache().contains(191));
        CHECK_FALSE(cache.cache().contains(192));
        CHECK_FALSE(cache.cache().contains(63));
        CHECK(cache.counts() == counts(1, 1, 1, 0));
    }
    SECTION("a stride of one double fetches the next line only from the line's last double") {
        PrefetchingCache cache(CacheConfig::fully_associative(8, 64), PrefetchConfig{PrefetchKind::stride});
        for (std::uint64_t a = 0; a <= 48; a += 8) cache.access(a);
        CHECK(cache.counts().issued == 0);
        CHECK_FALSE(cache.cache().contains(64));
        cache.access(56);
        CHECK(cache.counts().issued == 1);
        CHECK(cache.cache().contains(64));
    }
    SECTION("degree 2 fetches two strides ahead, and a line already fetched is not fetched again") {
        // 0, 64, 128 miss; 128 fetches lines 3 and 4; 192 hits line 3 and fetches line 4 (cached:
        // dropped) and line 5. Misses 3, issued 3, useful 1.
        CHECK(run({0, 64, 128, 192}, PrefetchKind::stride, 16, 2) == counts(4, 3, 3, 1));
        // Next-line with degree 2: the miss on line 0 fetches lines 1 and 2, both read. Line 3 misses.
        CHECK(run(times_64({0, 1, 2, 3}), PrefetchKind::next_line, 16, 2) == counts(4, 2, 4, 2));
    }
    SECTION("a walk downwards stops at address 0") {
        // 1024, 960, 896: -64 twice, fetch line 13; 832 hits it and fetches line 12.
        CHECK(run({1024, 960, 896, 832}, PrefetchKind::stride, 16) == counts(4, 3, 2, 1));
        CHECK(run({128, 64, 0}, PrefetchKind::stride, 16) == counts(3, 3, 0, 0));
    }
    SECTION("a table of 3 follows three interleaved streams; a table of 2 loses each before its third access") {
        // Streams 1, 2, 3 each walk 4 lines, far apart, taking turns. With 3 entries each stream
        // confirms on its third access, fetches its fourth line (useful) and then a fifth (not):
        // per stream 3 misses, 2 issued, 1 useful. With 2 entries, each stream's entry has been
        // taken by the other two when its turn comes again: nothing is ever confirmed.
        for (std::size_t entries : {std::size_t{3}, std::size_t{2}}) {
            PrefetchingCache cache(abc_cache(CacheConfig::fully_associative(64, 64)),
                                   PrefetchConfig{PrefetchKind::stride, 1, entries});
            for (std::uint64_t step = 0; step < 4; ++step)
                for (int stream = 1; stream <= 3; ++stream)
                    cache.access(static_cast<std::uint64_t>(stream) * 64000 + step * 64, stream);
            INFO("entries " << entries);
            CHECK(cache.counts() == (entries == 3 ? counts(12, 9, 6, 3) : counts(12, 12, 0, 0)));
        }
    }
}

TEST_CASE("prefetch: with the prefetcher off, the counts are the plain cache's, access for access", "[prefetch]") {
    const CacheConfig lab{8, 8, 64};
    for (std::size_t tile : {std::size_t{0}, std::size_t{8}, std::size_t{32}}) {
        Cache plain(lab);
        PrefetchingCache off(lab, PrefetchConfig{});
        for_each_transpose_access(73, tile, 8, [&](const Access& a) {
            const AccessResult p = plain.access(a.address, 0, a.write);
            const AccessResult q = off.access(a.address, 0, a.write);
            REQUIRE(p.hit == q.hit);
            REQUIRE(p.evicted_line == q.evicted_line);
        });
        CHECK(off.counts().demand_misses == plain.total().misses);
        CHECK(off.cache().total() == plain.total());
        CHECK(off.cache().stream(off.prefetch_stream()).accesses() == 0);
    }
    PrefetchingCache row(lab, PrefetchConfig{}), column(lab, PrefetchConfig{});
    for (std::uint64_t a : row_major_trace(73)) row.access(a);
    for (std::uint64_t a : col_major_trace(73)) column.access(a);
    CHECK(row.counts().demand_misses == 667);  // the lab's row and column table, n = 73
    CHECK(column.counts().demand_misses == 4573);
}

TEST_CASE("prefetch: prefetch fills are counted on their own stream, demand on the program's", "[prefetch]") {
    Cache plain(CacheConfig::fully_associative(8, 64));
    const int a = plain.add_stream("A");
    PrefetchingCache cache(plain, PrefetchConfig{PrefetchKind::next_line});
    CHECK(cache.prefetch_stream() == a + 1);
    for (std::uint64_t address = 0; address < 256; address += 8) cache.access(address, a);
    CHECK(cache.cache().stream(a).misses == cache.counts().demand_misses);
    CHECK(cache.cache().stream(a).accesses() == 32);
    CHECK(cache.cache().stream(cache.prefetch_stream()).misses == cache.counts().issued);
    CHECK(cache.cache().stream_name(cache.prefetch_stream()) == "prefetch");
}

TEST_CASE("prefetch: settings out of range are refused with a reason", "[prefetch]") {
    const auto c = CacheConfig::fully_associative(8, 64);
    CHECK_THROWS_WITH(PrefetchingCache(c, PrefetchConfig{PrefetchKind::stride, 0}), Catch::Contains("degree 0"));
    CHECK_THROWS_WITH(PrefetchingCache(c, PrefetchConfig{PrefetchKind::stride, 65}), Catch::Contains("degree 65"));
    CHECK_THROWS_WITH(PrefetchingCache(c, PrefetchConfig{PrefetchKind::stride, 1, 0}), Catch::Contains("0 streams"));
    CHECK_THROWS_AS(StrideTable(0), std::invalid_argument);
    CHECK(prefetch_name(PrefetchKind::next_line) == "next-line");
}
