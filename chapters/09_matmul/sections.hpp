#pragma once
// Chapter 9's output, one function per numbered section, in the order printed (sections.cpp), then
// the optional sweeps; pages_section (report_pages.cpp) and tiling_study (report_tiles.cpp) too.

#include <vector>

#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"

namespace ch09 {

void machine_section(cachebook::Report& report, const Settings& o, const MachineFacts& m);
void peak_section(cachebook::Report& report, const Settings& o, const MachineFacts& m, const Peak& peak);
/// Section 3: the table of steps, step 7's rows, and the claims decided beside it.
void steps_section(cachebook::Report& report, const Settings& o, const std::vector<StepResult>& steps,
                   const Libraries& libs, const Peak& peak, const Claims& claims);
void roofline_section(cachebook::Report& report, const Settings& o, const std::vector<StepResult>& steps,
                      const Peak& peak, const Roofs& roofs);
void blocks_section(cachebook::Report& report, const Settings& o, const MachineFacts& m, const Blocks& b);
void libraries_section(cachebook::Report& report, const Settings& o, const Libraries& libs, const Peak& peak,
                       const Claims& claims);
/// The optional sweeps (--sweep-tiles, --sweep-threads, --sweep-kernels), each timed here by the lab.
void tile_sweep(cachebook::Report& report, Problem& p, const Settings& o, cachebook::Progress& progress);
void thread_sweep(cachebook::Report& report, Problem& p, const Settings& o, const MachineFacts& m, Blocking blocks,
                  cachebook::Progress& progress);
void kernel_sweep(cachebook::Report& report, Problem& p, const Reference& ref, const Settings& o, const Peak& peak,
                  cachebook::Progress& progress);

}  // namespace ch09
