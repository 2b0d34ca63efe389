#pragma once
// How chapter 5's exercises are checked: against the compiler's sizeof and the book's cache
// model; grader.cpp and the instructor's held-back cases hold only the cases.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "cachebook/cache.hpp"
#include "exercise.hpp"
#include "placement.hpp"

// A field of struct T as exercise 1 takes it: its size and its alignment.
#define SPEC(T, f)                            \
    ch05_exercise::FieldSpec {                \
        sizeof(T::f), alignof(decltype(T::f)) \
    }

namespace ch05_checks {

// The lines a forward walk over the given ranges of n structs brings in, from the cache model.
inline std::uint64_t simulated_lines(std::uint64_t n, std::size_t bytes, const std::vector<ch05_exercise::Range>& used,
                                     std::size_t line) {
    cachebook::Cache cache(cachebook::CacheConfig::fully_associative(4, line));
    for (std::uint64_t i = 0; i < n; ++i)
        for (const auto& r : used)
            for (std::size_t b = 0; b < r.size; ++b) cache.access(i * bytes + r.offset + b);
    return cache.total().misses;
}

struct WalkCase {
    std::uint64_t n;
    std::size_t bytes;
    std::vector<ch05_exercise::Range> used;
    std::size_t line;
};

// Exercise 2: the answer's count of lines equals the cache model's.
inline void check_lines(const WalkCase& c) {
    INFO(c.n << " structs of " << c.bytes << " bytes, " << c.used.size() << " ranges, " << c.line << "-byte lines");
    CHECK(ch05_exercise::lines_brought_in(c.n, c.bytes, c.used, c.line) ==
          simulated_lines(c.n, c.bytes, c.used, c.line));
}

}  // namespace ch05_checks
