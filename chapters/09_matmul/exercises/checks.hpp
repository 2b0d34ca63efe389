#pragma once
// How chapter 9's exercises are checked, against the book's own code; grader.cpp and the
// instructor's held-back cases hold only the cases.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "exercise.hpp"
#include "lab.hpp"
#include "matmul.hpp"

namespace ch09_checks {

// Exercise 1 needs AVX2 and FMA: without them its cases are skipped, not scored.
inline bool skip_without_avx2() {
    if (ch09::isa_supported(ch09::Isa::Avx2)) return false;
    WARN("SKIPPED: " << ch09::isa_unavailable_reason(ch09::Isa::Avx2));
    return true;
}

// Exercise 1: the row update of `count` floats rounds as step 4's kernel does (one rounding
// per FMA in whole groups of eight, two in the remainder) and leaves the guard floats after
// `count` alone. `seed` varies the random floats from case list to case list.
inline void check_row_update(std::size_t count, float guard, unsigned seed) {
    INFO("count = " << count);
    std::vector<float> a(1), b(count + 16), c(count + 16), want(count + 16, guard);
    ch09::fill_random(a.data(), 1, seed + unsigned(count));
    ch09::fill_random(b.data(), count, seed + 2 + unsigned(count));
    ch09::fill_random(c.data(), count, seed + 4 + unsigned(count));
    std::fill(b.begin() + std::ptrdiff_t(count), b.end(), guard);
    std::fill(c.begin() + std::ptrdiff_t(count), c.end(), guard);
    std::vector<float> got = c;
    ch09_exercise::add_scaled_row(a[0], b.data(), got.data(), count);
    for (std::size_t j = 0; j < count; ++j)
        want[j] = j < count / 8 * 8 ? std::fma(a[0], b[j], c[j]) : c[j] + a[0] * b[j];
    CHECK(got == want);  // every float, and the guard floats after `count` left alone
}

// Exercise 2: the blocks the book's step 6 derives from these cache sizes and this micro-kernel.
inline void check_blocks(std::size_t l1, std::size_t l2, std::size_t l3, std::size_t mr, std::size_t nr) {
    INFO("L1 " << l1 << ", L2 " << l2 << ", L3 " << l3 << ", kernel " << mr << " x " << nr);
    const auto want = ch09::derive_blocking(l1, l2, l3, mr, nr);
    const auto got = ch09_exercise::choose_blocks(l1, l2, l3, mr, nr);
    CHECK(got.kc == want.kc);
    CHECK(got.mc == want.mc);
    CHECK(got.nc == want.nc);
}

// Exercise 3: the parallel share read back from the speed-up Amdahl's law gives for it.
inline void check_share(double p, int workers) {
    INFO(workers << " workers, parallel share " << p);
    const double speedup = 1.0 / ((1.0 - p) + p / workers);  // Amdahl's law, forwards
    CHECK(ch09_exercise::parallel_share(speedup, workers) == Approx(p).margin(1e-9));
}

// Exercise 4: C = A x B for n x n, every element within the rounding bound of the exact product.
inline void check_product(std::size_t n, unsigned seed) {
    INFO("n = " << n);
    std::vector<float> a(n * n), b(n * n), c(n * n, -1.0f);
    ch09::fill_random(a.data(), a.size(), seed);
    ch09::fill_random(b.data(), b.size(), seed + 1);
    ch09_exercise::multiply(a.data(), b.data(), c.data(), n);
    const ch09::Shape s{n, n, n};
    const ch09::RowRange rows{0, n};
    const auto check = ch09::check_rows(c.data(), s, rows, ch09::reference_rows(a.data(), b.data(), s, rows),
                                        ch09::abs_product_rows(a.data(), b.data(), s, rows));
    INFO("worst error over the bound: " << check.worst_ratio);
    CHECK(check.matches);
}

}  // namespace ch09_checks
