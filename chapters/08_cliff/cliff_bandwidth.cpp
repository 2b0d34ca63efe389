// Chapter 8, the lesson of its second page: the prefetcher's reach, read from the memory mountain.
#include "cliff_bandwidth.hpp"

#include <algorithm>
#include <stdexcept>

namespace ch08 {

// [snippet: reach]
double line_traffic_gbs(double useful_gbs, std::size_t stride_words, std::size_t line_bytes) {
    const std::size_t words_per_line = line_bytes / sizeof(std::uint64_t);
    return useful_gbs * static_cast<double>(std::min(stride_words, words_per_line));
}

std::size_t prefetch_reach(const std::vector<std::size_t>& strides, const std::vector<double>& gbs, double fraction,
                           std::size_t line_bytes) {
    if (strides.empty() || strides.size() != gbs.size())
        throw std::invalid_argument("prefetch_reach: one figure per stride");
    const double first = line_traffic_gbs(gbs[0], strides[0], line_bytes);
    std::size_t reach = strides[0];
    for (std::size_t i = 1; i < strides.size(); ++i) {
        if (line_traffic_gbs(gbs[i], strides[i], line_bytes) < fraction * first) break;
        reach = strides[i];
    }
    return reach;
}
// [end: reach]

}  // namespace ch08
