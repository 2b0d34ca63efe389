#pragma once
/// @file chase.hpp
/// @brief Random orders for memory walks: a permutation, and a single cycle to chase.
///
/// A pointer chase (`i = next[i]`) makes every load wait for the one before,
/// so it measures latency; walking the same slots through a list of indices
/// known in advance lets the loads overlap. Both need a random order that is
/// the same on every run and every machine, so the generator is seeded and
/// does not depend on the standard library's distributions.

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace cachebook {

/// A small, fast, seeded generator (splitmix64): the same numbers everywhere.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// A number in [0, bound), bound > 0 (the modulo bias is below 2^-32 for any bound used here).
    std::uint64_t below(std::uint64_t bound) { return next() % bound; }

private:
    std::uint64_t state_;
};

/// A random permutation of 0 .. n-1 (Fisher-Yates), fixed by `seed`.
inline std::vector<std::uint32_t> random_permutation(std::size_t n, std::uint64_t seed = 1) {
    std::vector<std::uint32_t> p(n);
    std::iota(p.begin(), p.end(), std::uint32_t{0});
    SplitMix64 rng(seed);
    for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng.below(i)]);
    return p;
}

/// next[i]: the slot after i on one cycle that visits all n slots in a random
/// order (Sattolo's algorithm), fixed by `seed`. Following next from any slot
/// returns to it after exactly n hops.
inline std::vector<std::uint32_t> random_cycle(std::size_t n, std::uint64_t seed = 1) {
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), std::uint32_t{0});
    SplitMix64 rng(seed);
    for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i - 1)]);
    // Sattolo's shuffle yields a cyclic permutation: order[i] is the successor of i.
    return order;
}

/// Follows `hops` links from `start` and returns the slot reached. Each load
/// needs the one before it: the chase a CPU cannot overlap.
inline std::uint32_t chase(const std::uint32_t* next, std::uint32_t start, std::size_t hops) {
    std::uint32_t i = start;
    for (std::size_t h = 0; h < hops; ++h) i = next[i];
    return i;
}

}  // namespace cachebook
