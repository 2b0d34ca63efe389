// Chapter 6's held-back cases: other lines, records and workers than grader.cpp's, run
// only by the instructor's copy (never in the handout).
#include "checks.hpp"

TEST_CASE("exercise 1 (held back): padded records on other lines and buffers", "[held back][1 point]") {
    for (std::size_t line : {16u, 256u})
        for (std::size_t record : {1u, 16u, 100u, 256u})
            for (std::uint64_t base : {1u, 255u, 1000u}) ch06_checks::check_padded(line, record, base, 4, 2);
}

TEST_CASE("exercise 2 (held back): predicted transfers on other layouts", "[held back][2 points]") {
    const ch06_checks::Case cases[] = {{4, 0, 4, 200, 3},  {20, 4, 6, 50, 6},   {8, 56, 9, 30, 1},
                                       {96, 40, 5, 25, 2}, {16, 8, 12, 40, 41}, {33, 1, 4, 77, 8}};
    for (const auto& c : cases) ch06_checks::check_transfers(c);
}
