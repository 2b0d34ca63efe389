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

/// `work` multiply-adds split evenly over `count` threads, each on a thread of its own.
void split_work(int count, std::uint64_t work);
/// steady_clock: seconds on the wall, never running backwards.
double wall_seconds();
/// std::clock(): seconds of CPU time of the whole process, all its threads added.
double process_cpu_seconds();

// --- Rule 3: first touch ---------------------------------------------------------------

/// `bytes` of memory straight from the OS, as a large malloc or new gets them: mapped, and no page
/// of it present until the program writes to it. Unmapped on destruction.
class FreshPages {
public:
    explicit FreshPages(std::size_t bytes);
    ~FreshPages();
    FreshPages(const FreshPages&) = delete;
    FreshPages& operator=(const FreshPages&) = delete;
    /// Writes `v` to every 8-byte word; returns the minor page faults the writes took (getrusage).
    std::uint64_t fill(std::int64_t v);

private:
    std::int64_t* words_ = nullptr;
    std::size_t bytes_ = 0;
};

// --- Rule 4: dead code -----------------------------------------------------------------

/// A sum of `count` ints whose result is thrown away.
void sum_thrown_away(const int* a, std::size_t count);
/// The same sum with its result kept.
std::int64_t sum_kept(const int* a, std::size_t count);

// --- Latency: strided sum against pointer chase --------------------------------------------

struct alignas(64) Slot {  // one slot per line, so every access is a different line
    std::uint32_t next;
    std::uint32_t value;
};
/// One slot per line over `bytes`, linked in one random cycle, and the cycle's order as indices.
struct Slots {
    std::vector<Slot> slots;
    std::vector<std::uint32_t> order;
};
Slots make_slots(std::size_t bytes);
/// Each walk makes `hops` accesses, one slot a line: in address order, in the cycle's order read
/// from a list, and along the cycle, each address loaded from the slot before.
std::uint64_t strided_sum(const Slots& s, std::size_t hops);
std::uint64_t gather_sum(const Slots& s, std::size_t hops);
std::uint32_t chase(const Slots& s, std::size_t hops);

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
};
/// The model's part of the audit: the row walk of an n x n int array through `l1`,
/// without and with the kernel's prefetches (one per line, `distance` elements ahead; a prefetch
/// is an access to the model). The timing is an experiment the lab declares.
void model_prefetch(PrefetchAudit& audit, const cachebook::CacheConfig& l1);

// --- When not to bother -------------------------------------------------------------------------

/// Amdahl: the whole program's speed-up when a part taking `fraction` of the
/// time is made `speedup` times faster.
double amdahl(double fraction, double speedup);

}  // namespace ch07
