#pragma once
// Chapter 2's output, one function per numbered section, in the order printed (sections.cpp).

#include <cstdint>

#include "cachebook/report.hpp"

namespace ch02 {

/// The run's settings, from the command line.
struct Options {
    std::int64_t n = 2048;           // order of the summed int array
    std::int64_t runs = 7;           // timed runs of each sum
    std::int64_t conflict_runs = 8;  // timed runs of each conflict walk
};

void arithmetic_section(cachebook::Report& report);
void matrix_read_section(cachebook::Report& report);
void trap_section(cachebook::Report& report);
void sum_section(cachebook::Report& report, const Options& options);
void conflict_section(cachebook::Report& report, const Options& options);

}  // namespace ch02
