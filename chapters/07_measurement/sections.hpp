#pragma once
// Chapter 7's output: one function per numbered section, in the order printed, each running
// the lab's experiments and printing their results through the Report (main.cpp calls them).

#include <cstddef>
#include <cstdint>

#include "cachebook/report.hpp"
#include "lab.hpp"

namespace ch07 {

/// The program's options, as parsed (main.cpp).
struct Options {
    std::int64_t n = kDefaultN, runs = 6, threads = 2, walk_n = 512, counters = 1, product_n = kProductN;
    bool quick = false;
    [[nodiscard]] std::size_t size() const { return static_cast<std::size_t>(n); }
    [[nodiscard]] int run_count() const { return static_cast<int>(runs); }
};

void preface(cachebook::Report& report, const Options& options);
void clock_section(cachebook::Report& report, const Options& options);
void runs_section(cachebook::Report& report, const Options& options);
void first_touch_section(cachebook::Report& report, const Options& options);
void dead_code_section(cachebook::Report& report, const Options& options);
void optimisation_section(cachebook::Report& report, const Options& options);
void size_section(cachebook::Report& report, const Options& options);
void latency_section(cachebook::Report& report, const Options& options);
void counters_section(cachebook::Report& report, const Options& options);
void amdahl_section(cachebook::Report& report);
void checklist_section(cachebook::Report& report);
void audit_section(cachebook::Report& report, const Options& options);

}  // namespace ch07
