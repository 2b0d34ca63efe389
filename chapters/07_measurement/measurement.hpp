#pragma once
// Chapter 7's lesson: measuring right. The clocks, first touch, the used and the unused
// result, the strided sum against the pointer chase, the cache model beside cachegrind,
// the model and the interleaved timing of an audited prefetch, and Amdahl's law.
// The experiments that run them (sizes, runs, child processes, tables) are in lab.hpp.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"

namespace ch07 {

// --- Rule 1: the clock --------------------------------------------------------------

struct ClockPair {
    double wall_s = 0;                        // steady_clock, best run
    double cpu_s = 0;                         // std::clock(): CPU time of the whole process, all threads added
    std::vector<double> wall_runs, cpu_runs;  // every run, interleaved with the other thread count's
};
struct ClockRule {
    int threads = 0;
    ClockPair one, many;  // the same total work on 1 thread and on `threads` threads
};
/// `work` units of arithmetic on 1 thread, then split over `threads` threads, `runs` times
/// each, alternating.
ClockRule clock_rule(int threads, std::uint64_t work, int runs);

// --- Rule 3: first touch ---------------------------------------------------------------

struct TouchRule {
    std::size_t bytes = 0;
    double first_fill_s = 0;                            // fresh pages from the OS: every page faults
    double second_fill_s = 0;                           // the same pages again
    std::vector<double> first_runs, second_runs;        // every run, in the order run: first, second, first, ...
    std::uint64_t faults_first = 0, faults_second = 0;  // minor page faults during each (getrusage)
};
TouchRule touch_rule(std::size_t bytes, int runs);

// --- Rule 4: dead code -----------------------------------------------------------------

/// The seconds a sum of `count` ints takes when its result is thrown away.
double time_sum_unused(const int* a, std::size_t count);
/// The same sum with its result kept (in `out`).
double time_sum_used(const int* a, std::size_t count, std::int64_t& out);

// --- Latency: strided sum against pointer chase --------------------------------------------

struct LatencyRow {
    std::size_t bytes = 0;
    double strided_ns = 0;  // sum of one int per line, in address order
    double gather_ns = 0;   // the same slots in random order, addresses known up front
    double chase_ns = 0;    // the same random order, each address from the previous load
    std::vector<double> strided_runs, gather_runs, chase_runs;  // every run, ns per access, interleaved
};
/// One slot per line over `bytes`; `hops` accesses per timed run.
LatencyRow latency_row(std::size_t bytes, std::size_t hops, int runs);

// --- Counting misses: the model and cachegrind -----------------------------------------------

/// The book's cache model for the row and column walks of an n x n int array
/// (64-byte aligned, base 0) through one cache level.
struct SimulatedWalks {
    std::uint64_t row_misses = 0, column_misses = 0, accesses = 0;
};
SimulatedWalks simulate_walks(const cachebook::CacheConfig& config, std::size_t n);
/// cachegrind's --D1=size,ways,line for this geometry.
std::string cachegrind_d1_flag(const cachebook::CacheConfig& config);
/// The command that runs a program under cachegrind with D1 = `d1` (I1 alike, LL fixed).
std::string cachegrind_command(const cachebook::CacheConfig& d1);
/// A tool's misses per inner iteration: (count - the fill-only run's count) / n^3.
double misses_per_iteration(std::uint64_t count, std::uint64_t baseline, std::size_t n);

// --- Auditing one claim: a software prefetch in the row sum ---------------------------------

struct PrefetchAudit {
    std::size_t n = 0, distance = 0;
    std::uint64_t stride_bytes = 0;                // the inner loop's step through memory
    double model_plain = 0, model_prefetched = 0;  // the model's lines fetched per element
    bool same_sums = false;
    double plain_s = 0, prefetched_s = 0;             // best of the runs, interleaved
    std::vector<double> plain_runs, prefetched_runs;  // every run, in the order run
    [[nodiscard]] double speedup() const { return plain_s / prefetched_s; }
};
/// The model's part of the audit: the row walk of an n x n int array through `l1`,
/// without and with the kernel's prefetches (one per line, `distance` elements ahead; a prefetch
/// is an access to the model).
void model_prefetch(PrefetchAudit& audit, const cachebook::CacheConfig& l1);
/// The timing part: the plain and the prefetching row sum of `grid` (audit.n x audit.n ints),
/// at -O2, interleaved, best of `runs` by the thread's CPU clock after one warm-up.
void time_prefetch(PrefetchAudit& audit, const std::vector<int>& grid, int runs);

// --- When not to bother -------------------------------------------------------------------------

/// Amdahl: the whole program's speed-up when a part taking `fraction` of the
/// time is made `speedup` times faster.
double amdahl(double fraction, double speedup);

}  // namespace ch07
