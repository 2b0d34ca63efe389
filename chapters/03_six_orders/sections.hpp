#pragma once
// Chapter 3's output, one function per numbered section, in the order printed (sections.cpp).

#include <cstdint>

#include "cachebook/cache.hpp"
#include "cachebook/report.hpp"

namespace ch03 {

/// The command line; `custom` when the reader chose a geometry of their own.
struct Options {
    std::int64_t n = 64, lines = 32, ways = 0, line_bytes = 64, tile = 0, measure_n = 512, runs = 6;
    bool custom = false, quick = false;
    cachebook::CacheConfig cache;
};

void analytic_section(cachebook::Report& report);
/// Sections 2 and 3: the course notes' N = 64 in a 4-line and a 32-line cache.
void small_cache_section(cachebook::Report& report, std::size_t cache_lines);
void tiled_section(cachebook::Report& report);
/// The reader's own cache and N (--n, --lines, --ways, --line-bytes, --tile), when chosen.
void chosen_cache_section(cachebook::Report& report, const Options& options);
/// The six orders timed, the padded size beside the power of two, priced first, and the claim.
void measured_section(cachebook::Report& report, const Options& options);

}  // namespace ch03
