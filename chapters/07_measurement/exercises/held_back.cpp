// Chapter 7's held-back cases: other fractions, targets and caches than grader.cpp's,
// run only by the instructor's copy (never in the handout).
#include "checks.hpp"

TEST_CASE("exercise 1 (held back): needed_speedup on other fractions and targets", "[held back][1 point]") {
    for (double fraction : {0.05, 0.3, 0.6, 0.99})
        for (double target : {1.01, 1.2, 3.0, 20.0, 150.0}) ch07_checks::check_needed_speedup(fraction, target);
}

TEST_CASE("exercise 2 (held back): predicted column-walk misses on other caches", "[held back][2 points]") {
    const ch07_checks::WalkCase cases[] = {
        {256, 4, 32, 4, 64}, {64, 8, 256, 1, 32}, {512, 8, 64, 16, 64}, {128, 16, 16, 8, 128}, {16, 4, 4, 2, 64}};
    for (const auto& c : cases) ch07_checks::check_column_misses(c);
}
