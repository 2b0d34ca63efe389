// Grades chapter 8's exercises against the book's own code: the cycle must pass
// the book's single-cycle check, and the line size must agree with the rule the
// chapter's program uses, on many curves.
#include <catch2/catch.hpp>

#include "cachebook/chase.hpp"
#include "cliff.hpp"
#include "exercise.hpp"

TEST_CASE("exercise 1: random_cycle is one cycle through every slot", "[2 points]") {
    for (std::size_t n : {1u, 2u, 3u, 10u, 64u, 1000u, 4097u})
        for (std::uint64_t seed = 1; seed <= 10; ++seed) {
            INFO("n = " << n << ", seed = " << seed);
            const auto next = ch08_exercise::random_cycle(n, seed);
            REQUIRE(next.size() == n);
            CHECK(cachebook::is_single_cycle(next));
        }
    CHECK(ch08_exercise::random_cycle(1000, 1) != ch08_exercise::random_cycle(1000, 2));
}

TEST_CASE("exercise 2: line_size agrees with the chapter's rule", "[2 points]") {
    const std::vector<std::size_t> strides = {8, 16, 32, 64, 128, 256, 512, 1024};
    std::uint64_t state = 8;
    for (int trial = 0; trial < 500; ++trial) {
        std::vector<double> ns;
        std::vector<ch08::StridePoint> points;
        const std::size_t line_at = cachebook::uniform_below(state, strides.size() + 1);  // may be past the end
        const double miss = 50.0 + static_cast<double>(cachebook::uniform_below(state, 150));
        const double hit = 5.0 + static_cast<double>(cachebook::uniform_below(state, 60));
        for (std::size_t i = 0; i < strides.size(); ++i) {
            const double noise = 1.0 + static_cast<double>(cachebook::uniform_below(state, 200)) / 1000.0;
            const double v = (i < line_at ? miss : hit) * noise;
            ns.push_back(v);
            points.push_back({strides[i], v});
        }
        INFO("trial " << trial);
        CHECK(ch08_exercise::line_size(strides, ns) == ch08::line_size_from_probe(points));
    }
}
