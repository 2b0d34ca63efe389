// Grades chapter 3's exercises against the book's own code: the analysis must
// equal ch03::analytic for every order, and the product the book's ijk bit for bit.
#include <catch2/catch.hpp>
#include <cstring>

#include "cachebook/matmul_orders.hpp"
#include "exercise.hpp"
#include "six_orders.hpp"

TEST_CASE("exercise 1: analytic_misses matches the book's analysis", "[1 point]") {
    for (cachebook::LoopOrder o : cachebook::kAllOrders)
        for (std::size_t per_line : {2u, 4u, 8u, 16u}) {
            const std::string name(cachebook::order_name(o));
            INFO(name << ", " << per_line << " per line");
            const auto want = ch03::analytic(o, per_line);
            const auto got = ch03_exercise::analytic_misses(name, per_line);
            CHECK(got.a == want.a);
            CHECK(got.b == want.b);
            CHECK(got.c == want.c);
        }
}

TEST_CASE("exercise 2: matmul_kij gives the same bits as the book's ijk", "[1 point]") {
    for (std::size_t n : {1u, 7u, 32u, 65u}) {
        INFO("n = " << n);
        const auto m = cachebook::integer_valued_matrices(n);
        std::vector<double> want(n * n), got(n * n, 12345.0);  // C is overwritten, whatever it held
        cachebook::matmul_in_order(cachebook::LoopOrder::ijk, n, m.a.data(), m.b.data(), want.data());
        ch03_exercise::matmul_kij(n, m.a.data(), m.b.data(), got.data());
        CHECK(std::memcmp(want.data(), got.data(), n * n * sizeof(double)) == 0);
    }
}
