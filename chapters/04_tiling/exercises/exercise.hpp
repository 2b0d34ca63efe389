#pragma once
// Chapter 4 exercises. Write the bodies in starter.cpp; `make grade CH=04` scores them.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "cachebook/cache.hpp"

namespace ch04_exercise {

/// Exercise 1 (the course notes' lab): the misses of the transpose of an n x n matrix
/// of doubles (cachebook::for_each_transpose_access gives the trace) in a fresh
/// cache of the given geometry, for each tile (0: untiled), in the order given;
/// and the tile with the fewest misses (the first such).
std::vector<std::pair<std::size_t, std::uint64_t>> misses_by_tile(std::size_t n, const std::vector<std::size_t>& tiles,
                                                                  const cachebook::CacheConfig& cache);
std::size_t best_tile(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache);

/// Exercise 2 (the tile rule): the largest power of two T that divides n with three tiles
/// in three quarters of the cache, 3 * T * T * elem <= 3/4 * cache_bytes; 1 if none larger does.
std::size_t tile_for_cache(std::size_t cache_bytes, std::size_t n, std::size_t elem);

}  // namespace ch04_exercise
