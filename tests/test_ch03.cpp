// Chapter 3's claims: the analytic table, the simulated one beside it, where they part, and the six orders run
// for real.
#include <catch2/catch.hpp>
#include <cstring>

#include "../chapters/03_six_orders/lab.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/matmul_orders.hpp"
#include "six_orders_table.hpp"
#include "support.hpp"

using cachebook::LoopOrder;

TEST_CASE("the analysis gives 1/B for a right index, 1 for a left index and 0 for an absent one", "[ch03]") {
    const auto [order, inner, a, b, c, total] = GENERATE(table<LoopOrder, char, double, double, double, double>({
        {LoopOrder::ijk, 'k', 0.125, 1.0, 0.0, 1.125},
        {LoopOrder::jik, 'k', 0.125, 1.0, 0.0, 1.125},
        {LoopOrder::jki, 'i', 1.0, 0.0, 1.0, 2.0},
        {LoopOrder::kji, 'i', 1.0, 0.0, 1.0, 2.0},
        {LoopOrder::kij, 'j', 0.0, 0.125, 0.125, 0.25},
        {LoopOrder::ikj, 'j', 0.0, 0.125, 0.125, 0.25},
    }));
    INFO("order " << cachebook::order_name(order));
    const auto misses = ch03::analytic(order, 8);
    CHECK(ch03::inner_variable(order) == inner);
    CHECK(misses.a == a);
    CHECK(misses.b == b);
    CHECK(misses.c == c);
    CHECK(misses.total() == total);
}

TEST_CASE("the course notes' six orders in a 4-line and a 32-line cache miss as their table says",
          "[ch03][reference]") {
    const auto [lines, order, a, b, c, total] = GENERATE(from_range(cachebook_test::notes_six_orders()));
    INFO(lines << " lines, order " << cachebook::order_name(order));
    const auto misses = ch03::simulate_order(order, 64, cachebook::CacheConfig::fully_associative(lines, 64));
    const auto per_iteration = misses.per_iteration();
    CHECK(ch03::three(per_iteration.a) == a);
    CHECK(ch03::three(per_iteration.b) == b);
    CHECK(ch03::three(per_iteration.c) == c);
    CHECK(ch03::three(per_iteration.total()) == total);
}

TEST_CASE("in 4 lines every order is as the analysis predicts, in 32 lines the inner-j orders beat it",
          "[ch03][reference]") {
    const std::size_t lines = GENERATE(4u, 32u);
    const auto cache = cachebook::CacheConfig::fully_associative(lines, 64);
    for (LoopOrder order : cachebook::kAllOrders) {
        INFO(lines << " lines, order " << cachebook::order_name(order));
        const bool departs = ch03::departs(ch03::simulate_order(order, 64, cache).per_iteration().total(),
                                           ch03::analytic(order, 8).total());
        CHECK(departs == (lines == 32 && ch03::inner_variable(order) == 'j'));
    }
}

TEST_CASE("tiled in the 32-line cache, T = 8 fits and misses 0.033 as the formula says, T = 16 does not",
          "[ch03][reference]") {
    const auto cache = cachebook::CacheConfig::fully_associative(32, 64);
    const auto t8 = ch03::simulate_tiled(64, 8, cache).per_iteration();
    CHECK(ch03::three(t8.a) == "0.016");
    CHECK(ch03::three(t8.b) == "0.016");
    CHECK(ch03::three(t8.c) == "0.002");
    CHECK(ch03::three(t8.total()) == "0.033");
    CHECK(ch03::three(ch03::tiled_estimate(8, 8, 64)) == "0.033");
    const auto t16 = ch03::simulate_tiled(64, 16, cache).per_iteration();
    CHECK(ch03::three(t16.a) == "0.008");
    CHECK(ch03::three(t16.b) == "0.125");
    CHECK(ch03::three(t16.c) == "0.008");
    CHECK(ch03::three(t16.total()) == "0.141");
    CHECK(ch03::tile_bound(256) == Approx(9.2376).epsilon(1e-4));
}

TEST_CASE("a cache of the reader's choice is checked before any work", "[ch03]") {
    const auto full = ch03::chosen_cache(32, 0, 64);
    CHECK(full.sets == 1);
    CHECK(full.ways == 32);
    const auto sets = ch03::chosen_cache(32, 4, 64);
    CHECK(sets.sets == 8);
    CHECK(sets.ways == 4);
    const auto [lines, ways, line_bytes] = GENERATE(table<std::int64_t, std::int64_t, std::int64_t>({
        {32, 0, 48},   // a line that is not a power of two
        {32, 64, 64},  // more ways than lines
        {32, 3, 64},   // lines not a whole number of sets
    }));
    CHECK_THROWS_AS(ch03::chosen_cache(lines, ways, line_bytes), cachebook::UsageError);
}

TEST_CASE("a tile larger than the matrix or a simulation of hours is refused", "[ch03]") {
    CHECK_NOTHROW(ch03::check_simulation(64, 32, 16));
    CHECK_THROWS_AS(ch03::check_simulation(64, 32, 65), cachebook::UsageError);
    CHECK_THROWS_AS(ch03::check_simulation(256, 65536, 0), cachebook::UsageError);
}

TEST_CASE("the simulator takes any geometry: a set-associative cache of the same size", "[ch03]") {
    // 32 lines as 8 sets x 4 ways: conflicts can only add misses to the fully associative count here.
    const auto full = ch03::simulate_order(LoopOrder::ikj, 64, cachebook::CacheConfig::fully_associative(32, 64));
    const auto sets = ch03::simulate_order(LoopOrder::ikj, 64, cachebook::CacheConfig{8, 4, 64});
    CHECK(sets.a + sets.b + sets.c >= full.a + full.b + full.c);
    // Every order pays at least the compulsory misses: 3 matrices of 64 x 64 doubles, 512 lines each.
    for (LoopOrder o : cachebook::kAllOrders) {
        const auto simulated = ch03::simulate_order(o, 64, cachebook::CacheConfig{8, 4, 64});
        CHECK(simulated.a >= 512);
        CHECK(simulated.b >= 512);
        CHECK(simulated.c >= 512);
    }
}

TEST_CASE("the six orders compute the same C, bit for bit", "[ch03]") {
    const std::size_t n = 48;
    const auto matrices = cachebook::integer_valued_matrices(n);
    std::vector<double> ref(n * n), c(n * n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t k = 0; k < n; ++k) ref[i * n + j] += matrices.a[i * n + k] * matrices.b[k * n + j];
    for (LoopOrder order : cachebook::kAllOrders) {
        INFO(cachebook::order_name(order));
        cachebook::matmul_in_order(order, n, matrices.a.data(), matrices.b.data(), c.data());
        CHECK(std::memcmp(ref.data(), c.data(), n * n * sizeof(double)) == 0);
    }
    const auto timed = ch03::time_orders(64, 1);
    CHECK(timed.identical);
    CHECK(timed.orders.size() == 6);
    for (const auto& order : timed.orders) CHECK(timed.fastest() <= order.timing.min());
}

TEST_CASE("a run budget: the floor whatever the time, then more only while the seconds last", "[ch03]") {
    const cachebook::RunBudget budget{2, 6, 1.0};
    CHECK(budget.another(0, 99.0));
    CHECK(budget.another(1, 99.0));
    CHECK_FALSE(budget.another(2, 1.0));
    CHECK(budget.another(2, 0.5));
    CHECK(budget.another(5, 0.5));
    CHECK_FALSE(budget.another(6, 0.5));
}

// With no seconds to spare: every order once, the claim's two orders its six runs on top.
TEST_CASE("measure_six_orders: the heats, then the claim on the fastest of each group", "[ch03]") {
    const auto measured = ch03::measure_six_orders(64, 6, false, 0.0);
    const auto& claim = measured.claim;
    CHECK(measured.timed.identical);
    CHECK(claim.identical);
    CHECK(ch03::inner_variable(claim.inner_i) == 'i');
    CHECK(ch03::inner_variable(claim.inner_j) == 'j');
    CHECK(claim.outcome.key == "inner_i");
    CHECK(claim.outcome.slow_runs.size() == 6);
    CHECK(claim.outcome.fast_runs.size() == 6);
    for (const auto& order : measured.timed.orders) {
        INFO(cachebook::order_name(order.order));
        const bool side = order.order == claim.inner_i || order.order == claim.inner_j;
        CHECK(order.timing.runs.size() == (side ? 7u : 1u));
    }
    // The claim is made at N = 512: at 64 the kit's runs give no verdict.
    CHECK(claim.outcome.result.verdict == cachebook::Verdict::inconclusive);
    CHECK(claim.outcome.result.reason == "the claim is made at N = 512, this run measured N = 64");
}

TEST_CASE("the claim's sides are the heats' fastest inner-i and inner-j orders", "[ch03]") {
    auto heats = ch03::time_orders(32, 1, {LoopOrder::jki, LoopOrder::kji, LoopOrder::kij, LoopOrder::ikj});
    const std::vector<double> seconds = {2.0, 1.0, 0.1, 0.2};  // jki, kji, kij, ikj
    for (std::size_t k = 0; k < seconds.size(); ++k) heats.orders[k].timing.runs = {seconds[k]};
    const auto claim = ch03::run_inner_claim(heats, 1, true);
    CHECK(claim.inner_i == LoopOrder::kji);
    CHECK(claim.inner_j == LoopOrder::kij);
    CHECK(claim.identical);
    // The quick size: the kit's six runs a side, whatever --runs says.
    CHECK(claim.outcome.slow_runs.size() == static_cast<std::size_t>(cachebook::kMinRunsPerSide));
    CHECK(claim.outcome.result.threshold == ch03::kInnerThreshold);
}

// Decided by the chapter's own function, once: holds passes, fails fails, inconclusive skips.
TEST_CASE("at N = 512 the best inner-j order is at least 5x faster than the inner-i orders", "[ch03][timing]") {
    const auto heats =
        ch03::time_orders(ch03::kInnerN, 1, {LoopOrder::jki, LoopOrder::kji, LoopOrder::kij, LoopOrder::ikj});
    const auto claim = ch03::run_inner_claim(heats, cachebook::kMinRunsPerSide, true);
    REQUIRE(heats.identical);
    REQUIRE(claim.identical);
    const auto& result = claim.outcome.result;
    INFO(cachebook::order_name(claim.inner_i)
         << " against " << cachebook::order_name(claim.inner_j) << ": " << result.reason);
    CHECK(result.threshold == ch03::kInnerThreshold);
    if (result.verdict == cachebook::Verdict::inconclusive) CACHEBOOK_SKIP(result.reason);
    CHECK(result.verdict == cachebook::Verdict::holds);
}
