// Chapter 2's held-back cases: other caches and matrices than grader.cpp's, run only
// by the instructor's copy (never in the handout).
#include "checks.hpp"

TEST_CASE("exercise 1 (held back): sets_touched_by_column on other caches", "[held back][1 point]") {
    const cachebook::CacheConfig caches[] = {cachebook::CacheConfig::from_capacity(16 * 1024, 4, 32),
                                             cachebook::CacheConfig::from_capacity(64 * 1024, 16, 128),
                                             cachebook::CacheConfig::direct_mapped(128, 64)};
    for (const auto& cache : caches)
        for (std::size_t rows : {17u, 100u, 512u})
            for (std::size_t leading : {8u, 100u, 128u, 129u, 512u, 2048u})
                ch02_checks::check_sets_touched(cache, rows, leading, 8);
}

TEST_CASE("exercise 2 (held back): padded_leading_dimension on other shapes", "[held back][1 point]") {
    const ch02_checks::PaddingCase cases[] = {
        {cachebook::CacheConfig::from_capacity(16 * 1024, 4, 32), 128, 128, 32, 8},
        {ch02::l1_32kib(), 64, 1024, 64, 4},
        {ch02::matrix_read_cache(), 64, 16, 16, 8}};
    for (const auto& c : cases) ch02_checks::check_padding(c);
}
