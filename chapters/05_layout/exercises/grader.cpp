// Grades chapter 5's exercises against the compiler (sizeof of real structs) and
// against the book's cache model, never against numbers typed here.
#include "checks.hpp"
#include "layout.hpp"

namespace {

struct ShortLongShort {
    short a;
    long b;
    short c;
};
struct ThreeChars {
    char a, b, c;
};
struct IntCharDouble {
    int i;
    char c;
    double d;
};
struct CharsAndFloat {
    char a;
    float f;
    char b;
    char tail[5];
};

}  // namespace

TEST_CASE("exercise 1: struct_size agrees with the compiler's sizeof", "[1 point]") {
    using ch05_exercise::struct_size;
    CHECK(struct_size({SPEC(ch05::CharDoubleInt, c), SPEC(ch05::CharDoubleInt, d), SPEC(ch05::CharDoubleInt, i)}) ==
          sizeof(ch05::CharDoubleInt));
    CHECK(struct_size({SPEC(ch05::DoubleIntChar, d), SPEC(ch05::DoubleIntChar, i), SPEC(ch05::DoubleIntChar, c)}) ==
          sizeof(ch05::DoubleIntChar));
    CHECK(struct_size({SPEC(ch05::Particle, x), SPEC(ch05::Particle, y), SPEC(ch05::Particle, z),
                       SPEC(ch05::Particle, vx), SPEC(ch05::Particle, vy), SPEC(ch05::Particle, vz),
                       SPEC(ch05::Particle, id), SPEC(ch05::Particle, name)}) == sizeof(ch05::Particle));
    CHECK(struct_size({SPEC(ch05::ColdParticle, id), SPEC(ch05::ColdParticle, name)}) == sizeof(ch05::ColdParticle));
    CHECK(struct_size({SPEC(ShortLongShort, a), SPEC(ShortLongShort, b), SPEC(ShortLongShort, c)}) ==
          sizeof(ShortLongShort));
    CHECK(struct_size({SPEC(ThreeChars, a), SPEC(ThreeChars, b), SPEC(ThreeChars, c)}) == sizeof(ThreeChars));
    CHECK(struct_size({SPEC(IntCharDouble, i), SPEC(IntCharDouble, c), SPEC(IntCharDouble, d)}) ==
          sizeof(IntCharDouble));
    CHECK(struct_size({SPEC(CharsAndFloat, a), SPEC(CharsAndFloat, f), SPEC(CharsAndFloat, b),
                       SPEC(CharsAndFloat, tail)}) == sizeof(CharsAndFloat));
}

TEST_CASE("exercise 2: lines_brought_in agrees with the cache model", "[2 points]") {
    using ch05_exercise::lines_brought_in;
    using ch05_exercise::Range;
    const std::vector<Range> x_vx{{offsetof(ch05::Particle, x), 8}, {offsetof(ch05::Particle, vx), 8}};
    CHECK(lines_brought_in(1'000'000, sizeof(ch05::Particle), x_vx, 64) == ch05::particle_lines(1'000'000).aos);
    const std::vector<ch05_checks::WalkCase> cases{
        {1000, 72, {{0, 8}}, 64},   // x only
        {1000, 256, {{0, 8}}, 64},  // one field of a struct larger than a line: lines skipped
        {1000, 256, {{0, 8}, {200, 8}}, 64},
        {999, 24, {{8, 8}}, 64},
        {500, 48, {{40, 16}}, 64},         // a field that straddles
        {777, 72, {{24, 8}, {0, 8}}, 32},  // ranges listed out of order, 32-byte lines
        {64, 16, {{0, 16}}, 128},
    };
    for (const auto& c : cases) ch05_checks::check_lines(c);
}

TEST_CASE("exercise 3: place_field gives every field of every particle its own bytes", "[1 point]") {
    for (std::size_t n : {1u, 2u, 3u, 100u, 1000u}) {
        INFO(n << " particles");
        CHECK(ch05_checks::placement_problem(n) == "");
    }
}
