// Grades chapter 7's exercises with the chapter's own Amdahl function and the
// book's cache model, never against numbers typed here.
#include <catch2/catch.hpp>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "measurement.hpp"

TEST_CASE("exercise 1: needed_speedup gives the target through Amdahl's law", "[1 point]") {
    using ch07_exercise::needed_speedup;
    for (double fraction : {0.1, 0.5, 0.8, 0.95, 1.0})
        for (double target : {1.05, 1.5, 2.0, 4.0, 8.0}) {
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

TEST_CASE("exercise 2: predicted column-walk misses match the cache model", "[3 points]") {
    using ch07_exercise::predict_column_misses;
    struct Case {
        std::size_t n, elem, sets, ways, line;
    };
    const Case cases[] = {
        {512, 4, 64, 8, 64},  // the walk chapter 7 counts with cachegrind
        {64, 4, 64, 8, 64},   // fits in L1
        {256, 8, 64, 8, 64},  // the power-of-two trap of chapter 2
        {128, 8, 64, 8, 64}, {128, 4, 16, 4, 32},   {256, 4, 128, 2, 16},
        {32, 8, 8, 2, 64},   {1024, 4, 64, 12, 64},  // a 48 KiB, 12-way L1
    };
    for (const Case& c : cases) {
        INFO(c.n << " x " << c.n << " of " << c.elem << "-byte values; " << c.sets << " sets x " << c.ways << " ways x "
                 << c.line << " B");
        const cachebook::CacheConfig config{c.sets, c.ways, c.line};
        const auto simulated = cachebook::simulate(config, cachebook::col_major_trace(c.n, c.elem)).misses;
        CHECK(predict_column_misses(c.n, c.elem, c.sets, c.ways, c.line) == simulated);
    }
}
