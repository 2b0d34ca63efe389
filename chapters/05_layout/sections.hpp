#pragma once
// Chapter 5's output, one function per numbered section, in the order printed (sections.cpp).

#include <cstddef>
#include <cstdint>

#include "cachebook/report.hpp"
#include "lab.hpp"

namespace ch05 {

/// The run's settings, from the command line.
struct Options {
    std::int64_t particles = 2'000'000;
    std::int64_t nodes = 1 << 20;
    std::int64_t gather = 1 << 22;
    std::int64_t runs = 6;
    std::int64_t stream_mib = 0;
    bool quick = false;
    [[nodiscard]] std::size_t n_particles() const { return static_cast<std::size_t>(particles); }
    [[nodiscard]] std::size_t n_nodes() const { return static_cast<std::size_t>(nodes); }
    [[nodiscard]] std::size_t n_gather() const { return static_cast<std::size_t>(gather); }
    [[nodiscard]] int n_runs() const { return static_cast<int>(runs); }
};

void particle_section(cachebook::Report& report);
void update_loop_section(cachebook::Report& report, const Options& options);
void field_order_section(cachebook::Report& report);
void straddle_section(cachebook::Report& report);
void lists_section(cachebook::Report& report, const Options& options);
void prefetch_section(cachebook::Report& report, const Options& options);
void fusion_section(cachebook::Report& report, const Options& options);
void stores_section(cachebook::Report& report, const Options& options);

}  // namespace ch05
