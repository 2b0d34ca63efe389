#pragma once
// How chapter 7's exercises are checked: with the chapter's own Amdahl function and the
// book's cache model; grader.cpp and the instructor's held-back cases hold only the cases.
#include <catch2/catch.hpp>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "measurement.hpp"

namespace ch07_checks {

// Exercise 1: the speed-up the answer asks for gives the target through Amdahl's law, and is
// 0 where no speed-up of that fraction can reach it.
inline void check_needed_speedup(double fraction, double target) {
    INFO("fraction " << fraction << ", target " << target);
    const double s = ch07_exercise::needed_speedup(fraction, target);
    if (target >= 1.0 / (1.0 - fraction) - 1e-12) {
        CHECK(s == 0.0);
    } else {
        REQUIRE(s > 0.0);
        CHECK(ch07::amdahl(fraction, s) == Approx(target).epsilon(1e-9));
    }
}

struct WalkCase {
    std::size_t n, elem, sets, ways, line;
};

// Exercise 2: the predicted misses of a column walk over an n x n array equal the cache model's.
inline void check_column_misses(const WalkCase& c) {
    INFO(c.n << " x " << c.n << " of " << c.elem << "-byte values; " << c.sets << " sets x " << c.ways << " ways x "
             << c.line << " B");
    const cachebook::CacheConfig config{c.sets, c.ways, c.line};
    const auto simulated = cachebook::simulate(config, cachebook::col_major_trace(c.n, c.elem)).misses;
    CHECK(ch07_exercise::predict_column_misses(c.n, c.elem, c.sets, c.ways, c.line) == simulated);
}

}  // namespace ch07_checks
