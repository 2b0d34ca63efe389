#pragma once
// How chapter 3's exercises are checked, against the book's own code; grader.cpp and the
// instructor's held-back cases hold only the cases.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "cachebook/matmul_orders.hpp"
#include "exercise.hpp"
#include "six_orders.hpp"

namespace ch03_checks {

// Exercise 1: the misses per iteration of every order equal ch03::analytic's.
inline void check_analysis(std::size_t per_line) {
    for (cachebook::LoopOrder o : cachebook::kAllOrders) {
        const std::string name(cachebook::order_name(o));
        INFO(name << ", " << per_line << " per line");
        const auto want = ch03::analytic(o, per_line);
        const auto got = ch03_exercise::analytic_misses(name, per_line);
        CHECK(got.a == want.a);
        CHECK(got.b == want.b);
        CHECK(got.c == want.c);
    }
}

// Exercise 2: kij gives the same bits as the book's ijk, whatever C held before (STALE).
inline void check_kij(std::size_t n, double stale) {
    INFO("n = " << n);
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<double> want(n * n), got(n * n, stale);
    cachebook::matmul_in_order(cachebook::LoopOrder::ijk, n, m.a.data(), m.b.data(), want.data());
    ch03_exercise::matmul_kij(n, m.a.data(), m.b.data(), got.data());
    CHECK(std::memcmp(want.data(), got.data(), n * n * sizeof(double)) == 0);
}

}  // namespace ch03_checks
