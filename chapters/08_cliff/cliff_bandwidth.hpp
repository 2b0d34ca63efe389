#pragma once
// Chapter 8, the lesson of its second page: what the memory mountain says (loads in flight,
// several chases at once, are in common/in_flight.hpp). The experiment is lab_bandwidth.cpp.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cachebook/in_flight.hpp"

namespace ch08 {

// Several chases at once and their knee live in common/ (in_flight.hpp): the machine profile
// measures loads in flight with them.
using cachebook::chase_together;
using cachebook::cycle_order;
using cachebook::kMaxChases;
using cachebook::Knee;
using cachebook::knee_of;
using cachebook::spaced_starts;

/// The bytes that move for a read of `useful_gbs` GB/s at `stride_words` 8-byte words: every
/// line is read up to a stride of a line, then one line per word read.
double line_traffic_gbs(double useful_gbs, std::size_t stride_words, std::size_t line_bytes = 64);

/// The prefetcher's reach in a row of the mountain (one working set, the strides ascending):
/// the largest stride whose line traffic is at least `fraction` of the traffic at the first
/// stride, with every smaller stride also there. Returns that stride in words.
std::size_t prefetch_reach(const std::vector<std::size_t>& strides, const std::vector<double>& gbs,
                           double fraction = 0.8, std::size_t line_bytes = 64);

}  // namespace ch08
