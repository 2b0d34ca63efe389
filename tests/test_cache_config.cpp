// cachebook::cache_config: a cache the machine reports, as the cache model runs it, or nothing
// when its size, ways and line size are not consistent (chapters 3, 4 and 9 place addresses in
// this machine's L1d through it).
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "cachebook/machine.hpp"

namespace {

cachebook::CacheInfo l1d(std::size_t size_bytes, std::size_t ways, std::size_t line_bytes) {
    cachebook::CacheInfo c;
    c.level = 1;
    c.type = "Data";
    c.size_bytes = size_bytes;
    c.ways = ways;
    c.line_bytes = line_bytes;
    return c;
}

}  // namespace

TEST_CASE("cache_config: a consistent cache gives its sets, ways and line", "[machine][cache_config]") {
    const auto config = cachebook::cache_config(l1d(48 * 1024, 12, 64));
    REQUIRE(config);
    CHECK(config->sets == 64);  // 49152 / (12 x 64)
    CHECK(config->ways == 12);
    CHECK(config->line_bytes == 64);
    CHECK(config->policy == cachebook::Policy::LRU);
    CHECK(config->capacity_bytes() == 48 * 1024);
    const auto fully = cachebook::cache_config(l1d(4096, 64, 64));  // one set of 64 ways
    REQUIRE(fully);
    CHECK(fully->sets == 1);
}

TEST_CASE("cache_config: nothing when a figure is missing or does not fit the others", "[machine][cache_config]") {
    CHECK_FALSE(cachebook::cache_config(std::nullopt));
    CHECK_FALSE(cachebook::cache_config(l1d(32 * 1024, 0, 64)));         // ways not reported
    CHECK_FALSE(cachebook::cache_config(l1d(32 * 1024, 8, 0)));          // line not reported
    CHECK_FALSE(cachebook::cache_config(l1d(0, 8, 64)));                 // size not reported
    CHECK_FALSE(cachebook::cache_config(l1d(48 * 1024, 12, 48)));        // a line of 48 B: not a power of two
    CHECK_FALSE(cachebook::cache_config(l1d(40 * 1024, 12, 64)));        // 40 KiB is 53.3 sets of 12 x 64 B
    CHECK_FALSE(cachebook::cache_config(l1d(508u << 20, 0, 64)));        // an L3 without its ways
    CHECK(cachebook::cache_config(l1d(40 * 1024, 10, 64)).has_value());  // 64 sets of 10 x 64 B
}

TEST_CASE("cache_config on the machine fixtures: the L1d each reports", "[machine][cache_config]") {
    const auto fixture = [](const std::string& name) {
        return cachebook::detect_machine(std::string(CACHEBOOK_TEST_DATA) + "/../fixtures/machine/" + name);
    };
    CHECK_FALSE(cachebook::cache_config(fixture("none").data_cache(1)));
    const auto line128 = cachebook::cache_config(fixture("line128").data_cache(1));  // 128 KiB, 8 ways, 128 B
    REQUIRE(line128);
    CHECK(line128->sets == 128);
    CHECK(line128->line_bytes == 128);
    const auto sysconf = cachebook::cache_config(fixture("sysconf_only").data_cache(1));  // 48 KiB, 12 ways, 64 B
    REQUIRE(sysconf);
    CHECK(sysconf->sets == 64);
    // Its L1i has a size but neither ways nor line: no geometry to run.
    CHECK_FALSE(cachebook::cache_config(fixture("sysconf_only").caches[1]));
}
