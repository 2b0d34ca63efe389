#pragma once
// Chapter 8, the lesson of its second page (amat.md): a price for a miss. The average memory
// access time of a walk, from the miss rates the cache model gives for each level and the
// latencies the chase measured for each level.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cachebook/hierarchy.hpp"

namespace ch08 {

// The hierarchy, its counts and the walks live in common/ (hierarchy.hpp): the time model
// prices the same counts.
using cachebook::chase_walk;
using cachebook::column_walk;
using cachebook::Hierarchy;
using cachebook::LevelCounts;
using cachebook::row_walk;
using cachebook::sequential_walk;
using cachebook::Walk;
using cachebook::warm_counts;

/// The average memory access time, in ns, from the latency of a load served by each level
/// (`latency_ns`: the levels in order, then memory, one more than `miss_rates`) and each
/// level's local miss rate:
///   AMAT = t1 + m1 x (t2 - t1 + m2 x (t3 - t2 + ... + mK x (t_memory - tK))).
double amat_ns(const std::vector<double>& latency_ns, const std::vector<double>& miss_rates);

/// The local miss rates of `counts`, level by level.
std::vector<double> miss_rates(const std::vector<LevelCounts>& counts);

}  // namespace ch08
