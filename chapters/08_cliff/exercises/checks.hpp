#pragma once
// How chapter 8's exercises are checked, against the book's own code; grader.cpp and the
// instructor's held-back cases hold only the cases.
#include <catch2/catch.hpp>
#include <vector>

#include "cachebook/chase.hpp"
#include "cliff.hpp"
#include "exercise.hpp"

namespace ch08_checks {

// Exercise 1: the cycle of N slots from SEED passes the book's single-cycle check.
inline void check_cycle(std::size_t n, std::uint64_t seed) {
    INFO("n = " << n << ", seed = " << seed);
    const auto next = ch08_exercise::random_cycle(n, seed);
    REQUIRE(next.size() == n);
    CHECK(cachebook::is_single_cycle(next));
}

// The probe curves of exercise 2: a miss time, then a hit time from a random stride on (or
// none), each in [min, min + span) ns, times a noise of up to NOISE_PERMILLE thousandths.
struct Curves {
    double miss_min, miss_span, hit_min, hit_span;
    std::uint64_t noise_permille;
};

// Exercise 2: on TRIALS random curves from SEED, line_size agrees with the chapter's rule.
inline void check_line_size(const std::vector<std::size_t>& strides, const Curves& c, std::uint64_t seed, int trials) {
    std::uint64_t state = seed;
    auto below = [&](double span) {
        return static_cast<double>(cachebook::uniform_below(state, static_cast<std::uint64_t>(span)));
    };
    for (int trial = 0; trial < trials; ++trial) {
        std::vector<double> ns;
        std::vector<ch08::StridePoint> points;
        const std::size_t line_at = cachebook::uniform_below(state, strides.size() + 1);  // may be past the end
        const double miss = c.miss_min + below(c.miss_span);
        const double hit = c.hit_min + below(c.hit_span);
        for (std::size_t i = 0; i < strides.size(); ++i) {
            const double noise = 1.0 + below(static_cast<double>(c.noise_permille)) / 1000.0;
            const double v = (i < line_at ? miss : hit) * noise;
            ns.push_back(v);
            points.push_back({strides[i], v});
        }
        INFO("trial " << trial);
        CHECK(ch08_exercise::line_size(strides, ns) == ch08::line_size_from_probe(points));
    }
}

}  // namespace ch08_checks
