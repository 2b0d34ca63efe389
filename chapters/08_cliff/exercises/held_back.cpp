// Chapter 8's held-back cases: other sizes, seeds and probe curves than grader.cpp's,
// run only by the instructor's copy (never in the handout).
#include <catch2/catch.hpp>

#include "cachebook/chase.hpp"
#include "cliff.hpp"
#include "exercise.hpp"

TEST_CASE("exercise 1 (held back): random_cycle on other sizes and seeds", "[held back][1 point]") {
    for (std::size_t n : {4u, 5u, 255u, 256u, 10007u})
        for (std::uint64_t seed : {0u, 77u, 123456789u}) {
            INFO("n = " << n << ", seed = " << seed);
            const auto next = ch08_exercise::random_cycle(n, seed);
            REQUIRE(next.size() == n);
            CHECK(cachebook::is_single_cycle(next));
        }
    CHECK(ch08_exercise::random_cycle(500, 77) != ch08_exercise::random_cycle(500, 78));
}

TEST_CASE("exercise 2 (held back): line_size on other strides and curves", "[held back][1 point]") {
    const std::vector<std::size_t> strides = {8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
    std::uint64_t state = 2024;
    for (int trial = 0; trial < 300; ++trial) {
        std::vector<double> ns;
        std::vector<ch08::StridePoint> points;
        const std::size_t line_at = cachebook::uniform_below(state, strides.size() + 1);
        const double miss = 20.0 + static_cast<double>(cachebook::uniform_below(state, 300));
        const double hit = 2.0 + static_cast<double>(cachebook::uniform_below(state, 40));
        for (std::size_t i = 0; i < strides.size(); ++i) {
            const double noise = 1.0 + static_cast<double>(cachebook::uniform_below(state, 400)) / 1000.0;
            const double v = (i < line_at ? miss : hit) * noise;
            ns.push_back(v);
            points.push_back({strides[i], v});
        }
        INFO("trial " << trial);
        CHECK(ch08_exercise::line_size(strides, ns) == ch08::line_size_from_probe(points));
    }
}
