// Chapter 4 exercises: the reference answers (not handed out).
#include "cachebook/trace.hpp"
#include "exercise.hpp"

namespace ch04_exercise {

std::vector<std::pair<std::size_t, std::uint64_t>> misses_by_tile(std::size_t n, const std::vector<std::size_t>& tiles,
                                                                  const cachebook::CacheConfig& config) {
    std::vector<std::pair<std::size_t, std::uint64_t>> out;
    for (std::size_t tile : tiles) {
        cachebook::Cache cache(config);
        cachebook::for_each_transpose_access(n, tile, 8,
                                             [&](const cachebook::Access& a) { cache.access(a.address, 0, a.write); });
        out.emplace_back(tile, cache.total().misses);
    }
    return out;
}

std::size_t best_tile(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache) {
    std::size_t best = 0;
    std::uint64_t fewest = UINT64_MAX;
    for (const auto& [tile, misses] : misses_by_tile(n, tiles, cache))
        if (misses < fewest) {
            fewest = misses;
            best = tile;
        }
    return best;
}

std::size_t tile_for_cache(std::size_t cache_bytes, std::size_t n, std::size_t elem) {
    std::size_t tile = 1;
    for (std::size_t t = 2; 4 * 3 * t * t * elem <= 3 * cache_bytes; t *= 2)  // 3 T^2 S <= 3/4 L1, in integers
        if (n % t == 0) tile = t;
    return tile;
}

}  // namespace ch04_exercise
