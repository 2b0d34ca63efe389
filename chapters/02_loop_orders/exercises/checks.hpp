#pragma once
// How chapter 2's exercises are checked, against the book's own code; grader.cpp and the
// instructor's held-back cases hold only the cases.
#include <catch2/catch.hpp>
#include <set>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "loop_orders.hpp"

namespace ch02_checks {

// Exercise 1: the sets a column walk touches, as the book's column_footprint counts them.
inline void check_sets_touched(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t leading,
                               std::size_t elem) {
    INFO(cache.describe() << ", rows " << rows << ", leading " << leading << ", elem " << elem);
    CHECK(ch02_exercise::sets_touched_by_column(cache, rows, leading, elem) ==
          ch02::column_footprint(cache, rows, leading, elem).sets);
}

struct PaddingCase {
    cachebook::CacheConfig cache;
    std::size_t rows, cols, walked, elem;
};

// Exercise 2: at the answer's leading dimension the walk pays only its compulsory misses (one
// per line it reads); at every smaller one it pays more, so the answer pads no more than needed.
inline void check_padding(const PaddingCase& c) {
    INFO(c.rows << " x " << c.cols << ", " << c.walked << " columns, " << c.cache.describe());
    const std::size_t ld = ch02_exercise::padded_leading_dimension(c.cache, c.rows, c.cols, c.walked, c.elem);
    REQUIRE(ld >= c.cols);
    auto compulsory = [&](std::size_t leading) {
        std::set<std::uint64_t> lines;
        cachebook::for_each_column_walk(c.rows, c.walked, leading, c.elem,
                                        [&](std::uint64_t a) { lines.insert(a / c.cache.line_bytes); });
        return static_cast<std::uint64_t>(lines.size());
    };
    CHECK(ch02::column_walk(c.cache, c.rows, c.walked, ld, c.elem).total == compulsory(ld));
    for (std::size_t smaller = c.cols; smaller < ld; ++smaller)
        CHECK(ch02::column_walk(c.cache, c.rows, c.walked, smaller, c.elem).total > compulsory(smaller));
}

}  // namespace ch02_checks
