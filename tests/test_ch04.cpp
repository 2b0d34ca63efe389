// Chapter 4's claims: R6, R4, R7, the lab functions, the study's point, and the measured gains of blocking.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "cachebook/machine.hpp"
#include "cachebook/matmul_orders.hpp"
#include "support.hpp"
#include "tiling.hpp"

namespace {
cachebook::CacheConfig small_cache() { return cachebook::CacheConfig{8, 8, 64}; }
}  // namespace

TEST_CASE("R6: transpose N = 64 in 32 lines, 1.125 -> 0.25", "[ch04][reference]") {
    const auto c32 = cachebook::CacheConfig::fully_associative(32, 64);
    const auto naive = ch04::transpose_rate(64, 0, c32);
    CHECK(naive.src == 0.125);
    CHECK(naive.dst == 1.0);
    CHECK(naive.total() == 1.125);
    const auto tiled = ch04::transpose_rate(64, 8, c32);
    CHECK(tiled.src == 0.125);
    CHECK(tiled.dst == 0.125);
    CHECK(tiled.total() == 0.25);
}

TEST_CASE("R4 through the lab: misses_by_tile and best_tile", "[ch04][reference]") {
    const auto r4 = ch04::misses_by_tile(73, {0, 4, 8, 16, 32}, small_cache());
    using P = std::pair<std::size_t, std::uint64_t>;
    CHECK(r4 == std::vector<P>{{0, 5996}, {4, 2603}, {8, 2036}, {16, 1960}, {32, 1714}});
    CHECK(ch04::best_tile(73, {0, 4, 8, 16, 32}, small_cache()) == 32);
    CHECK(ch04::best_tile(73, {0, 4}, small_cache()) == 4);
    CHECK(ch04::transpose_misses(73, 0, small_cache()) == 5996);
}

TEST_CASE("R7: the seed's 32 KiB L1 gives T <= 36.9, T = 32, 24 KiB", "[ch04][reference]") {
    const auto t = ch04::tile_from_cache(32 * 1024, 512);
    CHECK(std::floor(t.bound * 10) / 10 == Approx(36.9));
    CHECK(t.tile == 32);
    CHECK(t.three_tiles == 24576);
    CHECK(t.estimate == Approx(2.0 / 256));
    // The pick must divide N and stay within the bound.
    const auto odd = ch04::tile_from_cache(32 * 1024, 24);
    CHECK(odd.tile == 8);
    const auto tiny = ch04::tile_from_cache(100, 512);
    CHECK(tiny.tile == 2);
}

TEST_CASE("R7 on this machine: the tile fits the L1 three times over", "[ch04]") {
    const auto l1 = cachebook::data_cache(1);
    if (!l1 || l1->size_bytes == 0) CACHEBOOK_SKIP("sysfs reports no L1d");
    const auto t = ch04::tile_from_cache(l1->size_bytes, 512);
    CHECK(t.three_tiles <= l1->size_bytes);
    CHECK(3 * (2 * t.tile) * (2 * t.tile) * 8 > l1->size_bytes);  // the next power of two would not fit
}

TEST_CASE("blocked and naive products are memcmp-equal, ragged edges too", "[ch04]") {
    for (std::size_t n : {17u, 64u}) {
        const auto m = cachebook::integer_valued_matrices(n);
        std::vector<double> naive(n * n), blocked(n * n);
        cachebook::matmul_in_order(cachebook::LoopOrder::ijk, n, m.a.data(), m.b.data(), naive.data());
        for (std::size_t tile : {1u, 5u, 8u, 64u}) {
            INFO("n " << n << " tile " << tile);
            ch04::matmul_blocked(n, tile, m.a.data(), m.b.data(), blocked.data());
            CHECK(std::memcmp(naive.data(), blocked.data(), n * n * sizeof(double)) == 0);
        }
    }
    CHECK(ch04::tile_sweep(40, {8, 16, 24}, 1).identical);
}

TEST_CASE("the tiled transpose equals the naive one", "[ch04]") {
    const std::size_t n = 37;
    std::vector<double> src(n * n), a(n * n), b(n * n);
    for (std::size_t k = 0; k < n * n; ++k) src[k] = static_cast<double>(k);
    ch04::transpose_naive(n, src.data(), a.data());
    ch04::transpose_tiled(n, 8, src.data(), b.data());
    CHECK(a == b);
    CHECK(a[1 * n + 0] == src[0 * n + 1]);
}

TEST_CASE("the study: miss counts depend on the shape, not on the values", "[ch04]") {
    const auto one = ch04::random_walk(145, 1), two = ch04::random_walk(145, 2);
    REQUIRE(one.values != two.values);
    const std::vector<std::size_t> tiles = {0, 4, 8, 16, 32};
    const auto s1 = ch04::study(one, 73, tiles, small_cache());
    const auto s2 = ch04::study(two, 73, tiles, small_cache());
    CHECK(s1.transposed);
    CHECK(s2.transposed);
    CHECK(s1.by_tile == s2.by_tile);
    // The real transpose's addresses are the trace's addresses: R4 again.
    CHECK(s1.by_tile == ch04::misses_by_tile(73, tiles, small_cache()));
    CHECK(s1.orders.row == 667);
    CHECK(s1.orders.column == 4573);
    CHECK(s1.best == 32);
    // Another shape, other counts.
    CHECK(ch04::study(one, 40, tiles, small_cache()).by_tile != s1.by_tile);
    CHECK_THROWS_AS(ch04::study(one, 100, tiles, small_cache()), std::invalid_argument);
}

TEST_CASE("the study reads real columns from a CSV file and rejects bad ones", "[ch04]") {
    const auto dir = std::filesystem::temp_directory_path();
    const auto good = (dir / "cachebook_ch04_good.csv").string(), bad = (dir / "cachebook_ch04_bad.csv").string();
    std::ofstream(good) << "# comment\nDate,X,Y\n2000-01-01,1.5,\n2000-02-01,2.5,7\n";
    std::ofstream(bad) << "Date,X\n2000-01-01,abc\n";
    const auto cols = ch04::read_csv_columns(good, {"X", "Y"});
    CHECK(cols[0].values == std::vector<double>{1.5, 2.5});
    CHECK(cols[1].values == std::vector<double>{7});
    CHECK_THROWS_WITH(ch04::read_csv_columns(bad, {"X"}), Catch::Contains("not a number"));
    CHECK_THROWS_WITH(ch04::read_csv_columns(good, {"Z"}), Catch::Contains("no column"));
    CHECK_THROWS_WITH(ch04::read_csv_columns(good + ".missing", {"X"}), Catch::Contains("cannot read"));
    std::filesystem::remove(good);
    std::filesystem::remove(bad);
}

TEST_CASE("the real Stocks.csv gives the same counts as generated data", "[ch04]") {
    const std::string path = "/usr/share/matplotlib/mpl-data/sample_data/Stocks.csv";
    if (!std::filesystem::exists(path)) CACHEBOOK_SKIP("python-matplotlib-data is not installed");
    const auto cols = ch04::read_csv_columns(path, {"^GSPC", "IBM"});
    REQUIRE(cols[0].values.size() >= 145);
    const std::vector<std::size_t> tiles = {0, 4, 8, 16, 32};
    const auto real = ch04::study(cols[0], 73, tiles, small_cache());
    CHECK(real.transposed);
    CHECK(real.by_tile == ch04::study(cols[1], 73, tiles, small_cache()).by_tile);
    CHECK(real.by_tile == ch04::study(ch04::random_walk(145, 7), 73, tiles, small_cache()).by_tile);
}

TEST_CASE("blocked (tile from the L1) is at least 3x faster than naive ijk at N = 512", "[ch04][timing]") {
    const auto l1 = cachebook::data_cache(1);
    const std::size_t tile = ch04::tile_from_cache(l1 && l1->size_bytes ? l1->size_bytes : 32 * 1024, 512).tile;
    const auto t = ch04::time_blocked(512, tile, 3);
    REQUIRE(t.identical);
    INFO("naive " << t.naive.min() * 1e3 << " ms, blocked " << t.blocked.min() * 1e3 << " ms, ratio " << t.speedup());
    CHECK(t.speedup() >= 3.0);
}

TEST_CASE("tiled transpose (T = 8) of 2048 x 2048 doubles is at least 1.15x faster than naive", "[ch04][timing]") {
    const auto t = ch04::time_transpose(2048, 8, 7);
    REQUIRE(t.identical);
    INFO("naive " << t.naive.min() * 1e3 << " ms, tiled " << t.tiled.min() * 1e3 << " ms, ratio " << t.speedup());
    CHECK(t.speedup() >= 1.15);
}
