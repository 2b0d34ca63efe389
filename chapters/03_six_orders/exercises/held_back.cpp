// Chapter 3's held-back cases: other line sizes and matrix sizes than grader.cpp's, run
// only by the instructor's copy (never in the handout).
#include <catch2/catch.hpp>
#include <cstring>

#include "cachebook/matmul_orders.hpp"
#include "exercise.hpp"
#include "six_orders.hpp"

TEST_CASE("exercise 1 (held back): analytic_misses with other line sizes", "[held back][1 point]") {
    for (cachebook::LoopOrder o : cachebook::kAllOrders)
        for (std::size_t per_line : {1u, 3u, 32u}) {
            const std::string name(cachebook::order_name(o));
            INFO(name << ", " << per_line << " per line");
            const auto want = ch03::analytic(o, per_line);
            const auto got = ch03_exercise::analytic_misses(name, per_line);
            CHECK(got.a == want.a);
            CHECK(got.b == want.b);
            CHECK(got.c == want.c);
        }
}

TEST_CASE("exercise 2 (held back): matmul_kij on other sizes", "[held back][1 point]") {
    for (std::size_t n : {2u, 16u, 50u}) {
        INFO("n = " << n);
        const auto m = cachebook::integer_valued_matrices(n);
        std::vector<double> want(n * n), got(n * n, -1.0);
        cachebook::matmul_in_order(cachebook::LoopOrder::ijk, n, m.a.data(), m.b.data(), want.data());
        ch03_exercise::matmul_kij(n, m.a.data(), m.b.data(), got.data());
        CHECK(std::memcmp(want.data(), got.data(), n * n * sizeof(double)) == 0);
    }
}
