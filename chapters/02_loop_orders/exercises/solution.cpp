// Chapter 2 exercises: the reference answers (not handed out).
#include <set>
#include <stdexcept>

#include "cachebook/trace.hpp"
#include "exercise.hpp"

namespace ch02_exercise {

std::size_t sets_touched_by_column(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t leading,
                                   std::size_t elem) {
    std::set<std::size_t> sets;
    for (std::size_t i = 0; i < rows; ++i) sets.insert(i * leading * elem / cache.line_bytes % cache.sets);
    return sets.size();
}

std::size_t padded_leading_dimension(const cachebook::CacheConfig& config, std::size_t rows, std::size_t cols,
                                     std::size_t walked, std::size_t elem) {
    // Try cols, cols + 1, ... and simulate: conflict misses show as misses beyond the distinct lines.
    for (std::size_t leading = cols; leading < cols + 4 * config.line_bytes; ++leading) {
        cachebook::Cache cache(config);
        std::set<std::uint64_t> lines;
        cachebook::for_each_column_walk(rows, walked, leading, elem, [&](std::uint64_t address) {
            cache.access(address);
            lines.insert(address / config.line_bytes);
        });
        if (cache.total().misses == lines.size()) return leading;
    }
    throw std::invalid_argument("padded_leading_dimension: no padding of up to four lines helps");
}

}  // namespace ch02_exercise
