// Grades chapter 8's exercises against the book's own code: the cycle must pass
// the book's single-cycle check, and the line size must agree with the rule the
// chapter's program uses, on many curves.
#include "checks.hpp"

TEST_CASE("exercise 1: random_cycle is one cycle through every slot", "[2 points]") {
    for (std::size_t n : {1u, 2u, 3u, 10u, 64u, 1000u, 4097u})
        for (std::uint64_t seed = 1; seed <= 10; ++seed) ch08_checks::check_cycle(n, seed);
    CHECK(ch08_exercise::random_cycle(1000, 1) != ch08_exercise::random_cycle(1000, 2));
}

TEST_CASE("exercise 2: line_size agrees with the chapter's rule", "[2 points]") {
    ch08_checks::check_line_size({8, 16, 32, 64, 128, 256, 512, 1024}, {50.0, 150.0, 5.0, 60.0, 200}, 8, 500);
}
