// Chapter 8's claims: the random cycle, the cliff detector on curves with known
// answers, and (measured, [timing]) L1d and the line size on this machine.
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "../chapters/08_cliff/lab.hpp"
#include "cachebook/chase.hpp"
#include "cachebook/machine.hpp"
#include "cliff.hpp"
#include "support.hpp"

using ch08::detect_cliffs;

TEST_CASE("single_cycle: one cycle through every slot, for many sizes and seeds", "[ch08]") {
    for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 63u, 64u, 100u, 768u, 1000u, 4096u, 65537u}) {
        for (std::uint64_t seed = 0; seed < 20; ++seed) {
            const auto next = cachebook::single_cycle(n, seed);
            REQUIRE(next.size() == n);
            REQUIRE(cachebook::is_single_cycle(next));
            // A permutation: every slot is the successor of exactly one slot.
            CHECK(std::set<std::uint32_t>(next.begin(), next.end()).size() == n);
            // No slot points to itself (except the lone slot of n = 1).
            if (n > 1)
                for (std::size_t i = 0; i < n; ++i) REQUIRE(next[i] != i);
        }
    }
}

TEST_CASE("single_cycle: the same seed gives the same cycle, another seed another", "[ch08]") {
    CHECK(cachebook::single_cycle(1000, 7) == cachebook::single_cycle(1000, 7));
    CHECK(cachebook::single_cycle(1000, 7) != cachebook::single_cycle(1000, 8));
    CHECK(cachebook::single_cycle(0, 1).empty());
    CHECK(cachebook::single_cycle(1, 1) == std::vector<std::uint32_t>{0});
}

TEST_CASE("is_single_cycle rejects two cycles, fixed points and bad entries", "[ch08]") {
    CHECK(cachebook::is_single_cycle(std::vector<std::uint32_t>{1, 2, 0}));
    CHECK_FALSE(cachebook::is_single_cycle(std::vector<std::uint32_t>{1, 0, 3, 2}));  // two 2-cycles
    CHECK_FALSE(cachebook::is_single_cycle(std::vector<std::uint32_t>{0, 2, 1}));     // 0 alone
    CHECK_FALSE(cachebook::is_single_cycle(std::vector<std::uint32_t>{1, 5, 0}));     // out of range
    CHECK_FALSE(cachebook::is_single_cycle(std::vector<std::uint32_t>{1, 1, 0}));     // not a permutation
    CHECK_FALSE(cachebook::is_single_cycle(std::vector<std::uint32_t>{}));
}

TEST_CASE("uniform_below stays below its bound and reaches every value", "[ch08]") {
    std::uint64_t state = 42;
    std::vector<int> seen(7, 0);
    for (int i = 0; i < 7000; ++i) {
        const auto v = cachebook::uniform_below(state, 7);
        REQUIRE(v < 7);
        ++seen[v];
    }
    for (int count : seen) CHECK(count > 800);  // 1000 expected each
    CHECK_THROWS_AS(cachebook::uniform_below(state, 0), std::invalid_argument);
}

TEST_CASE("link_chase: following the pointers visits every node once per lap", "[ch08]") {
    const std::size_t nodes = 1000;
    cachebook::PageBuffer buf(nodes * 64, cachebook::PageSize::Small);
    const void* start = cachebook::link_chase(buf, nodes, 64, 3);
    std::set<const void*> seen;
    const void* p = start;
    for (std::size_t i = 0; i < nodes; ++i) {
        const auto offset = static_cast<std::size_t>(static_cast<const std::byte*>(p) - buf.data());
        REQUIRE(offset % 64 == 0);
        REQUIRE(offset < nodes * 64);
        seen.insert(p);
        p = cachebook::chase(p, 1);
    }
    CHECK(seen.size() == nodes);
    CHECK(p == start);
    CHECK(cachebook::chase(start, nodes * 3) == start);
    CHECK_THROWS_AS(cachebook::link_chase(buf, nodes + 1, 64, 3), std::invalid_argument);
    CHECK_THROWS_AS(cachebook::link_chase(buf, 10, 12, 3), std::invalid_argument);
}

TEST_CASE("sweep_sizes: log-spaced, multiples of the node, both ends included", "[ch08]") {
    const auto s = ch08::sweep_sizes(4096, std::size_t{1} << 20, 4);
    CHECK(s.front() == 4096);
    CHECK(s.back() == std::size_t{1} << 20);
    CHECK(s.size() == 8 * 4 + 1);  // 8 octaves, 4 steps each
    for (std::size_t i = 1; i < s.size(); ++i) {
        CHECK(s[i] % 64 == 0);
        CHECK(s[i] > s[i - 1]);
        const double ratio = static_cast<double>(s[i]) / static_cast<double>(s[i - 1]);
        CHECK(ratio == Approx(std::exp2(0.25)).epsilon(0.02));
    }
    // 48 KiB lies between two sizes less than a fifth apart: no power-of-two blind spot.
    CHECK(std::find(s.begin(), s.end(), std::size_t{49152} - 64 * 0) == s.end());
    CHECK_THROWS_AS(ch08::sweep_sizes(4096, 1024, 4), std::invalid_argument);
    CHECK_THROWS_AS(ch08::sweep_sizes(4096, 8192, 0), std::invalid_argument);
}

TEST_CASE("nearest_size picks the sweep size nearest on a log scale, the first of equals", "[ch08]") {
    const std::vector<std::size_t> sizes{4096, 8192, 16384, 65536};
    const auto [want, expected] = GENERATE(table<std::size_t, std::size_t>({
        {4096, 0},      // an exact match
        {1000, 0},      // below the smallest
        {6000, 1},      // 6000/4096 = 1.46 is farther than 8192/6000 = 1.37
        {32768, 2},     // halfway (log scale) between 16384 and 65536: the first
        {40000, 3},     // nearer 65536 on a log scale than 16384
        {1u << 30, 3},  // above the largest
    }));
    CAPTURE(want);
    CHECK(ch08::nearest_size(sizes, want) == expected);
}

TEST_CASE("sweep_upper_bound: 4 x the last-level cache, within floor and cap", "[ch08]") {
    const std::size_t mib = std::size_t{1} << 20;
    CHECK(ch08::sweep_upper_bound(32 * mib, 16 * mib, 128 * mib).bytes == 128 * mib);
    CHECK(ch08::sweep_upper_bound(300 * mib, 16 * mib, 128 * mib).bytes == 128 * mib);  // a VM's whole-socket L3
    CHECK(ch08::sweep_upper_bound(2 * mib, 16 * mib, 128 * mib).bytes == 16 * mib);
    CHECK(ch08::sweep_upper_bound(8 * mib, 16 * mib, 128 * mib).bytes == 32 * mib);
    CHECK(ch08::sweep_upper_bound(std::nullopt, 16 * mib, 128 * mib).bytes == 128 * mib);
}

TEST_CASE("run_sweep: interleaved passes, then the larger sizes, one point per size, in order", "[ch08]") {
    ch08::SweepConfig config;
    config.sizes = ch08::sweep_sizes(4096, 64 << 10, 2);  // 4, 5.7, 8, ..., 64 KiB: 9 sizes
    REQUIRE(config.sizes.size() == 9);
    config.interleave_max_bytes = 16 << 10;  // 4 .. 16 KiB interleaved: 5 sizes
    config.runs = 3;
    config.timed_hops = 256;
    config.max_warmup = 512;
    config.strided = true;
    // 3 passes over the 5 small sizes, and the 4 larger sizes one by one.
    CHECK(ch08::sweep_steps(config) == 3 + 4);
    // Together: five 2 MiB-rounded buffers and the largest other size.
    CHECK(ch08::sweep_peak_bytes(config) == 5 * (std::size_t{2} << 20) + (64 << 10));
    std::vector<std::string> steps;
    const auto curve = ch08::run_sweep(config, [&](const std::string& what) { steps.push_back(what); });
    REQUIRE(curve.size() == config.sizes.size());
    for (std::size_t k = 0; k < curve.size(); ++k) {
        CHECK(curve[k].bytes == config.sizes[k]);
        CHECK(curve[k].chase_ns > 0);
        CHECK(curve[k].chase_ns < 1e6);
        CHECK(curve[k].strided_ns > 0);
    }
    REQUIRE(steps.size() == ch08::sweep_steps(config));
    // The larger sizes are spread between the passes: one after the first, one
    // after the second pass, two after the third (4 x pass / 3, rounded down).
    CHECK(steps[0] == "pass 1 of 3 over the sizes up to 16 KiB");
    CHECK(steps[1].rfind("22.6 KiB ", 0) == 0);
    CHECK(steps[2] == "pass 2 of 3 over the sizes up to 16 KiB");
    CHECK(steps[3].rfind("32 KiB ", 0) == 0);
    CHECK(steps[4] == "pass 3 of 3 over the sizes up to 16 KiB");
    CHECK(steps[6].rfind("64 KiB ", 0) == 0);
    // Fewer runs than a settled best needs: every size takes all of them.
    for (const auto& p : curve) CHECK(p.runs == config.runs);

    // More: the interleaved sizes take them all, a larger size at least kMinSettledRuns, at most all.
    config.runs = 12;
    const auto settled = ch08::run_sweep(config);
    for (std::size_t k = 0; k < settled.size(); ++k) {
        if (config.sizes[k] <= config.interleave_max_bytes) {
            CHECK(settled[k].runs == 12);
        } else {
            CHECK(settled[k].runs >= ch08::kMinSettledRuns);
            CHECK(settled[k].runs <= 12);
        }
    }

    // Nothing interleaved: every size on its own, all its runs back to back.
    config.interleave_max_bytes = 0;
    CHECK(ch08::sweep_steps(config) == 9);
    CHECK(ch08::sweep_peak_bytes(config) == (64 << 10));
    config.sizes = {8192, 4096};
    CHECK_THROWS_AS(ch08::run_sweep(config), std::invalid_argument);
}

namespace {

// A synthetic curve: levels (ns) that hold up to a capacity, then the next.
// `noise` multiplies each point by (1 + noise * u), u uniform in [-1, 1), seeded.
struct Synthetic {
    std::vector<std::size_t> bytes;
    std::vector<double> ns;
};

Synthetic synthetic(const std::vector<std::size_t>& capacities, const std::vector<double>& levels, double noise,
                    std::uint64_t seed, int steps_per_octave = 4, bool gradual = false) {
    Synthetic c;
    c.bytes = ch08::sweep_sizes(4096, std::size_t{256} << 20, steps_per_octave);
    std::uint64_t state = seed;
    for (std::size_t b : c.bytes) {
        double v = levels.back();
        if (!gradual) {
            for (std::size_t k = 0; k < capacities.size(); ++k)
                if (b <= capacities[k]) {
                    v = levels[k];
                    break;
                }
        } else {
            // Random replacement: past capacity C the hit ratio of a set of size S is C / S.
            v = levels[0];
            for (std::size_t k = 0; k < capacities.size(); ++k) {
                if (b <= capacities[k]) break;
                const double miss = 1.0 - static_cast<double>(capacities[k]) / static_cast<double>(b);
                v = levels[k] + miss * (levels[k + 1] - levels[k]);
            }
        }
        const double u = static_cast<double>(cachebook::uniform_below(state, 1'000'000)) / 500'000.0 - 1.0;
        c.ns.push_back(v * (1.0 + noise * u));
    }
    return c;
}

}  // namespace

TEST_CASE("detect_cliffs: three clean steps land on the capacities", "[ch08]") {
    const std::vector<std::size_t> caps = {48 << 10, 2 << 20, 32 << 20};
    const auto c = synthetic(caps, {1.5, 5.0, 18.0, 110.0}, 0.0, 1);
    const auto cliffs = detect_cliffs(c.bytes, c.ns);
    REQUIRE(cliffs.size() == 3);
    for (std::size_t k = 0; k < 3; ++k) {
        // A sharp step lies between the last size below and the first above;
        // the estimate is inside that grid interval (a fifth of an octave here).
        CHECK(ch08::within(cliffs[k].capacity_bytes, caps[k], 0.19));
        CHECK(c.bytes[cliffs[k].last_flat] <= caps[k]);
    }
    CHECK(cliffs[0].below_ns == Approx(1.5));
    CHECK(cliffs[1].below_ns == Approx(5.0));
    CHECK(cliffs[2].below_ns == Approx(18.0));
    CHECK(cliffs[2].above_ns == Approx(110.0));
}

TEST_CASE("detect_cliffs: noisy plateaus, many seeds, the same three steps", "[ch08]") {
    const std::vector<std::size_t> caps = {32 << 10, 512 << 10, 32 << 20};
    int exact_count = 0;
    for (std::uint64_t seed = 1; seed <= 50; ++seed) {
        const auto c = synthetic(caps, {1.3, 4.0, 15.0, 120.0}, 0.08, seed, 8);
        const auto cliffs = detect_cliffs(c.bytes, c.ns);
        REQUIRE(cliffs.size() == 3);
        bool all = true;
        for (std::size_t k = 0; k < 3; ++k) all = all && ch08::within(cliffs[k].capacity_bytes, caps[k], 0.15);
        exact_count += all;
    }
    CHECK(exact_count == 50);
}

TEST_CASE("detect_cliffs: one spike does not make a cliff", "[ch08]") {
    auto c = synthetic({64 << 10}, {2.0, 8.0}, 0.0, 1, 8);
    c.ns[10] = 40.0;  // an interrupted run at 9.5 KiB
    const auto cliffs = detect_cliffs(c.bytes, c.ns);
    REQUIRE(cliffs.size() == 1);
    CHECK(ch08::within(cliffs[0].capacity_bytes, 64 << 10, 0.1));
}

TEST_CASE("detect_cliffs: gradual steps (random replacement) are found, centred past the capacity", "[ch08]") {
    const std::vector<std::size_t> caps = {48 << 10, 2 << 20};
    const auto c = synthetic(caps, {1.5, 5.0, 100.0}, 0.0, 1, 8, true);
    const auto cliffs = detect_cliffs(c.bytes, c.ns);
    REQUIRE(cliffs.size() == 2);
    for (std::size_t k = 0; k < 2; ++k) {
        // The rise starts at the capacity; halfway up (log scale) comes later, within an octave.
        CHECK(c.bytes[cliffs[k].last_flat] <= caps[k] * 1.1);
        CHECK(cliffs[k].capacity_bytes >= caps[k]);
        CHECK(cliffs[k].capacity_bytes <= 2 * caps[k]);
    }
}

TEST_CASE("detect_cliffs: no step at all gives no cliff (not a made-up number)", "[ch08]") {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        const auto flat = synthetic({}, {3.0}, 0.10, seed, 8);
        CHECK(detect_cliffs(flat.bytes, flat.ns).empty());
    }
    // A slow drift (DRAM with more and more page walks) is not a cliff either.
    std::vector<std::size_t> b = ch08::sweep_sizes(4096, std::size_t{64} << 20, 4);
    std::vector<double> ns;
    for (std::size_t i = 0; i < b.size(); ++i) ns.push_back(100.0 * std::pow(1.03, static_cast<double>(i)));
    CHECK(detect_cliffs(b, ns).empty());
    // A small bump (a TLB reach, +30 %) is below the 50 % a step needs.
    auto bump = synthetic({256 << 10}, {5.0, 6.5}, 0.0, 1, 8);
    CHECK(detect_cliffs(bump.bytes, bump.ns).empty());
}

TEST_CASE("detect_cliffs: bad input", "[ch08]") {
    CHECK(detect_cliffs({4096, 8192}, {1.0, 2.0}).empty());  // too short to have plateaus
    CHECK_THROWS_AS(detect_cliffs({4096, 8192, 16384}, {1.0, 2.0}), std::invalid_argument);
    CHECK_THROWS_AS(detect_cliffs({4096, 8192, 16384}, {1.0, 0.0, 2.0}), std::invalid_argument);
}

TEST_CASE("levels_from pairs the k-th cliff with level k and sysfs", "[ch08]") {
    const std::vector<ch08::Cliff> cliffs = {{3, 4, 30000, 1.2, 4.0}, {10, 12, 500000, 4.0, 15.0}};
    const auto levels = ch08::levels_from(cliffs, {32768, 524288, std::nullopt});
    REQUIRE(levels.size() == 3);
    CHECK(levels[0].name == "L1d");
    CHECK(*levels[0].detected == 30000);
    CHECK(*levels[0].difference_pct == Approx((30000.0 - 32768.0) / 32768.0 * 100.0));
    CHECK(*levels[1].latency_ns == Approx(4.0));
    CHECK_FALSE(levels[2].detected.has_value());  // not found, and no number invented
    CHECK_FALSE(levels[2].reported.has_value());
    CHECK_FALSE(levels[2].difference_pct.has_value());
    CHECK(ch08::within(30000, 32768, 0.15));
    CHECK_FALSE(ch08::within(20000, 32768, 0.15));
}

TEST_CASE("line size rules on synthetic strides", "[ch08]") {
    using P = ch08::StridePoint;
    // The flush probe: misses while the stride stays inside the flushed line.
    const std::vector<P> probe = {{8, 150},  {16, 160}, {32, 155}, {64, 20},
                                  {128, 21}, {256, 19}, {512, 22}, {1024, 20}};
    CHECK(ch08::line_size_from_probe(probe) == std::optional<std::size_t>(64));
    std::vector<P> flat = probe;
    for (auto& p : flat) p.ns = 100;
    CHECK_FALSE(ch08::line_size_from_probe(flat).has_value());
    const std::vector<P> back_up = {{8, 150}, {16, 20}, {32, 150}, {64, 20}, {128, 20}};
    CHECK(ch08::line_size_from_probe(back_up) == std::optional<std::size_t>(64));  // the last rise counts
    // The touches: cost grows until each touch is its own line, then stays.
    const std::vector<P> touches = {{8, 25},    {16, 25},  {32, 50},   {64, 100},
                                    {128, 100}, {256, 98}, {512, 101}, {1024, 99}};
    CHECK(ch08::line_size_from_touches(touches) == std::optional<std::size_t>(64));
    CHECK_FALSE(ch08::line_size_from_touches(flat).has_value());
}

// ---------------------------------------------------------------------------
// Measured on this machine.

TEST_CASE("the first cliff's two working sets lie at the band's edges, in whole chase nodes", "[ch08]") {
    // 48 KiB: 75 % is 36 KiB, 576 nodes; 115 % is 56,524.8 bytes, 883.2 nodes, so 883.
    CHECK(ch08::band_edge_bytes(48 * 1024, 1 - ch08::kBandBelow) == 576 * 64);
    CHECK(ch08::band_edge_bytes(48 * 1024, 1 + ch08::kBandAbove) == 883 * 64);
    CHECK(ch08::band_edge_bytes(32 * 1024, 1 + ch08::kBandAbove) == 589 * 64);  // 588.8 nodes
    CHECK(ch08::band_edge_bytes(64, 0.5) == 2 * 64);                            // a cycle needs two nodes
}

TEST_CASE("measured: the first cliff lies between 75 % and 115 % of the reported L1d", "[ch08][timing]") {
    const auto l1 = cachebook::data_cache(1);
    if (!l1) CACHEBOOK_SKIP("sysfs reports no L1 data cache to compare with");
    if (!cachebook::pin_to_cpu(cachebook::nth_usable_cpu(0))) CACHEBOOK_SKIP("cannot pin to one core");
    // A chase over 115 % of L1d against one over 75 %, the kit's experiment at its quick size.
    const ch08::FirstCliffExperiment first(
        l1->size_bytes, cachebook::huge_pages_available() ? cachebook::PageSize::Huge : cachebook::PageSize::Small);
    const auto claim = first.run(true).result;
    INFO(claim.reason);
    if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
    CHECK(claim.verdict == cachebook::Verdict::holds);
}

TEST_CASE("where a line can be flushed, both line-size experiments time every stride, in order", "[ch08]") {
    const std::vector<std::size_t> strides = {8, 64, 512};
    for (auto method : {ch08::LineMethod::Touches, ch08::LineMethod::FlushProbe}) {
        const auto r = ch08::measure_line_size(method, strides, 4, std::size_t{1} << 20, 2, 3);
#if defined(__x86_64__) || defined(__aarch64__)
        REQUIRE(r.measured);  // clflush, or dc civac, runs in user code
        REQUIRE(r.points.size() == strides.size());
        for (std::size_t i = 0; i < strides.size(); ++i) {
            CHECK(r.points[i].stride == strides[i]);
            CHECK(r.points[i].ns > 0);
        }
#else
        CHECK_FALSE(r.measured);
        CHECK(r.points.empty());
#endif
    }
#if defined(__x86_64__) || defined(__aarch64__)
    // The gap must hold a fresh page for each of strides x runs trials: 3 x 2 x 8 KiB > 32 KiB.
    CHECK_THROWS_AS(ch08::measure_line_size(ch08::LineMethod::Touches, strides, 4, std::size_t{32} << 10, 2, 3),
                    std::invalid_argument);
#endif
}

TEST_CASE("measured: the flush probe finds the line size sysfs reports", "[ch08][timing]") {
    const auto l1 = cachebook::data_cache(1);
    if (!l1 || l1->line_bytes == 0) CACHEBOOK_SKIP("sysfs reports no line size to compare with");
    const auto r = ch08::measure_line_size(ch08::LineMethod::FlushProbe, {8, 16, 32, 64, 128, 256, 512}, 64,
                                           std::size_t{1} << 20, 5, 11);
    if (!r.measured) CACHEBOOK_SKIP("no line flush on this architecture");
    REQUIRE(r.line_bytes.has_value());
    CHECK(*r.line_bytes == l1->line_bytes);
}

// --- The price of a miss (amat.md) ---------------------------------------------------------

TEST_CASE("amat_ns: the nested formula, worked by hand", "[ch08]") {
    // 1 + 0.5 x (4 - 1 + 0.25 x (40 - 4)) = 1 + 0.5 x 12 = 7
    CHECK(ch08::amat_ns({1, 4, 40}, {0.5, 0.25}) == Approx(7.0));
    // one level: 2 + 0.1 x (100 - 2) = 11.8
    CHECK(ch08::amat_ns({2, 100}, {0.1}) == Approx(11.8));
    // nothing misses: the hit time of the first level
    CHECK(ch08::amat_ns({1.5, 4, 40}, {0, 0.9}) == Approx(1.5));
    // everything misses everywhere: the latency of memory
    CHECK(ch08::amat_ns({1, 4, 40}, {1, 1}) == Approx(40.0));
    CHECK_THROWS_AS(ch08::amat_ns({1, 4}, {0.5, 0.5}), std::invalid_argument);
}

namespace {

// L1: 4 sets x 2 ways x 64 B (8 lines); L2: 16 sets x 4 ways x 64 B (64 lines, 4 KiB).
std::vector<cachebook::CacheConfig> small_hierarchy() {
    cachebook::CacheConfig l1, l2;
    l1.sets = 4, l1.ways = 2;
    l2.sets = 16, l2.ways = 4;
    return {l1, l2};
}

}  // namespace

TEST_CASE("warm_counts: chapter 2's two walks through two levels, counted by hand", "[ch08]") {
    // int a[32][32]: 4 KiB, 64 lines of 16 ints, two lines a row. The L2 holds all 64 (4 per set),
    // so on the warm pass nothing reaches beyond it.
    const auto levels = small_hierarchy();
    const auto row = ch08::warm_counts(levels, ch08::row_walk(32));
    REQUIRE(row.size() == 2);
    // Row by row: 64 lines in turn, more than L1's 8: one miss per line, 1024 / 16 = 64.
    CHECK(row[0].accesses == 1024);
    CHECK(row[0].misses == 64);
    CHECK(row[1].accesses == 64);
    CHECK(row[1].misses == 0);
    // Column by column: a column's 32 lines (2i or 2i + 1) fall in two sets of L1, 16 lines
    // to a 2-way set in turn: every load misses L1, and hits L2.
    const auto column = ch08::warm_counts(levels, ch08::column_walk(32));
    CHECK(column[0].accesses == 1024);
    CHECK(column[0].misses == 1024);
    CHECK(column[1].accesses == 1024);
    CHECK(column[1].misses == 0);
    // Latencies 1, 5 and 50 ns: row 1 + (1/16) x 4 = 1.25 ns, column 1 + 1 x 4 = 5 ns.
    CHECK(ch08::amat_ns({1, 5, 50}, ch08::miss_rates(row)) == Approx(1.25));
    CHECK(ch08::amat_ns({1, 5, 50}, ch08::miss_rates(column)) == Approx(5.0));
}

TEST_CASE("warm_counts: the chase and the strided sum miss alike, so AMAT prices them alike", "[ch08]") {
    // 64 nodes of 64 bytes: 64 lines. Each line was last used 64 loads ago, in either order:
    // L1 (8 lines) misses every load, L2 (64 lines) none.
    const auto levels = small_hierarchy();
    const auto chase = ch08::warm_counts(levels, ch08::chase_walk(cachebook::single_cycle(64, 7), 64));
    const auto strided = ch08::warm_counts(levels, ch08::sequential_walk(4096, 64));
    for (const auto* c : {&chase, &strided}) {
        CHECK((*c)[0].accesses == 64);
        CHECK((*c)[0].misses == 64);
        CHECK((*c)[1].accesses == 64);
        CHECK((*c)[1].misses == 0);
    }
    // 128 nodes: more than L2 holds, so every load misses both.
    const auto far = ch08::warm_counts(levels, ch08::chase_walk(cachebook::single_cycle(128, 7), 64));
    CHECK(far[1].misses == 128);
    CHECK(ch08::amat_ns({1, 5, 50}, ch08::miss_rates(far)) == Approx(50.0));
}

TEST_CASE("price_levels: the machine's geometry, else the curve's size with ways and line assumed", "[ch08]") {
    ch08::Setup setup;
    cachebook::CacheInfo l1;
    l1.level = 1, l1.type = "Data", l1.size_bytes = 49152, l1.ways = 12, l1.line_bytes = 64;
    setup.l1 = l1;
    ch08::LevelsFound found;
    found.levels = {{"L1d", 50000, 1.5, 49152, 1.7},
                    {"L2", std::size_t{1} << 20, 4.0, std::nullopt, std::nullopt},
                    {"L3", std::nullopt, std::nullopt, std::nullopt, std::nullopt}};
    found.beyond_ns = 90;
    const auto h = ch08::price_levels(setup, found);
    REQUIRE(h.levels.size() == 3);
    const auto configs = h.configs();
    REQUIRE(configs.size() == 2);
    CHECK(configs[0].sets == 64);  // 49152 / (12 x 64)
    CHECK(configs[0].ways == 12);
    CHECK(configs[1].sets == 2048);  // 1 MiB / (8 assumed ways x 64 B)
    CHECK(configs[1].ways == ch08::kAssumedWays);
    CHECK(h.levels[1].geometry_from == "the curve's step, 8 ways assumed, 64-byte lines assumed");
    CHECK_FALSE(h.levels[2].cache.has_value());
    CHECK(h.levels[2].why_not == "not priced: the curve shows no step for it");
    CHECK(h.latencies() == std::vector<double>{1.5, 4.0, 90});
    CHECK(h.usable());
    // No step at all: nothing is priced, and there is no AMAT.
    found.levels[0].latency_ns.reset();
    const auto none = ch08::price_levels(setup, found);
    CHECK(none.configs().empty());
    CHECK(none.levels[1].why_not == "not priced: a level before it is not");
    CHECK_FALSE(none.usable());
}

TEST_CASE("time_walks: chapter 2's two sums agree", "[ch08]") {
    const auto t = ch08::time_walks(64, 1);
    // (i + j) % 10 over 64 x 64: worked as sum over i of the row sums, checked against a plain loop.
    long long expect = 0;
    for (std::size_t i = 0; i < 64; ++i)
        for (std::size_t j = 0; j < 64; ++j) expect += static_cast<long long>((i + j) % 10);
    CHECK(t.row_sum == expect);
    CHECK(t.column_sum == expect);
    CHECK(t.row_ns > 0);
    CHECK(t.column_ns > 0);
}

TEST_CASE("measured: a dependent chase takes at least twice as long as as many independent loads", "[ch08][timing]") {
    // The run's own buffer: chapter 2's int a[2048][2048], 16 MiB, one hop per 512 bytes.
    const std::size_t bytes = std::size_t{2048} * 2048 * sizeof(int);
    const auto r = ch08::OverlapExperiment(bytes, bytes / 512, 2026).run(true).result;
    if (r.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(r.reason);
    INFO(r.reason);
    CHECK(r.verdict == cachebook::Verdict::holds);
}

// ---------------------------------------------------------------------------
// The second page: loads in flight and read bandwidth.

TEST_CASE("chase_together leaves each chase where it would stand alone", "[ch08]") {
    const std::size_t nodes = 1000;
    const cachebook::PageBuffer buf(nodes * ch08::kNodeBytes, cachebook::PageSize::Small);
    const std::uint64_t seed = 5;
    cachebook::link_chase(buf, nodes, ch08::kNodeBytes, seed);
    const auto order = ch08::cycle_order(cachebook::single_cycle(nodes, seed));
    for (std::size_t k : {std::size_t{1}, std::size_t{3}, std::size_t{8}, ch08::kMaxChases}) {
        std::vector<const void*> chases;
        for (std::uint32_t node : ch08::spaced_starts(order, k, 11))
            chases.push_back(buf.data() + node * ch08::kNodeBytes);
        std::vector<const void*> expected;
        for (const void* s : chases) expected.push_back(cachebook::chase(s, 77));
        ch08::chase_together(chases, 77);
        CHECK(chases == expected);
    }
    std::vector<const void*> none;
    CHECK_THROWS_AS(ch08::chase_together(none, 1), std::invalid_argument);
}

TEST_CASE("cycle_order follows the cycle, and spaced_starts are n / k hops apart along it", "[ch08]") {
    // The cycle 0 -> 3 -> 1 -> 4 -> 2 -> 0.
    const std::vector<std::uint32_t> next = {3, 4, 0, 1, 2};
    const auto order = ch08::cycle_order(next);
    CHECK(order == std::vector<std::uint32_t>{0, 3, 1, 4, 2});
    // k = 2: positions 0 and 5 / 2 = 2 of the order; k = 5: every node.
    CHECK(ch08::spaced_starts(order, 2) == std::vector<std::uint32_t>{0, 1});
    CHECK(ch08::spaced_starts(order, 5) == order);
    CHECK(ch08::spaced_starts(order, 2, 4) == std::vector<std::uint32_t>{2, 3});  // positions 4 and 6 mod 5 = 1
    CHECK_THROWS_AS(ch08::spaced_starts(order, 6), std::invalid_argument);
    CHECK_THROWS_AS(ch08::spaced_starts(order, 0), std::invalid_argument);
}

TEST_CASE("the knee: the fewest chases within the margin of the best time per access", "[ch08]") {
    // latency 100 / k up to k = 10 (ten loads in flight), then flat at 10.
    std::vector<double> ns;
    for (int k = 1; k <= 16; ++k) ns.push_back(100.0 / std::min(k, 10));
    const auto knee = ch08::knee_of(ns);
    // Within 10 % of the best (10 ns) means at most 11 ns: k = 9 gives 100 / 9 = 11.1, k = 10 gives 10.
    CHECK(knee.k == 10);
    CHECK(knee.best_ns == 10.0);
    CHECK(knee.in_flight == 10.0);
    CHECK(ch08::knee_of(ns, 0.2).k == 9);  // 11.1 <= 12
    CHECK_THROWS_AS(ch08::knee_of({}), std::invalid_argument);
}

TEST_CASE("the chase counts of chapter 8's curve and of the profile: every count to 16, then steps of 8 to 48",
          "[ch08]") {
    const std::vector<std::size_t> expected = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 32, 40, 48};
    CHECK(cachebook::chase_counts() == expected);
    // A core that gains up to 40 chases: the knee lies past the counts every one of which is run.
    std::vector<double> ns;
    for (std::size_t k : expected) ns.push_back(400.0 / static_cast<double>(std::min<std::size_t>(k, 40)));
    const auto knee = ch08::knee_of(expected, ns);
    CHECK(knee.k == 40);
    CHECK(knee.in_flight == 40.0);
}

TEST_CASE("line traffic and the prefetcher's reach in a row of the mountain", "[ch08]") {
    // 8 words to a 64-byte line: up to a stride of 8 words every line is read.
    CHECK(ch08::line_traffic_gbs(2.0, 1) == 2.0);
    CHECK(ch08::line_traffic_gbs(2.0, 4) == 8.0);
    CHECK(ch08::line_traffic_gbs(2.0, 16) == 16.0);
    const std::vector<std::size_t> strides = {1, 2, 4, 8, 16, 32};
    // Traffic 10, 10, 9, 8.8, 5.6, 6.4 GB/s: 80 % of 10 holds up to stride 8, then falls.
    const std::vector<double> gbs = {10, 5, 2.25, 1.1, 0.7, 0.8};
    CHECK(ch08::prefetch_reach(strides, gbs) == 8);
    CHECK(ch08::prefetch_reach(strides, gbs, 0.5) == 32);
    CHECK_THROWS_AS(ch08::prefetch_reach(strides, {1.0}), std::invalid_argument);
}

TEST_CASE("where_working_set: the reported level the memory set lies beyond", "[ch08]") {
    constexpr std::size_t MiB = std::size_t{1} << 20;
    CHECK(ch08::where_working_set(128 * MiB, 512 * 1024, 32 * MiB) == "beyond the reported L3 (32 MiB)");
    CHECK(ch08::where_working_set(128 * MiB, 2 * MiB, 300 * MiB) ==
          "inside the reported L3 (300 MiB), beyond the L2 (2 MiB)");
    CHECK(ch08::where_working_set(16 * MiB, 2 * MiB, 0) == "beyond the reported L2 (2 MiB), the last level reported");
    CHECK(ch08::where_working_set(16 * MiB, 0, 0) == "against no reported cache size");
}

TEST_CASE("level_sizes: inside each level, above the one below", "[ch08]") {
    constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;
    // 32 KiB, 512 KiB, 32 MiB: L1 16 KiB; L2 sqrt(32 x 512) = 128 KiB; L3 min(sqrt(0.5 x 32) MiB, 2 MiB) = 2 MiB;
    // memory 4 x 32 MiB = 128 MiB.
    const auto zen3 = cachebook::level_sizes(32 * KiB, 512 * KiB, 32 * MiB);
    CHECK(zen3.l1 == 16 * KiB);
    CHECK(zen3.l2 == 128 * KiB);
    CHECK(zen3.l3 == 2 * MiB);
    CHECK(zen3.memory == 128 * MiB);
    // 48 KiB, 2 MiB, 300 MiB: L3 4 x L2 = 8 MiB (below sqrt(2 x 300) MiB); memory capped at 128 MiB.
    const auto spr = cachebook::level_sizes(48 * KiB, 2 * MiB, 300 * MiB);
    CHECK(spr.l2 == 321024);  // floor(sqrt(49152 x 2097152)) = 321059, down to a multiple of 64
    CHECK(spr.l3 == 8 * MiB);
    CHECK(spr.memory == 128 * MiB);
    // Nothing reported: no level measured; memory at its floor of 16 MiB.
    const auto none = cachebook::level_sizes(0, 0, 0);
    CHECK(none.l1 == 0);
    CHECK(none.l2 == 0);
    CHECK(none.l3 == 0);
    CHECK(none.memory == 16 * MiB);
}

TEST_CASE("read_sum adds every stride-th word, and read_gbs times it", "[ch08]") {
    const cachebook::PageBuffer buf(4096, cachebook::PageSize::Small);
    auto* words = reinterpret_cast<std::uint64_t*>(buf.data());
    for (std::size_t i = 0; i < 512; ++i) words[i] = i;
    CHECK(cachebook::read_sum(words, 512, 1, 1) == 511 * 512 / 2);
    // Stride 3 over 10 words: 0 + 3 + 6 + 9, twice.
    CHECK(cachebook::read_sum(words, 10, 3, 2) == 36);
    CHECK(cachebook::read_gbs(buf, 4096, 2, 1 << 16, 2) > 0);
    CHECK_THROWS_AS(cachebook::read_gbs(buf, 8192, 1, 1, 1), std::invalid_argument);
}

TEST_CASE("measured: in memory, 8 chases at once are at least 3x faster per access than one", "[ch08][timing]") {
    const auto sizes = cachebook::level_sizes_of_this_machine();
    const auto claim = ch08::ChasesExperiment(sizes.memory).run(true).result;
    INFO(claim.reason);
    if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
    CHECK(claim.verdict == cachebook::Verdict::holds);
}
