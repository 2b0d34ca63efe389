// Chapter 7's claims: the parsers and the model exactly, cachegrind against the
// model, and each measuring mistake's effect as a ratio.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "../chapters/07_measurement/lab.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/matmul_orders.hpp"
#include "sum_kernel.hpp"
#include "support.hpp"

TEST_CASE("the kernel built at -O0 and at -O2 gives the same sums and products", "[ch07]") {
    const auto grid = ch07::make_grid(100);
    std::int64_t expected = 0;
    for (int v : grid) expected += v;
    CHECK(ch07::o0::sum_rows(grid.data(), 100) == expected);
    CHECK(ch07::o0::sum_columns(grid.data(), 100) == expected);
    CHECK(ch07::o2::sum_rows(grid.data(), 100) == expected);
    CHECK(ch07::o2::sum_columns(grid.data(), 100) == expected);
    CHECK(ch07::o0::sum_rows_prefetched(grid.data(), 100, 128) == expected);
    CHECK(ch07::o2::sum_rows_prefetched(grid.data(), 100, 128) == expected);
    // 70 is no multiple of the tile: the blocked product's clipped edges must match too.
    const std::size_t n = 70;
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<double> naive(n * n), blocked(n * n, 5.0);
    ch07::o2::product_naive(m.a.data(), m.b.data(), naive.data(), n);
    ch07::o0::product_blocked(m.a.data(), m.b.data(), blocked.data(), n, 32);
    CHECK(naive == blocked);
    double c_00 = 0;
    for (std::size_t k = 0; k < n; ++k) c_00 += m.a[k] * m.b[k * n];
    CHECK(naive[0] == c_00);
    CHECK(ch07::blocked_rule(70, 32, 1, false).same_results);
}

TEST_CASE("the model's misses for the chapter 2 walks, 32 KiB 8-way L1", "[ch07]") {
    const auto l1 = cachebook::CacheConfig::from_capacity(32768, 8, 64);
    const auto walks = ch07::simulate_walks(l1, 512);
    CHECK(walks.accesses == 262144);
    CHECK(walks.row_misses == 16384);      // one per line
    CHECK(walks.column_misses == 262144);  // a 2 KiB row stride uses 2 of 64 sets: every access misses
    const auto small = ch07::simulate_walks(l1, 64);
    CHECK(small.row_misses == 256);     // 16 KiB = 256 lines
    CHECK(small.column_misses == 256);  // it fits: the column walk misses once per line too
    CHECK(ch07::cachegrind_d1_flag(l1) == "--D1=32768,8,64");
}

TEST_CASE("the model's six orders in 32 lines, fully associative, match chapter 3's table", "[ch07]") {
    const auto cache = cachebook::CacheConfig::fully_associative(32, 64);
    using cachebook::LoopOrder;
    const auto [order, a, b, c, total] = GENERATE(table<LoopOrder, double, double, double, double>({
        {LoopOrder::ijk, 0.125, 1.000, 0.002, 1.127},
        {LoopOrder::jik, 0.125, 1.000, 0.016, 1.141},
        {LoopOrder::jki, 1.000, 0.016, 1.000, 2.016},
        {LoopOrder::kji, 1.000, 0.002, 1.000, 2.002},
        {LoopOrder::kij, 0.016, 0.002, 0.125, 0.143},
        {LoopOrder::ikj, 0.002, 0.125, 0.002, 0.129},
    }));
    const auto model = ch07::model_order_misses(order, 64, cache);
    INFO(cachebook::order_name(order));
    CHECK(fmt::format("{:.3f} {:.3f} {:.3f} {:.3f}", model.a, model.b, model.c, model.total()) ==
          fmt::format("{:.3f} {:.3f} {:.3f} {:.3f}", a, b, c, total));
    CHECK(ch07::cachegrind_d1_flag(cache) == "--D1=2048,32,64");
}

TEST_CASE("a count is compared with the model within 10 %, or 0.01 per iteration", "[ch07]") {
    CHECK(ch07::compare_with_model(1.143, 1.127) == "agrees");
    CHECK(ch07::compare_with_model(0.135, 0.129) == "agrees");  // within 0.01
    CHECK(ch07::compare_with_model(1.057, 2.016) == "fewer");
    CHECK(ch07::compare_with_model(1.3, 1.127) == "more");
    ch07::OrderCounts counts{"", 1000, {1000 + 64 * 64 * 64, 1000}};
    CHECK(counts.per_iteration(0, 64) == 1.0);
    CHECK(counts.per_iteration(1, 64) == 0.0);
}

TEST_CASE("the audited prefetch changes when lines arrive, not how many", "[ch07]") {
    ch07::PrefetchAudit audit;
    audit.n = 256;
    audit.distance = 128;
    ch07::model_prefetch(audit, cachebook::CacheConfig::from_capacity(32768, 8, 64));
    CHECK(audit.stride_bytes == 4);
    CHECK(audit.model_plain == 1.0 / 16);  // one line per 16 ints
    CHECK(audit.model_prefetched == 1.0 / 16);
}

TEST_CASE("the audit's verdict follows the rule's verdicts on the claim and on any gain", "[ch07]") {
    // Runs in seconds, plain and prefetched interleaved. The control: each side's even runs'
    // minimum against its odd runs'; the two sides' gaps compounded are the noise.
    auto verdict_of = [&](std::vector<double> plain, std::vector<double> prefetched) {
        cachebook::ExperimentResult timed;
        timed.result = cachebook::decide_claim(plain, prefetched, {.threshold = ch07::kClaimedSpeedup});
        timed.slow_runs = std::move(plain);
        timed.fast_runs = std::move(prefetched);
        return ch07::audit_verdict(ch07::audit_claims(timed));
    };
    // 1.20x; noise 1.21 / 1.20 - 1 = 0.8 %: 1.20 clears 1.10 x 1.008.
    CHECK(verdict_of({1.20, 1.21, 1.20, 1.21, 1.20, 1.21}, {1.00, 1.00, 1.00, 1.00, 1.00, 1.00}) == "holds");
    // 1.05x, noise 0: short of 1.10, above 1.
    CHECK(verdict_of({1.05, 1.05, 1.05, 1.05, 1.05, 1.05}, {1.00, 1.00, 1.00, 1.00, 1.00, 1.00}) == "smaller");
    // 1.005x, noise 1 %: short of 1.10 / 1.01 = 1.089, and between 1 / 1.01 and 1 x 1.01.
    CHECK(verdict_of({1.005, 1.005, 1.005, 1.005, 1.005, 1.005}, {1.00, 1.01, 1.00, 1.01, 1.00, 1.01}) == "none");
    // 1.45 / 1.68 = 0.86x, noise 0: the prefetch costs time, beyond any noise.
    CHECK(verdict_of({1.45, 1.45, 1.45, 1.45, 1.45, 1.45}, {1.68, 1.68, 1.68, 1.68, 1.68, 1.68}) == "slower");
    // Noise 0.90 / 0.60 - 1 = 50 %, above the 20 % a fails needs: 1.20x clears neither 1.10 x 1.5
    // nor 1 x 1.5, so no verdict on either claim.
    CHECK(verdict_of({0.60, 0.90, 0.60, 0.90, 0.60, 0.90}, {0.50, 0.50, 0.50, 0.50, 0.50, 0.50}) == "undecided");
    // The same noise under 2.00x: 2.00 clears 1.10 x 1.5 = 1.65, so the claim holds all the same.
    CHECK(verdict_of({1.00, 1.50, 1.00, 1.50, 1.00, 1.50}, {0.50, 0.50, 0.50, 0.50, 0.50, 0.50}) == "holds");
    // 1.10x, noise 1 %: between 1.10 / 1.01 and 1.10 x 1.01, within the noise of the claim.
    CHECK(verdict_of({1.10, 1.10, 1.10, 1.10, 1.10, 1.10}, {1.00, 1.01, 1.00, 1.01, 1.00, 1.01}) == "undecided");
}

TEST_CASE("perf's answers are read correctly", "[ch07]") {
    using ch07::PerfState;
    CHECK(ch07::parse_perf_probe("<not supported>,,cache-misses,0,100.00,,\n", 0) == PerfState::NotSupported);
    CHECK(ch07::parse_perf_probe("123456,,cache-misses,693600,100.00,,\n", 0) == PerfState::Works);
    CHECK(ch07::parse_perf_probe("sh: 1: perf: not found\n", 127) == PerfState::NotInstalled);
    CHECK(ch07::parse_perf_probe("Error:\nAccess to performance monitoring and observability operations is limited.\n",
                                 255) == PerfState::NoPermission);
    CHECK(ch07::parse_perf_count("123456,,cache-misses,693600,100.00,,\n", "cache-misses") == 123456u);
    CHECK_FALSE(ch07::parse_perf_count("<not supported>,,cache-misses,0,100.00,,\n", "cache-misses").has_value());
    CHECK_FALSE(ch07::parse_perf_count("1,,cycles,0,100.00,,\n", "cache-misses").has_value());
}

TEST_CASE("cachegrind's D1 line is read correctly", "[ch07]") {
    const std::string out =
        "==42== D   refs:         1,234,567  (1,000,000 rd   + 234,567 wr)\n"
        "==42== D1  misses:         278,523  (  262,400 rd   +  16,123 wr)\n"
        "==42== LLd misses:          30,000  (   20,000 rd   +  10,000 wr)\n";
    CHECK(ch07::parse_cachegrind_d1_misses(out) == 278523u);
    CHECK_FALSE(ch07::parse_cachegrind_d1_misses("valgrind: no such tool\n").has_value());
}

TEST_CASE("cachegrind counts what the model counts", "[ch07][valgrind]") {
    if (cachebook::run_command("command -v valgrind").status != 0) CACHEBOOK_SKIP("valgrind is not installed");
    const auto l1 = cachebook::CacheConfig::from_capacity(32768, 8, 64);
    const auto model = ch07::simulate_walks(l1, 256);
    const auto tool = ch07::cachegrind_walks(l1, 256);
    INFO("why not: " << tool.why_not);
    REQUIRE(tool.tool == "cachegrind");
    INFO("cachegrind: rows " << tool.row_walk() << ", columns " << tool.column_walk());
    // A few misses beyond the walk's own (stack, the printf) are allowed.
    CHECK(std::abs(tool.row_walk() - static_cast<std::int64_t>(model.row_misses)) <= 64);
    CHECK(std::abs(tool.column_walk() - static_cast<std::int64_t>(model.column_misses)) <= 64);
}

TEST_CASE("cachegrind counts chapter 3's six orders: the inner-j orders miss least", "[ch07][valgrind]") {
    if (cachebook::run_command("command -v valgrind").status != 0) CACHEBOOK_SKIP("valgrind is not installed");
    const auto cache = cachebook::CacheConfig::fully_associative(32, 64);
    const auto counted = ch07::cachegrind_orders(cache, 64);
    INFO("why not: " << counted.why_not);
    REQUIRE(counted.why_not.empty());
    REQUIRE(counted.misses.size() == 6);
    for (std::size_t k = 0; k < 6; ++k) {
        const auto order = cachebook::kAllOrders[k];
        const double per = counted.per_iteration(k, 64);
        INFO(cachebook::order_name(order) << ": cachegrind " << per);
        const bool inner_j = order == cachebook::LoopOrder::kij || order == cachebook::LoopOrder::ikj;
        // The compiler may serve several iterations with one access (fewer misses), never add many.
        CHECK(per <= ch07::model_order_misses(order, 64, cache).total() + 0.05);
        if (inner_j)
            CHECK(ch07::compare_with_model(per, ch07::model_order_misses(order, 64, cache).total()) == "agrees");
        else
            CHECK(per > 0.5);
    }
}

TEST_CASE("by Amdahl's law a 2 % part made 10x faster speeds the whole up by under 2 %", "[ch07]") {
    const auto [fraction, speedup, whole] = GENERATE(table<double, double, double>({
        {0.02, 10.0, 1.0 / 0.982},
        {0.5, 2.0, 4.0 / 3.0},
        {1.0, 8.0, 8.0},
        {0.0, 8.0, 1.0},
    }));
    CHECK(ch07::amdahl(fraction, speedup) == Approx(whole));
    CHECK(ch07::amdahl(0.02, 10.0) < 1.02);
}

TEST_CASE("the small array of the size rule fills at most half of L1", "[ch07]") {
    const auto [l1_bytes, order] = GENERATE(table<std::size_t, std::size_t>({
        {32768, 64},    // 64 x 64 ints = 16 KiB
        {49152, 64},    // 128 x 128 would be 64 KiB
        {131072, 128},  // 64 KiB of 128 KiB
        {1024, 16},     // never below 16
    }));
    CHECK(ch07::l1_resident_order(l1_bytes) == order);
}

TEST_CASE("a batch's spread is its slowest run over its fastest, the gap compares two minima", "[ch07]") {
    ch07::RunsRule rule;
    rule.batch_a.runs = {0.012, 0.010, 0.015};
    rule.batch_b.runs = {0.011, 0.0125};
    CHECK(rule.spread() == Approx(0.5));
    CHECK(rule.min_gap() == Approx(1.0 / 11.0));
    CHECK(rule.first() == 0.012);
}

TEST_CASE("the L1 the counters are compared on is this machine's, or 32 KiB 8-way when unknown", "[ch07]") {
    const auto geometry = ch07::l1_geometry();
    const auto l1 = cachebook::data_cache(1);
    if (l1 && l1->sets > 0 && l1->ways > 0 && l1->line_bytes > 0) {
        CHECK(geometry.sets == l1->sets);
        CHECK(geometry.ways == l1->ways);
        CHECK(geometry.line_bytes == l1->line_bytes);
    } else {
        CHECK(geometry.capacity_bytes() == 32768);
        CHECK(geometry.ways == 8);
    }
}

// --- Measured ------------------------------------------------------------------------------

TEST_CASE("a result nobody uses is computed in no time", "[ch07][timing]") {
    const auto sums = ch07::dead_code_rule(ch07::kQuickN, 0, true);
    const auto& claim = sums.timed.result;
    INFO("unused " << sums.unused_s() << " s, used " << sums.used_s() << " s: " << claim.reason);
    if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
    CHECK(claim.verdict == cachebook::Verdict::holds);
}

TEST_CASE("the first touch of fresh pages costs more than the second", "[ch07][timing]") {
    const auto touch = ch07::touch_rule(ch07::kTouchBytes, 0, true);
    const auto& claim = touch.timed.result;
    INFO("first " << touch.first_fill_s() << " s, second " << touch.second_fill_s() << " s, faults "
                  << touch.faults_first << ": " << claim.reason);
    CHECK(touch.timed.slow_runs.size() == static_cast<std::size_t>(cachebook::kMinRunsPerSide));
    CHECK(touch.faults_first > touch.faults_second);  // counted, not timed: no noise to allow for
    if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
    CHECK(claim.verdict == cachebook::Verdict::holds);
}

TEST_CASE("built at -O0 the blocked product is slower and blocking gains less", "[ch07][timing]") {
    const auto builds = ch07::blocked_rule(ch07::kQuickProductN, ch07::kProductTile, 0, true);
    INFO("blocked -O0/-O2: " << builds.o0_over_o2.reason
                             << "; gain at -O2 over gain at -O0: " << builds.gain.result.reason);
    CHECK(builds.same_results);
    CHECK(builds.o0_over_o2.verdict != cachebook::Verdict::fails);
    CHECK(builds.gain.result.verdict != cachebook::Verdict::fails);
    for (const auto* claim : {&builds.o0_over_o2, &builds.gain.result})
        if (claim->verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim->reason);
}

TEST_CASE("the loop order matters only once the data leaves L1", "[ch07][timing]") {
    const auto sizes = ch07::size_rule(64, ch07::kDefaultN, 0, true);
    const auto& claim = sizes.claim.result;
    INFO("columns / rows: 64 x 64 " << sizes.claim.under.value << ", " << ch07::kDefaultN << " x " << ch07::kDefaultN
                                    << " " << sizes.claim.over.value << ": " << claim.reason);
    if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
    CHECK(claim.verdict == cachebook::Verdict::holds);
}

TEST_CASE("a strided sum understates the latency a pointer chase shows", "[ch07][timing]") {
    const auto row = ch07::latency_row(ch07::kQuickLatencyBytes, ch07::kQuickLatencyHops, 0, true);
    const auto& over_strided = row.over_strided.result;
    const auto& over_gather = row.over_gather.result;
    INFO("strided " << row.strided_ns << " ns, gather " << row.gather_ns << " ns, chase " << row.chase_ns
                    << " ns; chase / strided " << over_strided.reason << "; chase / gather " << over_gather.reason);
    CHECK(over_strided.verdict != cachebook::Verdict::fails);
    CHECK(over_gather.verdict != cachebook::Verdict::fails);
    for (const auto* claim : {&over_strided, &over_gather})
        if (claim->verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim->reason);
}

TEST_CASE("std::clock adds up the threads' time while the wall clock shows the speed-up", "[ch07][timing]") {
    const auto clocks = ch07::clock_rule(2, 0, true);
    const auto& cpu = clocks.cpu.result;
    const auto& wall = clocks.wall.result;
    INFO("1 thread: cpu " << clocks.one_cpu_s() << " wall " << clocks.one_wall_s() << "; 2 threads: cpu "
                          << clocks.many_cpu_s() << " wall " << clocks.many_wall_s() << "; std::clock(): " << cpu.reason
                          << "; steady_clock: " << wall.reason);
    // CPU time does not shrink with threads, on one CPU or many.
    CHECK(cpu.verdict != cachebook::Verdict::fails);
    CHECK(wall.verdict != cachebook::Verdict::fails);
    for (const auto* claim : {&cpu, &wall})
        if (claim->verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim->reason);
}

TEST_CASE("the minima of two batches agree", "[ch07][timing]") {
    // At the quick size, 256 x 256 ints (256 KiB) stay in L2. A grid the size of the L3 share this
    // machine gets depends on what other tenants leave in the shared L3 (chapter.md); the batches
    // alternate run for run, so such a change hits both alike.
    const auto batches = ch07::runs_rule(0, 0, true);
    const auto& claim = batches.claim;
    INFO("minima " << batches.batch_a.min() << " and " << batches.batch_b.min() << " s: " << claim.reason);
    if (claim.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(claim.reason);
    CHECK(claim.verdict == cachebook::Verdict::holds);
}

TEST_CASE("the largest cache the latency section compares its working set with is at least the L1d", "[ch07]") {
    const auto largest = ch07::largest_cache_bytes();
    const auto l1 = cachebook::data_cache(1);
    if (l1 && l1->size_bytes > 0) {
        REQUIRE(largest.has_value());
        CHECK(*largest >= l1->size_bytes);
    }
    if (largest) CHECK(*largest > 0);
}
