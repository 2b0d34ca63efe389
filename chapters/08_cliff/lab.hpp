#pragma once
// Chapter 8, the lab: the experiment that runs the lesson (cliff.hpp) on this machine: the
// sweeps and their timing, the line-size trials, the run's settings and what it records.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/claim.hpp"
#include "cachebook/experiment.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/priced.hpp"
#include "cliff.hpp"
#include "cliff_amat.hpp"
#include "cliff_bandwidth.hpp"

namespace ch08 {

using cachebook::PageSize;

/// The run's settings, from the command line.
struct Options {
    std::int64_t seed = 2026;                       // of the random cycles and chunk orders
    std::int64_t runs = 0, steps = 0, max_mib = 0;  // 0: the default --help names
    std::string csv_path;
    bool quick = false;
    [[nodiscard]] int run_count() const { return runs != 0 ? static_cast<int>(runs) : (quick ? 7 : 15); }
    [[nodiscard]] int per_octave() const { return steps != 0 ? static_cast<int>(steps) : (quick ? 4 : 8); }
};

/// Working-set sizes from `min_bytes` to `max_bytes` (both included), evenly on a log scale with
/// `steps_per_octave` steps per doubling, each rounded to a multiple of `node_bytes`, without repeats.
std::vector<std::size_t> sweep_sizes(std::size_t min_bytes, std::size_t max_bytes, int steps_per_octave,
                                     std::size_t node_bytes = kNodeBytes);

/// The largest working set of a sweep, and why.
struct UpperBound {
    std::size_t bytes = 0;
    std::string why;
};
/// Four times the last-level cache sysfs reports (to see well past it), but at least `floor_bytes` and
/// at most `cap_bytes`: a VM may report a whole socket's L3 (hundreds of MiB) and the curve is flat
/// DRAM long before that. Without a reported cache, `cap_bytes`.
UpperBound sweep_upper_bound(std::optional<std::size_t> llc_bytes, std::size_t floor_bytes, std::size_t cap_bytes);

/// The index of the size in `sizes` nearest `want` on a log scale (the first of equals).
std::size_t nearest_size(const std::vector<std::size_t>& sizes, std::size_t want);

/// How many hops to time, and to run untimed first, for a working set of `nodes` nodes.
struct Hops {
    std::size_t warmup = 0;
    std::size_t timed = 0;
};
/// A full lap of warm-up (so a set that fits is resident) up to `max_warmup`;
/// `timed` hops, the same for every size so each size costs about its latency times `timed`.
Hops hops_for(std::size_t nodes, std::size_t timed, std::size_t max_warmup);

/// One size of a sweep.
struct Point {
    std::size_t bytes = 0;
    double chase_ns = 0;         ///< best ns per dependent hop
    double strided_ns = -1;      ///< best ns per load of the strided sum (< 0: not measured)
    std::size_t huge_bytes = 0;  ///< bytes of the size's buffer the kernel backed with huge pages (at most the size)
    int runs = 0;                ///< the timed runs the best was taken from
};

/// A size past the interleaved ones stops once its best has settled: at least kMinSettledRuns runs,
/// the last kHeldRuns lowering neither its chase's best nor its strided sum's by 1 % (at most all).
inline constexpr int kMinSettledRuns = 6, kHeldRuns = 4;

struct SweepConfig {
    std::vector<std::size_t> sizes;
    PageSize pages = PageSize::Small;
    std::size_t timed_hops = std::size_t{1} << 19;
    std::size_t max_warmup = std::size_t{1} << 20;
    int runs = 5;
    std::uint64_t seed = 1;
    bool strided = false;  ///< also time the strided sum on the same buffer
    /// Sizes up to this many bytes are timed in interleaved passes (every
    /// pass visits each of them once), so the runs of one size are spread over
    /// the whole sweep rather than taken back to back; larger sizes are timed
    /// one after another, each with all its runs, between the passes. 0: none
    /// interleaved.
    /// An interleaved run warms up with two laps (at most 4 x max_warmup
    /// hops): the other sizes ran in between, and one lap does not bring a
    /// working set back into a victim-filled L3.
    std::size_t interleave_max_bytes = std::size_t{4} << 20;
};

/// How many times run_sweep calls its `on_step`: once per interleaved pass
/// and once per larger size.
std::size_t sweep_steps(const SweepConfig& config);

/// The most memory run_sweep holds at once: the interleaved buffers together
/// (each rounded up to a 2 MiB huge page) and the largest other size.
std::size_t sweep_peak_bytes(const SweepConfig& config);

/// Times a dependent chase (and, if asked, the strided sum) at every size,
/// best of `runs` (a larger size: fewer, once its best has settled). `on_step` is called after each pass over the
/// interleaved sizes and after each larger size, with a line saying what was done.
std::vector<Point> run_sweep(const SweepConfig& config, const std::function<void(const std::string&)>& on_step = {});

/// Best-of-`runs` ns per load of strided_sum over at least `loads` loads, after `warmup` untimed runs.
double strided_ns_per_load(const std::byte* data, std::size_t bytes, std::size_t stride, std::size_t loads, int runs,
                           int warmup = 1);

/// The two ways of asking for the line size.
enum class LineMethod {
    /// The course notes' experiment as written: in each chunk, 4 dependent touches at 0, S, 2S, 3S
    /// (ascending) on lines flushed from every cache; ns per touch. Prefetchers
    /// that fetch the next lines on a miss make strides past the line look cheap.
    Touches,
    /// In each chunk, load base and base + S, flush the line of base (clflush
    /// or dc civac acts on exactly one line), then time one dependent load of base + S:
    /// a miss while S is inside base's line, a hit once S reaches the next line.
    FlushProbe,
};

struct LineSizeResult {
    bool measured = false;  ///< false where lines cannot be flushed (neither x86-64 nor 64-bit ARM)
    LineMethod method = LineMethod::Touches;
    std::vector<StridePoint> points;
    std::optional<std::size_t> line_bytes;  ///< nullopt: no clear step
};

/// The stride-doubling experiment: `chunks` chunks `gap` bytes apart, visited
/// in a new random order for every trial, each trial on fresh pages. Best of
/// `runs` per stride; the strides are interleaved across runs.
LineSizeResult measure_line_size(LineMethod method, const std::vector<std::size_t>& strides, std::size_t chunks,
                                 std::size_t gap, int runs, std::uint64_t seed);

// ---------------------------------------------------------------------------
// The run: what ch08_cliff measures, in the order it prints it.

/// What the run compares against and where it runs: the machine's caches, the sweep's sizes, the cpu.
struct Setup {
    std::optional<cachebook::CacheInfo> l1, l2, l3;
    UpperBound upper;
    std::vector<std::size_t> sizes;
    int cpu = 0;
    bool pinned = false;
    bool huge_pages_available = false;
    cachebook::Clock::time_point started;  ///< when set_up ran: the run's start
};

/// Reads the caches, chooses the sizes and pins the program to its first usable cpu.
Setup set_up(const Options& options);

/// The clock estimate of common/measure.cpp, with this run's measuring time.
std::optional<double> clock_ghz(const Options& options);

/// The two sweeps: 4 KiB pages (chase and strided sum), and huge pages (chase) where available.
struct Curves {
    std::vector<Point> small_pages, huge_pages;
    [[nodiscard]] bool huge_granted() const { return !huge_pages.empty() && huge_pages.back().huge_bytes > 0; }
};

/// Runs both sweeps, with a progress line on stderr.
Curves sweep(const Options& options, const Setup& setup);

/// The curve as the JSON records it: one object per size, with the huge-page chase where measured.
nlohmann::json curve_json(const Curves& curves);

/// The steps found in each curve.
struct CliffSets {
    std::vector<Cliff> small_pages, huge_pages, strided;
};
CliffSets find_cliffs(const Setup& setup, const Curves& curves);
nlohmann::json cliffs_json(const std::vector<Cliff>& cliffs);

/// The levels read from the huge-page sweep where huge pages were granted, else the 4 KiB one.
struct LevelsFound {
    bool from_huge_pages = false;
    std::vector<Level> levels;
    std::optional<double> beyond_ns;  ///< the plateau after the last step
};
LevelsFound find_levels(const Setup& setup, const Curves& curves, const CliffSets& cliffs);

/// Why a detected size may differ from the reported one, for the reader.
std::string explain(const Level& l, bool huge_pages_used);

/// "hwloc" or "unknown": where one reported cache size came from.
std::string source_of(const std::optional<cachebook::CacheInfo>& c);

/// One line: the source of each reported level, and why any is unknown.
std::string reported_sources(const cachebook::Machine& machine);

/// The points of the wrong-method table: the sizes nearest 16 KiB, 256 KiB, 4 MiB and the largest.
std::vector<Point> wrong_method_points(const Setup& setup, const Curves& curves);

/// Both line-size experiments over the same strides.
struct LineSizes {
    std::vector<std::size_t> strides;
    LineSizeResult touches, probe;
};
LineSizes measure_line_sizes(const Options& options);

/// 4 KiB-page time over huge-page time at every size, as recorded under `pages`.
nlohmann::json page_ratios(const Setup& setup, const Curves& curves);

/// Writes the whole curve as CSV (what --csv asks for).
void write_csv(const std::string& path, const Setup& setup, const Curves& curves);

/// Records the run's wall time since set_up and this program's processor time (on a shared core
/// the two differ by whatever else ran): `seconds` and `cpu_seconds`.
void record_run_time(cachebook::Report& report, const Setup& setup);

nlohmann::json to_json(const Point& p);
nlohmann::json to_json(const Cliff& c);

/// The first cliff's claim, declared (key "first_cliff"): a chase over (1 + kBandAbove) x the
/// reported L1d takes at least kFirstCliffRise times as long a hop as a chase over (1 - kBandBelow)
/// x L1d, so the first step lies between the two sizes and rises at least that much. The band
/// reaches further below the size than above: a chase starts to miss before L1d is full (its
/// replacement is not true LRU, and the stack and page-table lines share it).
inline constexpr double kFirstCliffRise = 1.5, kBandBelow = 0.25, kBandAbove = 0.15;
/// `fraction` x `l1_bytes`, rounded to whole chase nodes: the working set of one side of the claim.
std::size_t band_edge_bytes(std::size_t l1_bytes, double fraction);
/// Each side chases a cycle of its own, on from call to call: calls of 4096 hops filling 1 ms a run.
class FirstCliffExperiment {
public:
    FirstCliffExperiment(std::size_t l1_bytes, PageSize pages);
    FirstCliffExperiment(const FirstCliffExperiment&) = delete;
    [[nodiscard]] cachebook::ExperimentResult run(bool quick) const;

private:
    cachebook::PageBuffer under_buf_, over_buf_;
    const void* under_at_ = nullptr;  // where each chase stands
    const void* over_at_ = nullptr;
    cachebook::Experiment declared_;
};

// ---------------------------------------------------------------------------
// The price of a miss (amat.md): AMAT from this run's latencies, against measured walks.

/// One level as the AMAT section prices it: the model's geometry and the latency section 5 found.
struct PricedLevel {
    std::string name;                             ///< "L1d", "L2", "L3"
    std::optional<cachebook::CacheConfig> cache;  ///< nullopt: not priced (see why_not)
    std::optional<double> latency_ns;             ///< the plateau below this level's step
    std::string geometry_from;                    ///< where the size, ways and line size came from
    std::string why_not;                          ///< why the level is not priced, when it is not
};

/// The three levels (priced ones first), and the latency of a load none of the priced ones holds.
struct PricedHierarchy {
    std::vector<PricedLevel> levels;
    std::optional<double> memory_ns;  ///< the plateau after the last step ("beyond" in section 5)
    /// The levels the model runs: those with a step, a latency and a geometry.
    [[nodiscard]] std::vector<cachebook::CacheConfig> configs() const;
    /// Their latencies, then memory_ns: what amat_ns takes.
    [[nodiscard]] std::vector<double> latencies() const;
    /// At least one level and a latency beyond it.
    [[nodiscard]] bool usable() const { return !configs().empty() && memory_ns.has_value(); }
};

/// The model's geometry of each level: the size, ways and line size the machine reports; where
/// it reports no size, the size the curve found; where it reports no ways, kAssumedWays; where no
/// line size, kNodeBytes. A level is priced when the curve found its step, in order from L1d.
inline constexpr std::size_t kAssumedWays = 8;
PricedHierarchy price_levels(const Setup& setup, const LevelsFound& found);

/// One walk, priced and measured: its counts per priced level, AMAT, and the measured ns per load.
struct PricedWalk {
    std::string name;
    std::vector<LevelCounts> counts;  ///< per priced level, on a warm second pass
    double amat_ns = 0;               ///< 0: no hierarchy to price it with
    double measured_ns = 0;           ///< best ns per load
};

/// Chapter 2's two sums, timed as chapter 2 times them: interleaved, four row runs to one column
/// run (the row sum is short), the calling thread's CPU clock, minima.
struct WalkTimes {
    std::size_t n = 0;
    long long row_sum = 0, column_sum = 0;
    double row_ns = 0, column_ns = 0;  ///< best ns per element
};
WalkTimes time_walks(std::size_t n, int rounds);

/// The claim of amat.md: a dependent chase takes at least kOverlapThreshold times as long as as many
/// independent loads (a strided sum), though AMAT prices them alike; no fails above kOverlapMaxNoise.
inline constexpr double kOverlapThreshold = 2.0, kOverlapMaxNoise = 0.2;
/// Declared (key "overlap", 8 runs a side, 6 with --quick): `hops` hops of the chase against the
/// strided sum over the same buffer, this object's, so it stays put.
class OverlapExperiment {
public:
    OverlapExperiment(std::size_t bytes, std::size_t hops, std::uint64_t seed);
    OverlapExperiment(const OverlapExperiment&) = delete;
    [[nodiscard]] cachebook::ExperimentResult run(bool quick) const;

private:
    cachebook::PageBuffer buf_;
    const void* at_ = nullptr;  // where the chase stands: each run goes on from the last
    std::uint64_t sink_ = 0;
    cachebook::Experiment declared_;
};

/// Everything the AMAT section prints.
struct AmatResult {
    PricedHierarchy hierarchy;
    WalkTimes sums;
    std::size_t curve_bytes = 0;  ///< the curve's size nearest the matrix: the chase and strided rows
    PricedWalk row, column, chase, strided;
    std::optional<double> predicted_ratio;  ///< column AMAT / row AMAT
    double measured_ratio = 0;              ///< column ns / row ns
    std::optional<double> predicted_over_measured;
    cachebook::ExperimentResult overlap;
    cachebook::Profile profile;                  ///< measured before the sums are timed
    cachebook::PricedMachine model;              ///< the time model's levels, priced by the profile
    std::vector<cachebook::PricedClaim> priced;  ///< each walk's ns a load, then column / row
};

/// The matrix side the section uses: chapter 2's 2048 (16 MiB of ints), or 1024 with --quick.
std::size_t amat_matrix_side(const Options& options);

/// Prices the two sums, the chase and the strided sum, times the sums and decides the claim.
AmatResult price_a_miss(const Options& options, const Setup& setup, const Curves& curves, const LevelsFound& found);
// The second page: loads in flight and read bandwidth (lab_bandwidth.cpp, lesson cliff_bandwidth.hpp).

/// One level's k-chases curve: ns per access at each count of chases the machine profile runs
/// (cachebook::chase_counts: every count to 16, then steps of eight to 48).
struct ChaseCurve {
    std::string level;                ///< "L2", "L3", "memory"
    std::size_t bytes = 0;            ///< the working set (0: not measured, the size of the level is unknown)
    std::vector<std::size_t> counts;  ///< the chase counts, rising from 1
    std::vector<double> ns;           ///< entry i: best ns per access with counts[i] chases (empty: not measured)
    Knee knee;
};

/// One random cycle over `bytes` bytes, and where on it the next chases start.
struct ChaseSet {
    cachebook::PageBuffer buf;
    std::vector<std::uint32_t> order;  ///< the nodes of the cycle link_chase laid, in the order a chase visits them
    std::size_t base = 0;              ///< where along the cycle the next starts are taken
    ChaseSet(std::size_t bytes, std::uint64_t seed);
    /// k chases evenly spaced along the cycle, as pointers into buf. Each call moves the base on by
    /// 0.618 of the cycle (the golden ratio's fraction), so that calls do not start where others started.
    std::vector<const void*> starts(std::size_t k);
};
/// ns per access of k chases from set.starts(k), each of `accesses / k` hops, best of `runs`;
/// before each run (the chases go on from where the last stopped) `warmup / k` hops untimed.
double chases_ns_per_access(ChaseSet& set, std::size_t k, std::size_t accesses, std::size_t warmup, int runs);

/// The k-chases curves at the L2, L3 and memory sizes of `sizes`, the k interleaved run by run.
std::vector<ChaseCurve> measure_chases(const cachebook::LevelSizes& sizes, const Options& options);

/// "In memory, 8 chases are at least 3x faster per access than one", declared (key "chases"): as
/// many accesses a side, calls of 4096 filling 0.4 ms of 8 chases a run (one call with --quick).
class ChasesExperiment {
public:
    explicit ChasesExperiment(std::size_t bytes);
    ChasesExperiment(const ChasesExperiment&) = delete;
    [[nodiscard]] cachebook::ExperimentResult run(bool quick) const;

private:
    ChaseSet set_;
    std::vector<const void*> one_, many_;
    cachebook::Experiment declared_;
};

/// Read throughput over working-set size x stride (GB/s of words read).
struct Mountain {
    std::vector<std::size_t> sizes;        ///< bytes, ascending
    std::vector<std::size_t> strides;      ///< 8-byte words, ascending
    std::vector<std::vector<double>> gbs;  ///< gbs[size][stride]
};
/// Sizes from 16 KiB up to `largest` (doubling; quadrupling with --quick), strides 1 to 64 words.
Mountain measure_mountain(std::size_t largest, const Options& options);

/// The highest point of the mountain.
struct Peak {
    std::size_t bytes = 0, stride = 0;
    double gbs = 0;
};
Peak mountain_peak(const Mountain& m);

/// The per-level reads (stride 1), with this run's settings.
std::vector<cachebook::LevelBandwidth> measure_levels(const cachebook::LevelSizes& sizes, const Options& options);

/// The first cliff's claim at the reported L1d, on huge pages where available; without a reported
/// L1d, no verdict (inconclusive, not timed) and the reason.
cachebook::ExperimentResult first_cliff_of(const Setup& setup, bool quick);

/// The working sets of each level: cachebook::level_sizes of the caches the machine reports.
cachebook::LevelSizes level_sizes(const Setup& setup);

/// Where a working set of `bytes` lies against the reported L2 and L3 (0: not reported): "beyond the
/// reported L3 (32 MiB)", or "inside the reported L3 (300 MiB), beyond the L2 (2 MiB)" (a large L3).
std::string where_working_set(std::size_t bytes, std::size_t l2_bytes, std::size_t l3_bytes);
std::string where_memory_set(const Setup& setup);  ///< the "memory" set's, against the reported caches

nlohmann::json to_json(const ChaseCurve& c);
/// The mountain as recorded: sizes (bytes), stride_bytes, and gbs[size][stride].
nlohmann::json to_json(const Mountain& m);

}  // namespace ch08
