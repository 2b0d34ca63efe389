// Grades chapter 5's exercises against the compiler (sizeof of real structs) and
// against the book's cache model, never against numbers typed here.
#include <catch2/catch.hpp>

#include "cachebook/cache.hpp"
#include "exercise.hpp"
#include "layout.hpp"

namespace {

using ch05_exercise::FieldSpec;
#define SPEC(T, f)                            \
    FieldSpec {                               \
        sizeof(T::f), alignof(decltype(T::f)) \
    }

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

// The lines a forward walk over the given ranges of n structs brings in, from the cache model.
std::uint64_t simulated_lines(std::uint64_t n, std::size_t bytes, const std::vector<ch05_exercise::Range>& used,
                              std::size_t line) {
    cachebook::Cache cache(cachebook::CacheConfig::fully_associative(4, line));
    for (std::uint64_t i = 0; i < n; ++i)
        for (const auto& r : used)
            for (std::size_t b = 0; b < r.size; ++b) cache.access(i * bytes + r.offset + b);
    return cache.total().misses;
}

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
    struct Case {
        std::uint64_t n;
        std::size_t bytes;
        std::vector<Range> used;
        std::size_t line;
    };
    const std::vector<Case> cases{
        {1000, 72, {{0, 8}}, 64},   // x only
        {1000, 256, {{0, 8}}, 64},  // one field of a struct larger than a line: lines skipped
        {1000, 256, {{0, 8}, {200, 8}}, 64},
        {999, 24, {{8, 8}}, 64},
        {500, 48, {{40, 16}}, 64},         // a field that straddles
        {777, 72, {{24, 8}, {0, 8}}, 32},  // ranges listed out of order, 32-byte lines
        {64, 16, {{0, 16}}, 128},
    };
    for (const Case& c : cases) {
        INFO(c.n << " structs of " << c.bytes << " bytes, " << c.used.size() << " ranges, " << c.line << "-byte lines");
        CHECK(lines_brought_in(c.n, c.bytes, c.used, c.line) == simulated_lines(c.n, c.bytes, c.used, c.line));
    }
}
