// Grades chapter 6's exercises against the book's own code: the padded layout
// must leave the MESI model nothing to move, and the prediction must equal
// what the model counts.
#include "checks.hpp"

TEST_CASE("exercise 1: padded records share no line, overlap nowhere, waste nothing", "[1 point]") {
    for (std::size_t line : {32u, 64u, 128u})
        for (std::size_t record : {8u, 24u, 64u, 72u, 200u})
            for (std::uint64_t base : {0u, 8u, 64u, 100u, 4096u + 24u})
                ch06_checks::check_padded(line, record, base, 6, 3);
}

TEST_CASE("exercise 2: the predicted transfer count equals the MESI model's", "[3 points]") {
    const ch06_checks::Case cases[] = {
        {8, 0, 2, 1000, 1}, {8, 0, 2, 1000, 16}, {64, 0, 2, 1000, 1}, {24, 8, 8, 100, 1},   {24, 8, 8, 100, 10},
        {24, 8, 8, 100, 7}, {64, 8, 8, 100, 1},  {16, 0, 8, 50, 3},   {40, 32, 5, 60, 4},   {8, 0, 16, 20, 1},
        {128, 0, 3, 10, 2}, {24, 16, 3, 9, 9},   {12, 4, 6, 33, 5},   {48, 8, 4, 100, 100}, {32, 24, 7, 13, 2}};
    for (const auto& c : cases) ch06_checks::check_transfers(c);
}
