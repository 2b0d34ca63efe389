// Chapter 5's held-back cases: other structs and walks than grader.cpp's, run only by
// the instructor's copy (never in the handout).
#include "checks.hpp"

namespace {

struct CharShortCharInt {
    char a;
    short s;
    char b;
    int i;
};
struct DoubleChars {
    double d;
    char c[9];
};
struct LongLongFloatShort {
    long long l;
    float f;
    short s;
};

}  // namespace

TEST_CASE("exercise 1 (held back): struct_size on other structs", "[held back][1 point]") {
    using ch05_exercise::struct_size;
    CHECK(struct_size({SPEC(CharShortCharInt, a), SPEC(CharShortCharInt, s), SPEC(CharShortCharInt, b),
                       SPEC(CharShortCharInt, i)}) == sizeof(CharShortCharInt));
    CHECK(struct_size({SPEC(DoubleChars, d), SPEC(DoubleChars, c)}) == sizeof(DoubleChars));
    CHECK(struct_size({SPEC(LongLongFloatShort, l), SPEC(LongLongFloatShort, f), SPEC(LongLongFloatShort, s)}) ==
          sizeof(LongLongFloatShort));
}

TEST_CASE("exercise 2 (held back): lines_brought_in on other walks", "[held back][1 point]") {
    const std::vector<ch05_checks::WalkCase> cases{
        {300, 40, {{0, 4}, {36, 4}}, 64},
        {1000, 128, {{60, 8}}, 64},  // every field straddles two lines
        {250, 12, {{4, 4}}, 16},
        {100, 96, {{0, 32}, {64, 32}}, 32},
    };
    for (const auto& c : cases) ch05_checks::check_lines(c);
}

TEST_CASE("exercise 3 (held back): place_field on other counts of particles", "[held back][1 point]") {
    for (std::size_t n : {5u, 64u, 777u, 4096u}) {
        INFO(n << " particles");
        CHECK(ch05_checks::placement_problem(n) == "");
    }
}
