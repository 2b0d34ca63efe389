// Chapter 5's held-back cases: other structs and walks than grader.cpp's, run only by
// the instructor's copy (never in the handout).
#include <catch2/catch.hpp>

#include "cachebook/cache.hpp"
#include "exercise.hpp"

namespace {

using ch05_exercise::FieldSpec;
#define SPEC(T, f)                            \
    FieldSpec {                               \
        sizeof(T::f), alignof(decltype(T::f)) \
    }

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

std::uint64_t simulated_lines(std::uint64_t n, std::size_t bytes, const std::vector<ch05_exercise::Range>& used,
                              std::size_t line) {
    cachebook::Cache cache(cachebook::CacheConfig::fully_associative(4, line));
    for (std::uint64_t i = 0; i < n; ++i)
        for (const auto& r : used)
            for (std::size_t b = 0; b < r.size; ++b) cache.access(i * bytes + r.offset + b);
    return cache.total().misses;
}

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
    using ch05_exercise::lines_brought_in;
    using ch05_exercise::Range;
    struct Case {
        std::uint64_t n;
        std::size_t bytes;
        std::vector<Range> used;
        std::size_t line;
    };
    const std::vector<Case> cases{
        {300, 40, {{0, 4}, {36, 4}}, 64},
        {1000, 128, {{60, 8}}, 64},  // every field straddles two lines
        {250, 12, {{4, 4}}, 16},
        {100, 96, {{0, 32}, {64, 32}}, 32},
    };
    for (const Case& c : cases) {
        INFO(c.n << " structs of " << c.bytes << " bytes, " << c.used.size() << " ranges, " << c.line << "-byte lines");
        CHECK(lines_brought_in(c.n, c.bytes, c.used, c.line) == simulated_lines(c.n, c.bytes, c.used, c.line));
    }
}
