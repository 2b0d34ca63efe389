#pragma once
// Chapter 8 exercises. Write the bodies in starter.cpp; `make grade CH=08` scores them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ch08_exercise {

/// Exercise 1 (the course notes' pointer chase, step 1): a random single cycle of n slots.
/// Return `next` with next[i] the slot after slot i, such that following `next` from
/// slot 0 visits all n slots once and returns to 0 after n steps. Use the seed
/// (any generator you like); different seeds should give different cycles.
std::vector<std::uint32_t> random_cycle(std::size_t n, std::uint64_t seed);

/// Exercise 2 (the flush probe): strides[i] doubles from 8; probe_ns[i] is
/// the time of one load of base + strides[i] after base's line was flushed.
/// Return the line size: the first stride from which every larger stride is
/// cheap (at most the geometric mean of the dearest and the cheapest time);
/// std::nullopt when the dearest is less than 1.5 times the cheapest, or when
/// even the smallest stride is cheap.
std::optional<std::size_t> line_size(const std::vector<std::size_t>& strides, const std::vector<double>& probe_ns);

}  // namespace ch08_exercise
