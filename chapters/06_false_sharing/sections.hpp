#pragma once
// Chapter 6's output, one function per numbered section, in the order printed (sections.cpp, then
// sections_measured.cpp).

#include <cstdint>
#include <vector>

#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"

namespace ch06 {

/// The run's settings and the cpus it races on.
struct Run {
    std::int64_t max_threads = 8;  // fixed, so the golden file holds everywhere
    std::int64_t runs = 10;
    bool quick = false;
    int usable = 0, first_cpu = 0;
    std::vector<int> two_cpus;  // the first two usable cpus; empty where the process may use one
};

/// The table of a model's counts, one row per run (counts_row); its first column is `first`.
cachebook::ResultTable counts_table(cachebook::Report& report, const std::string& first = "layout, interleaving");
/// One model run's row of counts_table, recorded under `key`, with the counts it does not show.
void counts_row(cachebook::Report& report, cachebook::ResultTable& table, const std::string& label,
                const std::string& key, const cachebook::CoherenceStats& stats);

void layouts_section(cachebook::Report& report, const LayoutFacts& layout);
void two_counters_section(cachebook::Report& report, const LayoutFacts& layout);
void runtime_padding_section(cachebook::Report& report);
void workers_section(cachebook::Report& report, const LayoutFacts& layout);
void monitor_section(cachebook::Report& report);
/// Section 6; returns the races on two cores (volatile, then atomic), which sections 7 and 8 reuse.
std::vector<RaceResult> races_section(cachebook::Report& report, const Run& run, cachebook::Progress& progress);
void handoff_section(cachebook::Report& report, const Run& run, const std::vector<RaceResult>& two);
void sweep_section(cachebook::Report& report, const Run& run, const std::vector<RaceResult>& two,
                   cachebook::Progress& progress);
void queue_lock_section(cachebook::Report& report, const Run& run, cachebook::Progress& progress);
void counters_section(cachebook::Report& report, const Run& run);

}  // namespace ch06
