#pragma once
// Chapter 4's output, one function per numbered section, in the order printed (sections.cpp, then
// sections_beyond.cpp).

#include <cstdint>
#include <string>

#include "cachebook/report.hpp"
#include "lab.hpp"

namespace ch04 {

/// The command line, and the study's data, read before any long work.
struct Options {
    std::int64_t n = 512, tile = 0, runs = 6, transpose_n = 2048, study_n = 73;
    std::string data;
    bool quick = false;
    StudyData study;
};

/// A tile's JSON field: "none" (untiled) or "t8".
std::string tile_key(std::size_t tile);

void visits_section(cachebook::Report& report);
/// Section 2; returns the tile of the blocked product: --tile, else this machine's L1d's, else the
/// course notes' L1's.
std::size_t tile_section(cachebook::Report& report, const Options& options);
void stepper_section(cachebook::Report& report);
void blocked_section(cachebook::Report& report, const Options& options, std::size_t tile);
void sweep_section(cachebook::Report& report, const Options& options, std::size_t pick);
void transpose_model_section(cachebook::Report& report);
/// The lab's misses_by_tile and best_tile, and why each walk misses, in the lab's cache.
void lab_section(cachebook::Report& report);
void transpose_section(cachebook::Report& report, const Options& options);
/// Section 9: the study's series and a seeded random walk.
void study_section(cachebook::Report& report, const Options& options);
/// The lab's last step: four walks through the lab's cache with no prefetcher, next-line and stride.
void prefetch_section(cachebook::Report& report);
/// Cache-oblivious blocking in the model, at two cache sizes.
void oblivious_model_section(cachebook::Report& report);
/// The recursive walks timed against the tiled ones, the product with the blocked product's tile.
void oblivious_timing_section(cachebook::Report& report, const Options& options, std::size_t tile);

}  // namespace ch04
