#pragma once
/// @file tile_rule.hpp
/// @brief The tile rule of chapters 4 and 9: three T x T tiles of S-byte values may take at most
/// three quarters of the cache, 3 T^2 S <= 3/4 L1. The quarter left free holds what the rule does
/// not count: the lines of the tile's neighbours, the stack, conflict misses (chapter 4 shows the
/// line of C an LRU cache loses at every tile step when it holds exactly three tiles).

#include <cmath>
#include <cstddef>

namespace cachebook {

// [snippet: tile_rule]
/// Whether three tiles of `tile` fit the rule: 3 T^2 S <= 3/4 L1, in whole numbers 4 x 3 T^2 S <= 3 L1.
inline bool tiles_fit(std::size_t tile, std::size_t cache_bytes, std::size_t elem) {
    return 4 * 3 * tile * tile * elem <= 3 * cache_bytes;
}

/// The bound the rule puts on T: T <= sqrt(3/4 L1 / (3 S)) = sqrt(L1 / (4 S)).
inline double tile_bound(std::size_t cache_bytes, std::size_t elem) {
    return std::sqrt(static_cast<double>(cache_bytes) / (4.0 * static_cast<double>(elem)));
}

/// The largest power of two that fits the rule and divides `n` (n = 0: any power of two); at least 1.
inline std::size_t rule_tile(std::size_t cache_bytes, std::size_t elem, std::size_t n = 0) {
    std::size_t tile = 1;
    for (std::size_t p = 2; tiles_fit(p, cache_bytes, elem); p *= 2)
        if (n == 0 || n % p == 0) tile = p;
    return tile;
}
// [end: tile_rule]

}  // namespace cachebook
