// Grades chapter 2's exercises against the book's own code: the set count must
// equal column_footprint's, and the padded walk must pay only compulsory misses.
#include "checks.hpp"

TEST_CASE("exercise 1: sets_touched_by_column matches the book's footprint", "[2 points]") {
    const auto l1 = ch02::l1_32kib();
    CHECK(ch02_exercise::sets_touched_by_column(l1, 256, 256, 8) == 2);
    for (const auto& cache : {l1, ch02::matrix_read_cache(), cachebook::CacheConfig::from_capacity(48 * 1024, 12, 64)})
        for (std::size_t leading : {16u, 32u, 48u, 73u, 256u, 257u, 264u, 1024u})
            for (std::size_t elem : {4u, 8u}) ch02_checks::check_sets_touched(cache, 256, leading, elem);
}

TEST_CASE("exercise 2: padded_leading_dimension removes the conflict misses, and pads no more than needed",
          "[2 points]") {
    const ch02_checks::PaddingCase cases[] = {{ch02::l1_32kib(), 256, 256, 64, 8},
                                              {ch02::l1_32kib(), 128, 512, 16, 8},
                                              {ch02::matrix_read_cache(), 32, 32, 32, 8},
                                              {ch02::l1_32kib(), 100, 100, 20, 8},
                                              {ch02::l1_32kib(), 512, 1024, 32, 4}};
    for (const auto& c : cases) ch02_checks::check_padding(c);
}
