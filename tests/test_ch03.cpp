// Chapter 3's claims: the analytic table, R5 beside it, where they part, and the six orders run for real.
#include <catch2/catch.hpp>

#include <cstring>

#include "cachebook/matmul_orders.hpp"
#include "six_orders.hpp"
#include "support.hpp"

using cachebook::LoopOrder;

TEST_CASE("the analytic table: 1.125, 2 and 0.25", "[ch03]") {
    for (LoopOrder o : {LoopOrder::ijk, LoopOrder::jik}) {
        const auto p = ch03::analytic(o, 8);
        CHECK(p.a == 0.125);
        CHECK(p.b == 1.0);
        CHECK(p.c == 0.0);
        CHECK(p.total() == 1.125);
    }
    for (LoopOrder o : {LoopOrder::jki, LoopOrder::kji}) {
        const auto p = ch03::analytic(o, 8);
        CHECK(p.a == 1.0);
        CHECK(p.b == 0.0);
        CHECK(p.c == 1.0);
    }
    for (LoopOrder o : {LoopOrder::kij, LoopOrder::ikj}) {
        const auto p = ch03::analytic(o, 8);
        CHECK(p.a == 0.0);
        CHECK(p.total() == 0.25);
    }
    CHECK(ch03::inner_variable(LoopOrder::kji) == 'i');
}

namespace {
struct Row {
    LoopOrder o;
    const char *a, *b, *c, *total;
};
void check_table(std::size_t lines, const std::vector<Row>& rows) {
    const auto cache = cachebook::CacheConfig::fully_associative(lines, 64);
    for (const auto& r : rows) {
        INFO(lines << " lines, order " << cachebook::order_name(r.o));
        const auto p = ch03::simulate_order(r.o, 64, cache).per_iteration();
        CHECK(ch03::three(p.a) == r.a);
        CHECK(ch03::three(p.b) == r.b);
        CHECK(ch03::three(p.c) == r.c);
        CHECK(ch03::three(p.total()) == r.total);
    }
}
}  // namespace

TEST_CASE("R5: 4 lines, the textbook's assumption holds", "[ch03][reference]") {
    check_table(4, {{LoopOrder::ijk, "0.125", "1.000", "0.002", "1.127"},
                    {LoopOrder::jik, "0.125", "1.000", "0.016", "1.141"},
                    {LoopOrder::jki, "1.000", "0.016", "1.000", "2.016"},
                    {LoopOrder::kji, "1.000", "0.002", "1.000", "2.002"},
                    {LoopOrder::kij, "0.016", "0.125", "0.125", "0.266"},
                    {LoopOrder::ikj, "0.002", "0.125", "0.125", "0.252"}});
    const auto cache = cachebook::CacheConfig::fully_associative(4, 64);
    for (LoopOrder o : cachebook::kAllOrders) {
        INFO(cachebook::order_name(o));
        CHECK_FALSE(ch03::departs(ch03::simulate_order(o, 64, cache).per_iteration().total(),
                                  ch03::analytic(o, 8).total()));
    }
}

TEST_CASE("R5: 32 lines, kij and ikj beat the analysis", "[ch03][reference]") {
    check_table(32, {{LoopOrder::ijk, "0.125", "1.000", "0.002", "1.127"},
                     {LoopOrder::jik, "0.125", "1.000", "0.016", "1.141"},
                     {LoopOrder::jki, "1.000", "0.016", "1.000", "2.016"},
                     {LoopOrder::kji, "1.000", "0.002", "1.000", "2.002"},
                     {LoopOrder::kij, "0.016", "0.002", "0.125", "0.143"},
                     {LoopOrder::ikj, "0.002", "0.125", "0.002", "0.129"}});
    const auto cache = cachebook::CacheConfig::fully_associative(32, 64);
    for (LoopOrder o : cachebook::kAllOrders) {
        INFO(cachebook::order_name(o));
        const bool inner_j = ch03::inner_variable(o) == 'j';
        CHECK(ch03::departs(ch03::simulate_order(o, 64, cache).per_iteration().total(), ch03::analytic(o, 8).total()) ==
              inner_j);
    }
}

TEST_CASE("R5 tiled: T = 8 fits (0.033, as the formula says), T = 16 does not", "[ch03][reference]") {
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

TEST_CASE("the simulator takes any geometry: a set-associative cache of the same size", "[ch03]") {
    // 32 lines as 8 sets x 4 ways: conflicts can only add misses to the fully associative count here.
    const auto full = ch03::simulate_order(LoopOrder::ikj, 64, cachebook::CacheConfig::fully_associative(32, 64));
    const auto sets = ch03::simulate_order(LoopOrder::ikj, 64, cachebook::CacheConfig{8, 4, 64});
    CHECK(sets.a + sets.b + sets.c >= full.a + full.b + full.c);
    // Every order pays at least the compulsory misses: 3 matrices of 64 x 64 doubles, 512 lines each.
    for (LoopOrder o : cachebook::kAllOrders) {
        const auto s = ch03::simulate_order(o, 64, cachebook::CacheConfig{8, 4, 64});
        CHECK(s.a >= 512);
        CHECK(s.b >= 512);
        CHECK(s.c >= 512);
    }
}

TEST_CASE("the six orders compute the same C, bit for bit", "[ch03]") {
    const std::size_t n = 48;
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<double> ref(n * n), c(n * n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t k = 0; k < n; ++k) ref[i * n + j] += m.a[i * n + k] * m.b[k * n + j];
    for (LoopOrder o : cachebook::kAllOrders) {
        INFO(cachebook::order_name(o));
        cachebook::matmul_in_order(o, n, m.a.data(), m.b.data(), c.data());
        CHECK(std::memcmp(ref.data(), c.data(), n * n * sizeof(double)) == 0);
    }
    const auto t = ch03::time_orders(64, 1);
    CHECK(t.identical);
    CHECK(t.orders.size() == 6);
}

TEST_CASE("at N = 512 the best inner-j order is at least 5x faster than the inner-i orders", "[ch03][timing]") {
    const auto t = ch03::time_orders(512, 2, {LoopOrder::jki, LoopOrder::kji, LoopOrder::kij, LoopOrder::ikj});
    REQUIRE(t.identical);
    const double ratio = t.min_of('i') / t.min_of('j');
    INFO("inner-i " << t.min_of('i') * 1e3 << " ms, inner-j " << t.min_of('j') * 1e3 << " ms, ratio " << ratio);
    CHECK(ratio >= 5.0);
}
