// Grades chapter 7's exercises with the chapter's own Amdahl function and the
// book's cache model, never against numbers typed here.
#include "checks.hpp"

TEST_CASE("exercise 1: needed_speedup gives the target through Amdahl's law", "[1 point]") {
    for (double fraction : {0.1, 0.5, 0.8, 0.95, 1.0})
        for (double target : {1.05, 1.5, 2.0, 4.0, 8.0}) ch07_checks::check_needed_speedup(fraction, target);
}

TEST_CASE("exercise 2: predicted column-walk misses match the cache model", "[3 points]") {
    const ch07_checks::WalkCase cases[] = {
        {512, 4, 64, 8, 64},  // the walk chapter 7 counts with cachegrind
        {64, 4, 64, 8, 64},   // fits in L1
        {256, 8, 64, 8, 64},  // the power-of-two trap of chapter 2
        {128, 8, 64, 8, 64}, {128, 4, 16, 4, 32},   {256, 4, 128, 2, 16},
        {32, 8, 8, 2, 64},   {1024, 4, 64, 12, 64},  // a 48 KiB, 12-way L1
    };
    for (const auto& c : cases) ch07_checks::check_column_misses(c);
}
