// Grades chapter 4's exercises against the book's own code: the chapter's 8-set cache and other shapes
// for the lab's functions, the program's own tile choice for the formula.
#include <catch2/catch.hpp>

#include "exercise.hpp"
#include "tiling.hpp"

TEST_CASE("exercise 1: misses_by_tile and best_tile match the book's lab", "[2 points]") {
    const std::vector<std::size_t> tiles = {0, 4, 8, 16, 32};
    const cachebook::CacheConfig small_cache{8, 8, 64};
    using P = std::pair<std::size_t, std::uint64_t>;
    CHECK(ch04_exercise::misses_by_tile(73, tiles, small_cache) ==
          std::vector<P>{{0, 5996}, {4, 2603}, {8, 2036}, {16, 1960}, {32, 1714}});
    for (const auto& cache :
         {small_cache, cachebook::CacheConfig::fully_associative(32, 64), cachebook::CacheConfig{16, 2, 32}})
        for (std::size_t n : {16u, 40u, 64u}) {
            INFO(cache.describe() << ", n = " << n);
            CHECK(ch04_exercise::misses_by_tile(n, tiles, cache) == ch04::misses_by_tile(n, tiles, cache));
            CHECK(ch04_exercise::best_tile(n, tiles, cache) == ch04::best_tile(n, tiles, cache));
        }
}

TEST_CASE("exercise 2: tile_for_cache matches the program's 3 T^2 S <= 3/4 L1 choice", "[1 point]") {
    CHECK(ch04_exercise::tile_for_cache(32 * 1024, 512, 8) == 32);
    for (std::size_t cache : {1024u, 4096u, 32u * 1024, 48u * 1024, 64u * 1024, 1024u * 1024})
        for (std::size_t n : {24u, 100u, 512u, 1000u, 4096u})
            for (std::size_t elem : {4u, 8u}) {
                INFO(cache << " B, n = " << n << ", elem " << elem);
                CHECK(ch04_exercise::tile_for_cache(cache, n, elem) == ch04::tile_from_cache(cache, n, elem).tile);
            }
}
