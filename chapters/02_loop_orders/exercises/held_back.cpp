// Chapter 2's held-back cases: other caches and matrices than grader.cpp's, run only
// by the instructor's copy (never in the handout).
#include <catch2/catch.hpp>
#include <set>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "loop_orders.hpp"

TEST_CASE("exercise 1 (held back): sets_touched_by_column on other caches", "[held back][1 point]") {
    const cachebook::CacheConfig caches[] = {cachebook::CacheConfig::from_capacity(16 * 1024, 4, 32),
                                             cachebook::CacheConfig::from_capacity(64 * 1024, 16, 128),
                                             cachebook::CacheConfig::direct_mapped(128, 64)};
    for (const auto& cache : caches)
        for (std::size_t rows : {17u, 100u, 512u})
            for (std::size_t leading : {8u, 100u, 128u, 129u, 512u, 2048u}) {
                INFO(cache.describe() << ", rows " << rows << ", leading " << leading);
                CHECK(ch02_exercise::sets_touched_by_column(cache, rows, leading, 8) ==
                      ch02::column_footprint(cache, rows, leading, 8).sets);
            }
}

TEST_CASE("exercise 2 (held back): padded_leading_dimension on other shapes", "[held back][1 point]") {
    struct Case {
        cachebook::CacheConfig cache;
        std::size_t rows, cols, walked, elem;
    };
    const Case cases[] = {{cachebook::CacheConfig::from_capacity(16 * 1024, 4, 32), 128, 128, 32, 8},
                          {ch02::l1_32kib(), 64, 1024, 64, 4},
                          {ch02::matrix_read_cache(), 64, 16, 16, 8}};
    for (const auto& c : cases) {
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
}
