// Chapter 9's held-back cases: other counts, caches and kernels than grader.cpp's, run
// only by the instructor's copy (never in the handout).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "exercise.hpp"
#include "matmul.hpp"

TEST_CASE("exercise 1 (held back): add_scaled_row on other counts", "[held back][2 points]") {
    if (!ch09::isa_supported(ch09::Isa::Avx2)) {
        WARN("SKIPPED: " << ch09::isa_unavailable_reason(ch09::Isa::Avx2));
        return;
    }
    constexpr float kGuard = 31337.0f;
    for (std::size_t count : {2u, 6u, 23u, 24u, 25u, 64u, 333u}) {
        INFO("count = " << count);
        std::vector<float> a(1), b(count + 9), c(count + 9), want(count + 9, kGuard);
        ch09::fill_random(a.data(), 1, 11 + unsigned(count));
        ch09::fill_random(b.data(), count, 13 + unsigned(count));
        ch09::fill_random(c.data(), count, 17 + unsigned(count));
        std::fill(b.begin() + std::ptrdiff_t(count), b.end(), kGuard);
        std::fill(c.begin() + std::ptrdiff_t(count), c.end(), kGuard);
        std::vector<float> got = c;
        ch09_exercise::add_scaled_row(a[0], b.data(), got.data(), count);
        for (std::size_t j = 0; j < count; ++j)
            want[j] = j < count / 8 * 8 ? std::fma(a[0], b[j], c[j]) : c[j] + a[0] * b[j];
        CHECK(got == want);
    }
}

TEST_CASE("exercise 2 (held back): choose_blocks on other caches and kernels", "[held back][1 point]") {
    for (std::size_t l1 : {24u << 10, 80u << 10})
        for (std::size_t l2 : {128u << 10, 1280u << 10, 4u << 20})
            for (std::size_t l3 : {4u << 20, 12u << 20, 96u << 20})
                for (auto [mr, nr] : {std::pair<std::size_t, std::size_t>{8, 8}, {6, 8}, {16, 4}, {3, 40}}) {
                    INFO("L1 " << l1 << ", L2 " << l2 << ", L3 " << l3 << ", kernel " << mr << " x " << nr);
                    const auto want = ch09::derive_blocking(l1, l2, l3, mr, nr);
                    const auto got = ch09_exercise::choose_blocks(l1, l2, l3, mr, nr);
                    CHECK(got.kc == want.kc);
                    CHECK(got.mc == want.mc);
                    CHECK(got.nc == want.nc);
                }
}

TEST_CASE("exercise 3 (held back): parallel_share on other speed-ups", "[held back][1 point]") {
    for (int workers : {5, 16, 128})
        for (double p : {0.25, 0.6, 0.95}) {
            INFO(workers << " workers, parallel share " << p);
            CHECK(ch09_exercise::parallel_share(1.0 / ((1.0 - p) + p / workers), workers) == Approx(p).margin(1e-9));
        }
    CHECK(ch09_exercise::parallel_share(0.5, 16) == 0.0);
    CHECK(ch09_exercise::parallel_share(20.0, 16) == 1.0);
}
