// Chapter 7's held-back cases: other fractions, targets and caches than grader.cpp's,
// run only by the instructor's copy (never in the handout).
#include <catch2/catch.hpp>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "measurement.hpp"

TEST_CASE("exercise 1 (held back): needed_speedup on other fractions and targets", "[held back][1 point]") {
    using ch07_exercise::needed_speedup;
    for (double fraction : {0.05, 0.3, 0.6, 0.99})
        for (double target : {1.01, 1.2, 3.0, 20.0, 150.0}) {
            INFO("fraction " << fraction << ", target " << target);
            const double s = needed_speedup(fraction, target);
            if (target >= 1.0 / (1.0 - fraction) - 1e-12) {
                CHECK(s == 0.0);
            } else {
                REQUIRE(s > 0.0);
                CHECK(ch07::amdahl(fraction, s) == Approx(target).epsilon(1e-9));
            }
        }
}

TEST_CASE("exercise 2 (held back): predicted column-walk misses on other caches", "[held back][2 points]") {
    using ch07_exercise::predict_column_misses;
    struct Case {
        std::size_t n, elem, sets, ways, line;
    };
    const Case cases[] = {
        {256, 4, 32, 4, 64}, {64, 8, 256, 1, 32}, {512, 8, 64, 16, 64}, {128, 16, 16, 8, 128}, {16, 4, 4, 2, 64}};
    for (const Case& c : cases) {
        INFO(c.n << " x " << c.n << " of " << c.elem << "-byte values; " << c.sets << " sets x " << c.ways << " ways x "
                 << c.line << " B");
        const cachebook::CacheConfig config{c.sets, c.ways, c.line};
        const auto simulated = cachebook::simulate(config, cachebook::col_major_trace(c.n, c.elem)).misses;
        CHECK(predict_column_misses(c.n, c.elem, c.sets, c.ways, c.line) == simulated);
    }
}
