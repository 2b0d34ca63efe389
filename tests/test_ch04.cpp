// Chapter 4's claims: the simulated transposes, the tile from the L1's size, the lab functions, the study's
// point, and the measured gains of blocking.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "../chapters/04_tiling/lab.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/matmul_orders.hpp"
#include "cachebook/tile_rule.hpp"
#include "support.hpp"
#include "tiling.hpp"

namespace {
cachebook::CacheConfig notes_cache() {
    return cachebook::CacheConfig{8, 8, 64};
}
}  // namespace

TEST_CASE("tiles of 8 cut a 64 x 64 transpose in 32 lines from 1.125 to 0.25 misses per element", "[ch04][reference]") {
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

TEST_CASE("the 73 x 73 transpose misses less with every larger tile, and best_tile picks 32", "[ch04][reference]") {
    const auto misses = ch04::misses_by_tile(73, {0, 4, 8, 16, 32}, notes_cache());
    using P = std::pair<std::size_t, std::uint64_t>;
    CHECK(misses == std::vector<P>{{0, 5996}, {4, 2603}, {8, 2036}, {16, 1960}, {32, 1714}});
    CHECK(ch04::best_tile(73, {0, 4, 8, 16, 32}, notes_cache()) == 32);
    CHECK(ch04::best_tile(73, {0, 4}, notes_cache()) == 4);
    CHECK(ch04::transpose_misses(73, 0, notes_cache()) == 5996);
}

TEST_CASE("the lab's table: the misses, the best tile and the gain the program prints", "[ch04]") {
    const auto table = ch04::tile_table(73, ch04::kModelTiles, ch04::lab_cache());
    CHECK(table.misses == ch04::misses_by_tile(73, ch04::kModelTiles, notes_cache()));
    CHECK(table.best == 32);
    CHECK(table.gain == Approx(5996.0 / 1714.0));
}

TEST_CASE("the visits of a 4 x 4 matrix: row after row, and with tiles of 2 block after block", "[ch04]") {
    CHECK(ch04::visit_steps(4, 0) == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
    CHECK(ch04::visit_steps(4, 2) == std::vector<std::size_t>{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15});
}

TEST_CASE("the measured tile: --tile, else this machine's L1d's, else the course notes' 32 KiB", "[ch04]") {
    CHECK(ch04::blocked_tile(24, 512, std::nullopt) == 24);
    CHECK(ch04::blocked_tile(0, 512, std::nullopt) == 32);
    CHECK(ch04::blocked_tile(0, 512, ch04::tile_from_cache(128 * 1024, 512)) == 64);
}

TEST_CASE("the course notes' 32 KiB L1 gives T <= 32.0, T = 32, 24 KiB: three quarters exactly", "[ch04][reference]") {
    const auto t = ch04::tile_from_cache(32 * 1024, 512);
    CHECK(t.bound == 32.0);  // 3 T^2 8 <= 3/4 x 32768 = 24576: T^2 <= 1024
    CHECK(t.tile == 32);
    CHECK(t.three_tiles == 24576);
    CHECK(t.estimate == Approx(2.0 / 256));
    // The pick must divide N and stay within the bound.
    const auto odd = ch04::tile_from_cache(32 * 1024, 24);
    CHECK(odd.tile == 8);
    // 3 x 2^2 x 8 = 96 B is more than 3/4 x 100 = 75 B: only T = 1 fits.
    const auto tiny = ch04::tile_from_cache(100, 512);
    CHECK(tiny.tile == 1);
}

TEST_CASE("the tile rule 3 T^2 S <= 3/4 L1: worked by hand, and the same for chapters 4 and 9", "[ch04][reference]") {
    // 48 KiB: 3/4 of it is 36864 B. Doubles: 3 x 32^2 x 8 = 24576 fits, 3 x 64^2 x 8 = 98304 does not.
    CHECK(cachebook::rule_tile(48 * 1024, 8) == 32);
    // Floats: 3 x 32^2 x 4 = 12288 fits, 3 x 64^2 x 4 = 49152 (the whole L1) does not.
    CHECK(cachebook::rule_tile(48 * 1024, 4) == 32);
    CHECK_FALSE(cachebook::tiles_fit(64, 48 * 1024, 4));
    CHECK(cachebook::tiles_fit(32, 32 * 1024, 8));  // 24576 = 3/4 x 32768: the bound itself fits
    CHECK_FALSE(cachebook::tiles_fit(33, 32 * 1024, 8));
    CHECK(cachebook::tile_bound(48 * 1024, 4) == Approx(std::sqrt(3072.0)));  // 49152 / 16
    // N = 96 takes 32 (divides), N = 80 only 16.
    CHECK(cachebook::rule_tile(32 * 1024, 8, 96) == 32);
    CHECK(cachebook::rule_tile(32 * 1024, 8, 80) == 16);
    CHECK(cachebook::rule_tile(4096, 8) == 8);  // 3 x 8^2 x 8 = 1536 <= 3072; 3 x 16^2 x 8 = 6144
    for (std::size_t bytes : {4096u, 32768u, 49152u, 65536u, 131072u})
        for (std::size_t n : {0u, 96u, 512u}) {
            const auto t = ch04::tile_from_cache(bytes, n == 0 ? 1024 : n);
            CHECK(t.tile == cachebook::rule_tile(bytes, 8, n == 0 ? 1024 : n));
            CHECK(4 * t.three_tiles <= 3 * bytes);
        }
}

TEST_CASE("on this machine, three tiles take at most 3/4 of L1 and three of the next power of two more", "[ch04]") {
    const auto l1 = cachebook::data_cache(1);
    if (!l1 || l1->size_bytes == 0) CACHEBOOK_SKIP("sysfs reports no L1d");
    const auto t = ch04::tile_from_cache(l1->size_bytes, 512);
    CHECK(4 * t.three_tiles <= 3 * l1->size_bytes);
    CHECK(4 * 3 * (2 * t.tile) * (2 * t.tile) * 8 > 3 * l1->size_bytes);  // the next power of two would not fit
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
    CHECK(ch04::tile_sweep(40, {8, 16, 24}, cachebook::RunBudget{1, 1, 0}).identical);
}

// The pairs' timing without the clock's figures: how many runs, which key, what the rule says.
TEST_CASE("time_pair: a claim on the kit at its quick size, a table's figure by its budget", "[ch04]") {
    int slow_calls = 0, fast_calls = 0;
    const auto slow = [&] { ++slow_calls; };
    const auto fast = [&] { ++fast_calls; };
    const auto claimed = ch04::time_pair(64, slow, fast, ch04::claim_runs(ch04::kBlockedClaim, 6, true));
    CHECK(claimed.claim.key == "blocked");
    CHECK(claimed.claim.text == "naive / blocked");
    CHECK(claimed.slow.runs.size() == static_cast<std::size_t>(ch04::kQuickClaimRuns));
    CHECK(claimed.fast.runs.size() == static_cast<std::size_t>(ch04::kQuickClaimRuns));
    CHECK(slow_calls == ch04::kQuickClaimRuns + 1);  // one untimed call first
    CHECK(fast_calls == ch04::kQuickClaimRuns + 1);
    CHECK(claimed.claim.result.threshold == ch04::kBlockedClaim.threshold);
    CHECK(claimed.claim.result.verdict == cachebook::Verdict::inconclusive);
    CHECK(claimed.claim.result.reason == "the claim is made at N = 512, this run measured N = 64");

    slow_calls = fast_calls = 0;
    const auto full = ch04::time_pair(64, slow, fast, ch04::claim_runs(ch04::kBlockedClaim, 7, false));
    CHECK(full.slow.runs.size() == 7);  // --runs
    slow_calls = fast_calls = 0;
    const auto table = ch04::time_pair(64, slow, fast, ch04::table_runs(6, 0.0));
    CHECK(table.claim.key.empty());
    CHECK(table.slow.runs.size() == 2);  // no seconds to spare: the floor of two
    CHECK(slow_calls == 2);
    CHECK(fast_calls == 2);
}

TEST_CASE("the timed pairs compare their results: a walk that writes nothing is caught", "[ch04]") {
    const auto tiled = [](std::size_t n, const double* src, double* dst) { ch04::transpose_tiled(n, 4, src, dst); };
    const auto nothing = [](std::size_t, const double*, double*) {};
    CHECK(ch04::time_transposes(37, ch04::transpose_naive, tiled, ch04::table_runs(1, 0.0)).identical);
    CHECK_FALSE(ch04::time_transposes(37, ch04::transpose_naive, nothing, ch04::table_runs(1, 0.0)).identical);
    const auto blocked = ch04::time_blocked(40, 8, ch04::claim_runs(ch04::kBlockedClaim, 6, false));
    CHECK(blocked.identical);
    CHECK(blocked.naive.runs.size() == 6);
    CHECK(blocked.claim.key == "blocked");
    const auto zero = [](std::size_t n, const double*, const double*, double* c) { std::fill(c, c + n * n, 0.0); };
    CHECK_FALSE(ch04::time_products(40, ch04::matmul_recursive, zero, ch04::table_runs(1, 0.0)).identical);
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
    const auto s1 = ch04::study(one, 73, tiles, notes_cache());
    const auto s2 = ch04::study(two, 73, tiles, notes_cache());
    CHECK(s1.transposed);
    CHECK(s2.transposed);
    CHECK(s1.by_tile == s2.by_tile);
    // The real transpose's addresses are the trace's addresses: the lab's counts again.
    CHECK(s1.by_tile == ch04::misses_by_tile(73, tiles, notes_cache()));
    CHECK(s1.orders.row == 667);
    CHECK(s1.orders.column == 4573);
    CHECK(s1.best == 32);
    // Another shape, other counts.
    CHECK(ch04::study(one, 40, tiles, notes_cache()).by_tile != s1.by_tile);
    CHECK_THROWS_AS(ch04::study(one, 100, tiles, notes_cache()), std::invalid_argument);
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
    const auto real = ch04::study(cols[0], 73, tiles, notes_cache());
    CHECK(real.transposed);
    CHECK(real.by_tile == ch04::study(cols[1], 73, tiles, notes_cache()).by_tile);
    CHECK(real.by_tile == ch04::study(ch04::random_walk(145, 7), 73, tiles, notes_cache()).by_tile);
}

// The chapter's claims, decided by its own functions, once: holds passes, fails fails,
// inconclusive (the control was noisy, or the effect within the noise of the threshold) skips.
TEST_CASE("blocked (tile from the L1) is at least 3x faster than naive ijk at N = 512", "[ch04][timing]") {
    const auto l1 = cachebook::data_cache(1);
    const std::size_t tile = ch04::tile_from_cache(l1 && l1->size_bytes ? l1->size_bytes : 32 * 1024, 512).tile;
    const auto t = ch04::time_blocked(ch04::kBlockedN, tile, ch04::claim_runs(ch04::kBlockedClaim, 6, true));
    REQUIRE(t.identical);
    const auto& claim = t.claim.result;
    INFO("naive " << t.naive.min() * 1e3 << " ms, blocked " << t.blocked.min() * 1e3 << " ms: " << claim.reason);
    CHECK(t.naive.runs.size() == static_cast<std::size_t>(ch04::kQuickClaimRuns));
    CHECK(claim.threshold == ch04::kBlockedClaim.threshold);
    if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
    CHECK(claim.verdict == cachebook::Verdict::holds);
}

TEST_CASE("tiled transpose (T = 8) of 2048 x 2048 doubles is at least 1.15x faster than naive", "[ch04][timing]") {
    const auto t = ch04::time_transpose(ch04::kTransposeN, 8, ch04::claim_runs(ch04::kTransposeClaim, 6, true));
    REQUIRE(t.identical);
    const auto& claim = t.claim.result;
    INFO("naive " << t.naive.min() * 1e3 << " ms, tiled " << t.tiled.min() * 1e3 << " ms: " << claim.reason);
    CHECK(claim.threshold == ch04::kTransposeClaim.threshold);
    if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
    CHECK(claim.verdict == cachebook::Verdict::holds);
}

namespace {
// "A01 B10 C00 ...": the matrix and cell of each step in [first, last).
std::string stepper_cells(const ch04::MatmulStepper& run, std::size_t first, std::size_t last) {
    std::string out;
    for (std::size_t s = first; s < last; ++s) {
        const auto& st = run.steps.at(s);
        if (s > first) out += ' ';
        out += static_cast<char>('A' + st.matrix);
        out += std::to_string(st.i) + std::to_string(st.j);
    }
    return out;
}

// The misses of C = A x B on n x n doubles (A, B, C packed one after another), walked by the
// loops written out here, in the stepper's fully associative LRU cache: a count that does not
// go through the trace generator or the stepper.
cachebook::Counts counts_written_out(std::size_t n, std::size_t tile, std::size_t line_bytes, std::size_t lines) {
    const std::uint64_t a = 0, b = n * n * 8, c = 2 * n * n * 8;
    std::vector<std::uint64_t> addresses;
    const std::size_t t = tile == 0 ? n : tile;
    for (std::size_t ii = 0; ii < n; ii += t)
        for (std::size_t jj = 0; jj < n; jj += t)
            for (std::size_t kk = 0; kk < n; kk += t)
                for (std::size_t i = ii; i < ii + t; ++i)
                    for (std::size_t k = kk; k < kk + t; ++k)
                        for (std::size_t j = jj; j < jj + t; ++j) {
                            addresses.push_back(a + (i * n + k) * 8);
                            addresses.push_back(b + (k * n + j) * 8);
                            addresses.push_back(c + (i * n + j) * 8);
                        }
    return cachebook::simulate(cachebook::CacheConfig::fully_associative(lines, line_bytes), addresses);
}
}  // namespace

TEST_CASE("the tile stepper's cache: a line per tile row, three tiles in three quarters of it", "[ch04]") {
    const auto c = ch04::stepper_cache(2);
    CHECK(c.line_bytes == 16);
    CHECK(c.three_tiles_lines == 6);
    CHECK(c.cache_lines == 8);
    CHECK(c.cache_bytes() == 128);
    // The same proportions give the course notes' model cache for its T = 8: 64-byte lines, 32 lines.
    const auto notes_model = ch04::stepper_cache(8);
    CHECK(notes_model.line_bytes == 64);
    CHECK(notes_model.cache_lines == 32);
    // The chapter's tile formula, on the stepper's cache and N = 4, picks T = 2 back.
    CHECK(ch04::tile_from_cache(c.cache_bytes(), 4).tile == 2);
}

TEST_CASE("the tile stepper: the accesses of the first tile steps, in order, with M and H", "[ch04]") {
    const auto c = ch04::stepper_cache(2);
    const auto run = ch04::run_matmul_stepper(4, 2, 8, 16, c.cache_lines);
    REQUIRE(run.steps.size() == 3 * 4 * 4 * 4);
    // Tiles ii = jj = kk = 0: i, k, j inside; each iteration reads A[i][k], B[k][j], updates C[i][j].
    CHECK(stepper_cells(run, 0, 24) ==
          "A00 B00 C00 A00 B01 C01 A01 B10 C00 A01 B11 C01 A10 B00 C10 A10 B01 C11 A11 B10 C10 A11 B11 C11");
    // Every line of the three tiles misses once, on its first touch; the rest hit.
    CHECK(ch04::stepper_marks(run, 0, 24) == "MMM HHH HMH HHH MHM HHH HHH HHH");
    // Then kk = 2: the next tiles of A and B, the same tile of C, which is still cached.
    CHECK(stepper_cells(run, 24, 30) == "A02 B20 C00 A02 B21 C01");
    CHECK(ch04::stepper_marks(run, 24, 48) == "MMH HHH HMH HHH MHH HHH HHH HHH");
    CHECK(run.steps[24].ii == 0);
    CHECK(run.steps[24].jj == 0);
    CHECK(run.steps[24].kk == 2);
    // Tiles ii = 0, jj = 2, kk = 0 begin at the seventeenth iteration.
    CHECK(stepper_cells(run, 48, 51) == "A00 B02 C02");
    CHECK(run.steps[48].jj == 2);
    CHECK(run.steps[48].kk == 0);
    // Lines: A is lines 0-7, B 8-15, C 16-23 (two lines a row); the cache holds at most 8.
    CHECK(run.steps[1].line == 8);
    CHECK(run.steps[2].line == 16);
    for (const auto& st : run.steps) CHECK(st.cache_after.size() <= c.cache_lines);
}

TEST_CASE("the tile stepper: totals equal the simulator's count of the loops written out", "[ch04]") {
    const auto c = ch04::stepper_cache(2);
    for (std::size_t lines : {c.cache_lines, c.three_tiles_lines}) {
        for (std::size_t tile : {std::size_t{2}, std::size_t{0}}) {
            INFO("cache of " << lines << " lines, tile " << tile);
            const auto run = ch04::run_matmul_stepper(4, tile, 8, 16, lines);
            const auto independent = counts_written_out(4, tile, 16, lines);
            CHECK(run.misses == independent.misses);
            CHECK(run.hits == independent.hits);
            CHECK(run.hits + run.misses == run.steps.size());
            std::uint64_t by_steps[3] = {0, 0, 0};
            for (const auto& st : run.steps) by_steps[st.matrix] += st.hit ? 0 : 1;
            for (int m = 0; m < 3; ++m) CHECK(run.misses_of[m] == by_steps[m]);
        }
    }
    // In the 8-line cache, with (N/T)^3 = 8 tile steps, the tiles of A and B are fetched once
    // per tile step (T = 2 lines each) and those of C once: 16 + 16 + 8. Untiled ikj reads
    // A and C once (8 lines each) but all of B for each of the 4 rows of C: 32.
    const auto tiled = ch04::run_matmul_stepper(4, 2, 8, 16, c.cache_lines);
    CHECK(tiled.misses_of[0] == 16);
    CHECK(tiled.misses_of[1] == 16);
    CHECK(tiled.misses_of[2] == 8);
    const auto ikj = ch04::run_matmul_stepper(4, 0, 8, 16, c.cache_lines);
    CHECK(ikj.misses_of[0] == 8);
    CHECK(ikj.misses_of[1] == 32);
    CHECK(ikj.misses_of[2] == 8);
    // Three tiles that fill the cache exactly: LRU evicts a line of C each time kk moves on.
    const auto tight = ch04::run_matmul_stepper(4, 2, 8, 16, c.three_tiles_lines);
    CHECK(tight.misses_of[2] == 12);
    std::vector<std::uint64_t> per_step;
    for (const auto& g : ch04::stepper_groups(tight)) per_step.push_back(g.misses);
    CHECK(per_step == std::vector<std::uint64_t>{6, 5, 6, 5, 6, 5, 6, 5});
}

TEST_CASE("the tile stepper's JSON is what the widget reads", "[ch04]") {
    const auto run = ch04::run_matmul_stepper(4, 2, 8, 16, 8);
    const auto j = ch04::to_json(run, "tiled T = 2");
    CHECK(j["walk"] == "tiled T = 2");
    CHECK(j["cache_lines"] == 8);
    CHECK(j["misses"] == run.misses);
    CHECK(j["misses_by_matrix"]["B"] == 16);
    REQUIRE(j["arrays"].size() == 3);
    CHECK(j["arrays"][1]["name"] == "B");
    CHECK(j["arrays"][1]["first_line"] == 8);
    CHECK(j["arrays"][2]["first_line"] == 16);
    CHECK(j["arrays"][2]["access"] == "update");
    REQUIRE(j["steps"].size() == run.steps.size());
    for (std::size_t s = 0; s < run.steps.size(); ++s) {
        CHECK(j["steps"][s]["array"] == run.steps[s].matrix);
        CHECK(j["steps"][s]["hit"] == run.steps[s].hit);
        CHECK(j["steps"][s]["line"] == run.steps[s].line);
    }
    CHECK(j["steps"][24]["tile_at"] == nlohmann::json{{0, 2}, {2, 0}, {0, 0}});
    CHECK(j["steps"][24]["group"] == "ii = 0, jj = 0, kk = 2");
    REQUIRE(j["groups"].size() == 8);
    CHECK(j["groups"][0]["marks"] == "MMM HHH HMH HHH MHM HHH HHH HHH");
    CHECK(j["groups"][0]["misses"] == 6);
    CHECK(j["groups"][1]["first"] == 24);
    const auto ikj = ch04::to_json(ch04::run_matmul_stepper(4, 0, 8, 16, 8), "untiled ikj");
    CHECK(ikj["steps"][0].count("tile_at") == 0);
    CHECK(ikj["groups"].size() == 4);
    CHECK(ikj["steps"][48]["group"] == "i = 1");
}

TEST_CASE("a sweep gives each tile's time over the fastest one, and 0 for a tile it did not time", "[ch04]") {
    ch04::Sweep sweep;
    for (auto [tile, seconds] : {std::pair{8u, 0.004}, std::pair{16u, 0.002}, std::pair{32u, 0.003}}) {
        ch04::SweepPoint point;
        point.tile = tile;
        point.timing.runs = {seconds, 2 * seconds};
        sweep.points.push_back(point);
    }
    CHECK(sweep.best() == 16);
    CHECK(sweep.over_best(16) == 1.0);
    CHECK(sweep.over_best(8) == Approx(2.0));
    CHECK(sweep.over_best(32) == Approx(1.5));
    CHECK(sweep.over_best(64) == 0.0);
}

TEST_CASE("studies have the same counts only when every tile's count agrees", "[ch04]") {
    ch04::Study first, second;
    first.by_tile = {{0, 10}, {4, 5}};
    second.by_tile = first.by_tile;
    CHECK(ch04::same_counts({first, second}));
    second.by_tile[1].second = 6;
    CHECK_FALSE(ch04::same_counts({first, second}));
    CHECK(ch04::same_counts({first}));
}

namespace {
cachebook::PrefetchCounts walk_counts(const ch04::Walk& walk, cachebook::PrefetchKind kind) {
    return ch04::run_with_prefetcher(walk, notes_cache(), kind);
}
}  // namespace

TEST_CASE("the prefetcher table: row, column and tiled walks are the lab's, and each prefetcher's counts follow",
          "[ch04][prefetch]") {
    using cachebook::PrefetchKind;
    const auto walks = ch04::prefetch_walks(73, 8, 7);
    REQUIRE(walks.size() == 4);
    const auto& row = walks[0];
    const auto& column = walks[1];
    const auto& tiled = walks[2];
    // With no prefetcher the walks miss as in the lab's tables: 667 and 4573 (n = 73), 2036 (tiles of 8).
    CHECK(walk_counts(row, PrefetchKind::none).demand_misses == 667);
    CHECK(walk_counts(column, PrefetchKind::none).demand_misses == 4573);
    CHECK(walk_counts(tiled, PrefetchKind::none).demand_misses == 2036);
    // Row walk, 667 lines read in order. Next-line: the even-numbered lines 0 .. 666 miss (334) and
    // fetch the odd ones (333 useful; the fetch after line 666 brings line 667, unread). Stride: only
    // line 0 misses; the last double of each line fetches the next line, 666 times, all used.
    CHECK(walk_counts(row, PrefetchKind::next_line) == cachebook::PrefetchCounts{5329, 334, 334, 333});
    CHECK(walk_counts(row, PrefetchKind::stride) == cachebook::PrefetchCounts{5329, 1, 666, 666});
    // Column walk: in each of the 73 columns the first three reads miss (the stride 584 is
    // confirmed on the third), so 219 misses. Next-line fetches lines no column read wants next,
    // and they push out the lines the next column would have found: every read misses.
    const auto column_stride = walk_counts(column, PrefetchKind::stride);
    CHECK(column_stride.demand_misses == 3 * 73);
    const auto column_next = walk_counts(column, PrefetchKind::next_line);
    CHECK(column_next.demand_misses == column.accesses.size());
    CHECK(column_next.useful == 0);
    // Tiled transpose: both prefetchers help, the stride table (one entry for A, one for B) more.
    const auto tiled_next = walk_counts(tiled, PrefetchKind::next_line).demand_misses;
    const auto tiled_stride = walk_counts(tiled, PrefetchKind::stride).demand_misses;
    CHECK(tiled_stride < tiled_next);
    CHECK(tiled_next < 2036);
}

TEST_CASE("the prefetcher table: the pointer chase gives the stride table no stride twice in a row",
          "[ch04][prefetch]") {
    using cachebook::PrefetchKind;
    const auto chase = ch04::prefetch_walks(73, 8, 7)[3];
    REQUIRE(chase.accesses.size() == 73 * 73);
    // Every cell once: a single cycle visits each of the 5329 cells exactly once.
    std::vector<bool> seen(73 * 73, false);
    for (const auto& x : chase.accesses) seen.at(x.address / 8) = true;
    CHECK(std::all_of(seen.begin(), seen.end(), [](bool s) { return s; }));
    // Counted here from the addresses alone: three accesses in a row with equal steps.
    std::size_t repeats = 0;
    for (std::size_t k = 2; k < chase.accesses.size(); ++k) {
        const auto a = chase.accesses[k - 2].address, b = chase.accesses[k - 1].address, c = chase.accesses[k].address;
        repeats += (b - a == c - b) ? 1 : 0;
    }
    const auto none = walk_counts(chase, PrefetchKind::none);
    const auto stride = walk_counts(chase, PrefetchKind::stride);
    CHECK(repeats == 0);
    CHECK(stride.issued == 0);
    CHECK(stride.demand_misses == none.demand_misses);
    // Next-line is right only by chance: the line after a missed one is read soon after, rarely.
    const auto next = walk_counts(chase, PrefetchKind::next_line);
    CHECK(next.useful * 10 < next.issued);
    // Another cycle, another order, the same conclusion.
    CHECK(walk_counts(ch04::prefetch_walks(73, 8, 8)[3], PrefetchKind::stride).issued == 0);
}

TEST_CASE("the prefetcher table: one table entry for both streams of the transpose confirms no stride",
          "[ch04][prefetch]") {
    // The chapter's answer to "what if the stride table kept a single entry": the reads of A and the
    // writes of B alternate, so no difference between consecutive accesses repeats.
    auto one_stream = ch04::prefetch_walks(73, 8, 7)[2];
    for (auto& x : one_stream.accesses) x.stream = 0;
    CHECK(ch04::run_with_prefetcher(one_stream, notes_cache(), cachebook::PrefetchKind::stride).issued == 0);
    // Per stream, the same walk is served.
    const auto per_stream = ch04::prefetch_walks(73, 8, 7)[2];
    CHECK(ch04::run_with_prefetcher(per_stream, notes_cache(), cachebook::PrefetchKind::stride).useful > 0);
}

TEST_CASE("the recursive product and transpose give the naive results, ragged sizes too", "[ch04]") {
    for (std::size_t n : {1u, 7u, 17u, 64u, 100u}) {
        INFO("n " << n);
        const auto m = cachebook::integer_valued_matrices(n);
        std::vector<double> naive(n * n), recursive(n * n, -1.0);
        cachebook::matmul_in_order(cachebook::LoopOrder::ijk, n, m.a.data(), m.b.data(), naive.data());
        ch04::matmul_recursive(n, m.a.data(), m.b.data(), recursive.data());
        CHECK(std::memcmp(naive.data(), recursive.data(), n * n * sizeof(double)) == 0);
        std::vector<double> src(n * n), a(n * n), b(n * n, -1.0);
        for (std::size_t k = 0; k < n * n; ++k) src[k] = static_cast<double>(k);
        ch04::transpose_naive(n, src.data(), a.data());
        ch04::transpose_recursive(n, src.data(), b.data());
        CHECK(a == b);
    }
}

TEST_CASE("the recursion's blocks: every cell once, sides at most kLeaf, cut on multiples of kLeaf", "[ch04]") {
    const std::size_t n = 37;
    std::vector<int> seen(n * n, 0);
    ch04::split_transpose({0, n}, {0, n}, [&](ch04::Span rows, ch04::Span cols) {
        CHECK(rows.size() <= ch04::kLeaf);
        CHECK(cols.size() <= ch04::kLeaf);
        CHECK(rows.begin % ch04::kLeaf == 0);
        CHECK(cols.begin % ch04::kLeaf == 0);
        for (std::size_t i = rows.begin; i < rows.end; ++i)
            for (std::size_t j = cols.begin; j < cols.end; ++j) ++seen[i * n + j];
    });
    CHECK(std::all_of(seen.begin(), seen.end(), [](int v) { return v == 1; }));
    // The product: every (i, k, j) once, and each C[i][j] gets its k in increasing order.
    const std::size_t p = 21;
    std::vector<int> triples(p * p * p, 0);
    std::vector<std::size_t> next_k(p * p, 0);
    bool in_order = true;
    ch04::split_product({0, p}, {0, p}, {0, p}, [&](ch04::Span is, ch04::Span ks, ch04::Span js) {
        CHECK(std::max({is.size(), ks.size(), js.size()}) <= ch04::kLeaf);
        for (std::size_t i = is.begin; i < is.end; ++i)
            for (std::size_t k = ks.begin; k < ks.end; ++k)
                for (std::size_t j = js.begin; j < js.end; ++j) {
                    ++triples[(i * p + k) * p + j];
                    in_order = in_order && next_k[i * p + j] == k;
                    next_k[i * p + j] = k + 1;
                }
    });
    CHECK(std::all_of(triples.begin(), triples.end(), [](int v) { return v == 1; }));
    CHECK(in_order);
}

TEST_CASE("the recursive traces: the tiled traces' accesses, in another order", "[ch04]") {
    auto sorted = [](std::vector<cachebook::Access> t) {
        std::sort(t.begin(), t.end(), [](const auto& x, const auto& y) {
            return std::tie(x.address, x.stream, x.write) < std::tie(y.address, y.stream, y.write);
        });
        return t;
    };
    auto same = [](const std::vector<cachebook::Access>& x, const std::vector<cachebook::Access>& y) {
        return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](const auto& p, const auto& q) {
                   return p.address == q.address && p.stream == q.stream && p.write == q.write;
               });
    };
    CHECK(same(sorted(ch04::recursive_transpose_trace(37)), sorted(ch04::tiled_transpose_trace(37, 0))));
    CHECK(same(sorted(ch04::recursive_product_trace(19)), sorted(ch04::tiled_product_trace(19, 0))));
    // With one leaf the recursion is the plain walk itself.
    CHECK(same(ch04::recursive_transpose_trace(8), ch04::tiled_transpose_trace(8, 0)));
    CHECK(same(ch04::recursive_product_trace(8), ch04::tiled_product_trace(8, 0)));
}

TEST_CASE("the model at 4 KiB and 32 KiB: one tile suits one cache, the recursion both", "[ch04][reference]") {
    const std::vector<cachebook::CacheConfig> caches = {ch04::lab_cache(), ch04::large_cache()};
    using P = std::pair<std::size_t, std::uint64_t>;
    const auto transpose = ch04::transpose_in_caches(520, caches);
    CHECK(transpose[0].by_tile ==
          std::vector<P>{{0, 304200}, {4, 101400}, {8, 67600}, {16, 67600}, {32, 67600}, {64, 278272}});
    CHECK(transpose[1].by_tile ==
          std::vector<P>{{0, 304200}, {4, 101400}, {8, 67600}, {16, 67600}, {32, 67600}, {64, 67600}});
    // Every line of src and dst once, 2 x 520^2 / 8 = 67600: the floor, reached by the recursion in both.
    CHECK(transpose[0].recursive == 2 * 520 * 520 / 8);
    CHECK(transpose[1].recursive == 2 * 520 * 520 / 8);
    CHECK(transpose[0].best == 8);
    const auto product = ch04::product_in_caches(96, caches);
    CHECK(product[0].by_tile == std::vector<P>{{0, 112896}, {4, 67272}, {8, 40284}, {16, 122484}, {32, 117504}});
    CHECK(product[1].by_tile == std::vector<P>{{0, 112896}, {4, 29952}, {8, 16452}, {16, 11106}, {32, 8358}});
    CHECK(product[0].recursive == 35628);
    CHECK(product[1].recursive == 9244);
    // The rule's tile is the best tile in each cache: 8 for 4 KiB, 32 for 32 KiB.
    CHECK(product[0].best == ch04::tile_from_cache(4096, 96).tile);
    CHECK(product[1].best == ch04::tile_from_cache(32768, 96).tile);
    // Each tuned tile loses in the other cache; the recursion is within an eighth of the best in both.
    CHECK(2 * product[1].by_tile[2].second > 3 * product[1].by_tile[4].second);
    CHECK(product[0].by_tile[4].second > 2 * product[0].by_tile[2].second);
    CHECK(product[0].recursive <= product[0].by_tile[2].second);
    CHECK(8 * product[1].recursive <= 9 * product[1].by_tile[4].second);
}

TEST_CASE("the recursive walks take at most kRecursiveSlack times the tiled walks' time", "[ch04][timing]") {
    const auto l1 = cachebook::data_cache(1);
    const std::size_t tile = ch04::tile_from_cache(l1 && l1->size_bytes ? l1->size_bytes : 32 * 1024, 512).tile;
    const auto product =
        ch04::time_recursive_product(ch04::kBlockedN, tile, ch04::claim_runs(ch04::kRecursiveProductClaim, 6, true));
    const auto transpose = ch04::time_recursive_transpose(ch04::kTransposeN, ch04::kRecursiveTransposeTile,
                                                          ch04::claim_runs(ch04::kRecursiveTransposeClaim, 6, true));
    REQUIRE(product.identical);
    REQUIRE(transpose.identical);
    for (const auto& claim : {product.claim.result, transpose.claim.result}) {
        INFO("product " << product.ratio() << "x, transpose " << transpose.ratio() << "x: " << claim.reason);
        CHECK(claim.threshold == 1.0 / ch04::kRecursiveSlack);
        if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
        CHECK(claim.verdict == cachebook::Verdict::holds);
    }
}

TEST_CASE("why the lab's transpose misses: the three kinds and OPT beside LRU", "[ch04][reference]") {
    const auto cache = notes_cache();
    const auto kinds = ch04::transpose_kinds(73, ch04::kModelTiles, cache);
    REQUIRE(kinds.size() == ch04::kModelTiles.size() + 1);
    // src is bytes [0, 42632): lines 0 to 666; dst [42632, 85264): lines 666 to 1332; line 666
    // holds the end of src and the start of dst, so 667 + 667 - 1 = 1333 distinct lines.
    for (const auto& w : kinds) {
        INFO(w.walk);
        CHECK(w.kinds.compulsory == 1333);
        CHECK(static_cast<std::int64_t>(w.kinds.misses) ==
              static_cast<std::int64_t>(w.kinds.compulsory) + w.kinds.capacity + w.kinds.conflict);
        CHECK(w.optimal <= w.kinds.misses);
        CHECK(w.optimal >= w.kinds.compulsory);
    }
    // The LRU counts are the lab's own, tile by tile.
    for (std::size_t t = 0; t < ch04::kModelTiles.size(); ++t)
        CHECK(kinds[t].kinds.misses == ch04::transpose_misses(73, ch04::kModelTiles[t], cache));
    CHECK(kinds.back().walk == "recursive");
    CHECK(kinds.back().kinds.misses == ch04::trace_misses(ch04::recursive_transpose_trace(73), cache));
    std::vector<std::int64_t> conflict, capacity;
    std::vector<std::uint64_t> optimal;
    for (const auto& w : kinds) {
        conflict.push_back(w.kinds.conflict);
        capacity.push_back(w.kinds.capacity);
        optimal.push_back(w.optimal);
    }
    CHECK(conflict == std::vector<std::int64_t>{0, 0, 0, 3, 0, 38});
    CHECK(capacity == std::vector<std::int64_t>{4663, 1270, 703, 624, 381, 516});
    CHECK(optimal == std::vector<std::uint64_t>{2061, 1680, 1682, 1629, 1595, 1550});
}
