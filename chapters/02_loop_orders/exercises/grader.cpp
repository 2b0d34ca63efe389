// Grades chapter 2's exercises against the book's own code: the set count must
// equal column_footprint's, and the padded walk must pay only compulsory misses.
#include <catch2/catch.hpp>
#include <set>

#include "cachebook/trace.hpp"
#include "exercise.hpp"
#include "loop_orders.hpp"

TEST_CASE("exercise 1: sets_touched_by_column matches the book's footprint", "[2 points]") {
    const auto l1 = ch02::l1_32kib();
    CHECK(ch02_exercise::sets_touched_by_column(l1, 256, 256, 8) == 2);
    for (const auto& cache : {l1, ch02::matrix_read_cache(), cachebook::CacheConfig::from_capacity(48 * 1024, 12, 64)})
        for (std::size_t leading : {16u, 32u, 48u, 73u, 256u, 257u, 264u, 1024u})
            for (std::size_t elem : {4u, 8u}) {
                INFO(cache.describe() << ", leading " << leading << ", elem " << elem);
                CHECK(ch02_exercise::sets_touched_by_column(cache, 256, leading, elem) ==
                      ch02::column_footprint(cache, 256, leading, elem).sets);
            }
}

TEST_CASE("exercise 2: padded_leading_dimension removes the conflict misses, and pads no more than needed",
          "[2 points]") {
    struct Case {
        cachebook::CacheConfig cache;
        std::size_t rows, cols, walked, elem;
    };
    const Case cases[] = {{ch02::l1_32kib(), 256, 256, 64, 8},
                          {ch02::l1_32kib(), 128, 512, 16, 8},
                          {ch02::matrix_read_cache(), 32, 32, 32, 8},
                          {ch02::l1_32kib(), 100, 100, 20, 8},
                          {ch02::l1_32kib(), 512, 1024, 32, 4}};
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
