// Chapter 4's held-back cases: other caches, sizes and tiles than grader.cpp's, run
// only by the instructor's copy (never in the handout).
#include <catch2/catch.hpp>

#include "exercise.hpp"
#include "tiling.hpp"

TEST_CASE("exercise 1 (held back): misses_by_tile and best_tile on other caches", "[held back][1 point]") {
    const std::vector<std::size_t> tiles = {0, 2, 8, 12, 24};
    for (const auto& cache : {cachebook::CacheConfig{4, 4, 64}, cachebook::CacheConfig::direct_mapped(64, 32)})
        for (std::size_t n : {24u, 48u, 50u}) {
            INFO(cache.describe() << ", n = " << n);
            CHECK(ch04_exercise::misses_by_tile(n, tiles, cache) == ch04::misses_by_tile(n, tiles, cache));
            CHECK(ch04_exercise::best_tile(n, tiles, cache) == ch04::best_tile(n, tiles, cache));
        }
}

TEST_CASE("exercise 2 (held back): tile_for_cache on other caches and sizes", "[held back][1 point]") {
    for (std::size_t cache : {512u, 2048u, 24u * 1024, 96u * 1024, 256u * 1024})
        for (std::size_t n : {1u, 7u, 64u, 96u, 640u, 2048u})
            for (std::size_t elem : {2u, 8u, 16u}) {
                INFO(cache << " B, n = " << n << ", elem " << elem);
                CHECK(ch04_exercise::tile_for_cache(cache, n, elem) == ch04::tile_from_cache(cache, n, elem).tile);
            }
}
