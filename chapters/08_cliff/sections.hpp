#pragma once
// Chapter 8's output, one function per numbered section, in the order printed (sections.cpp, then
// sections_amat.cpp for the price of a miss). Each prints what the lab measured, through the Report.

#include <optional>
#include <string>
#include <vector>

#include "cachebook/experiment.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"

namespace ch08 {

void experiment_section(cachebook::Report& report, const Options& options, const Setup& setup);
void clock_section(cachebook::Report& report, std::optional<double> ghz);
void curve_section(cachebook::Report& report, const Options& options, const Curves& curves, std::optional<double> ghz);
void cliffs_section(cachebook::Report& report, const Curves& curves, const CliffSets& cliffs);
void levels_section(cachebook::Report& report, const Setup& setup, const LevelsFound& found, std::optional<double> ghz,
                    const cachebook::ExperimentResult& first_cliff);
void wrong_method_section(cachebook::Report& report, const Setup& setup, const Curves& curves, const CliffSets& cliffs);
void line_size_section(cachebook::Report& report, const LineSizes& line);
void pages_section(cachebook::Report& report, const Options& options, const Setup& setup, const Curves& curves);
// The second page: loads in flight, read bandwidth, the memory mountain.
void chases_section(cachebook::Report& report, const std::vector<ChaseCurve>& curves,
                    const cachebook::ExperimentResult& claim, const std::string& memory_where);
void levels_bandwidth_section(cachebook::Report& report, const std::vector<cachebook::LevelBandwidth>& levels,
                              const std::vector<ChaseCurve>& chases);
void mountain_section(cachebook::Report& report, const Mountain& m);
/// The price of a miss (sections_amat.cpp): the priced levels, the walks, the predicted ratio, the claim.
void amat_section(cachebook::Report& report, const AmatResult& r, std::size_t n);

}  // namespace ch08
