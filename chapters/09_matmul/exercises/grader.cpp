// Grades chapter 9's exercises: the row update must round exactly as step 4's kernel does
// (one rounding per FMA in whole groups of eight, two in the remainder) and leave everything
// past `count` alone; the blocks must be the ones the book's step 6 derives.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "exercise.hpp"
#include "matmul.hpp"

TEST_CASE("exercise 1: add_scaled_row computes step 4's row update, remainder included", "[3 points]") {
    // This exercise needs AVX2 and FMA: on a CPU (or a portable build) without them it is skipped, not scored.
    if (!ch09::isa_supported(ch09::Isa::Avx2)) {
        WARN("SKIPPED: " << ch09::isa_unavailable_reason(ch09::Isa::Avx2));
        return;
    }
    constexpr float kGuard = -777.0f;
    for (std::size_t count : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 100u, 1023u}) {
        INFO("count = " << count);
        std::vector<float> a(1), b(count + 16), c(count + 16), want(count + 16, kGuard);
        ch09::fill_random(a.data(), 1, 3 + unsigned(count));
        ch09::fill_random(b.data(), count, 5 + unsigned(count));
        ch09::fill_random(c.data(), count, 7 + unsigned(count));
        std::fill(b.begin() + std::ptrdiff_t(count), b.end(), kGuard);
        std::fill(c.begin() + std::ptrdiff_t(count), c.end(), kGuard);
        std::vector<float> got = c;
        ch09_exercise::add_scaled_row(a[0], b.data(), got.data(), count);
        for (std::size_t j = 0; j < count; ++j) {
            want[j] = j < count / 8 * 8 ? std::fma(a[0], b[j], c[j]) : c[j] + a[0] * b[j];
        }
        CHECK(got == want);  // every float, and the guard floats after `count` left alone
    }
}

TEST_CASE("exercise 2: choose_blocks derives step 6's blocks from the cache sizes", "[2 points]") {
    for (std::size_t l1 : {0u, 16u << 10, 32u << 10, 48u << 10, 64u << 10})
        for (std::size_t l2 : {0u, 256u << 10, 512u << 10, 1u << 20, 2u << 20})
            for (std::size_t l3 : {0u, 1u << 20, 8u << 20, 32u << 20, 300u << 20})
                for (auto [mr, nr] :
                     {std::pair<std::size_t, std::size_t>{6, 16}, {4, 24}, {12, 32}, {14, 32}, {1, 1}}) {
                    INFO("L1 " << l1 << ", L2 " << l2 << ", L3 " << l3 << ", kernel " << mr << " x " << nr);
                    const auto want = ch09::derive_blocking(l1, l2, l3, mr, nr);
                    const auto got = ch09_exercise::choose_blocks(l1, l2, l3, mr, nr);
                    CHECK(got.kc == want.kc);
                    CHECK(got.mc == want.mc);
                    CHECK(got.nc == want.nc);
                }
}

TEST_CASE("exercise 3: parallel_share reads Amdahl's law backwards", "[2 points]") {
    CHECK(ch09_exercise::parallel_share(1.6, 2) == Approx(0.75));
    CHECK(ch09_exercise::parallel_share(1.0, 4) == Approx(0.0).margin(1e-12));
    CHECK(ch09_exercise::parallel_share(4.0, 4) == Approx(1.0));
    for (int workers : {2, 3, 4, 8, 64})
        for (double p : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) {
            INFO(workers << " workers, parallel share " << p);
            const double speedup = 1.0 / ((1.0 - p) + p / workers);  // Amdahl's law, forwards
            CHECK(ch09_exercise::parallel_share(speedup, workers) == Approx(p).margin(1e-9));
        }
    // Measurements can fall outside the law: slower on more workers, or faster than ideal.
    CHECK(ch09_exercise::parallel_share(0.8, 2) == 0.0);
    CHECK(ch09_exercise::parallel_share(2.3, 2) == 1.0);
}
