#pragma once
// Chapter 9's lab: the machine's facts and peak, problems filled before any timing, results checked
// against a double-precision reference, slow steps timed on a sample of rows, step 6 in turn with the
// libraries (lab_libraries.cpp, lab_blas.cpp), the search for step 6's blocks, the tile study, the
// blocks and roofs from chapter 8's results, and the two laws of speed-up (C's pages: lab_pages.hpp).

#include <array>
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cachebook/claim.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "matmul.hpp"

namespace ch09 {

using cachebook::RunBudget;

// ---- Checking --------------------------------------------------------------------------

/// The exact product's rows, computed in double precision (order i-k-j).
std::vector<double> reference_rows(const float* a, const float* b, Shape s, RowRange rows);
/// |A| x |B| on the same rows: the scale against which rounding error is measured.
std::vector<double> abs_product_rows(const float* a, const float* b, Shape s, RowRange rows);

/// How far a result is from the reference.
struct Check {
    bool matches = false;      // every element within the bound
    double worst_ratio = 0;    // max over elements of |c - ref| / (gamma_k * (|A||B|)_ij); <= 1 matches
    std::size_t elements = 0;  // elements compared
};
/// The rounding-error bound of any order of summation of k products in float:
/// gamma_k = k u / (1 - k u), u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1).
double gamma_bound(std::size_t k);
/// Compares rows `rows` of c with the reference (and |A||B|) of the same rows.
Check check_rows(const float* c, Shape s, RowRange rows, const std::vector<double>& ref,
                 const std::vector<double>& abs_ab);

/// Floating-point throughput of independent FMA chains, in GFLOPS, on `threads` threads at once
/// (each runs the widest FMA the isa has; Scalar: separate multiply and add).
double measure_fma_gflops(Isa isa, int threads, double seconds);
/// The nominal clock the machine reports ("cpu MHz" of /proc/cpuinfo), in GHz, or 0.
double nominal_clock_ghz();

/// Memory bandwidth of a triad a[i] = b[i] + s * c[i] over three arrays of `floats` each,
/// counted as 12 bytes per element, on `threads` threads, minimum of `runs`; in GB/s.
double measure_triad_gbs(std::size_t floats, int threads, int runs);

/// The three matrices of one problem, filled and first-touched before any timing. C is asked
/// for on `c_pages` (make_page_buffer): the micro-kernel walks down its rows, a page each.
struct Problem {
    Shape shape;
    Buffer a, b, c;
    explicit Problem(Shape s, cachebook::PageSize c_pages = cachebook::PageSize::Huge);
};

/// The rows every result is checked on: the first and the last (up to) 16 rows.
struct Reference {
    RowRange head, tail;
    std::vector<double> head_ref, head_abs, tail_ref, tail_abs;
    explicit Reference(const Problem& p);
    /// Checks the head rows, and the tail rows too when the step computed all of C.
    [[nodiscard]] Check check(const Problem& p, bool all_rows) const;
};

/// The fastest of the runs `runs` allows, after `warmup` calls not timed: seconds.
double fastest_run(const RunBudget& runs, int warmup, const std::function<void()>& run);
/// Times `run(rows)` on rows [0, rows_timed) of C, the fastest of `runs`; returns seconds for all of C.
double time_rows(const Problem& p, std::size_t rows_timed, const RunBudget& runs, int warmup,
                 const std::function<void(RowRange)>& run);
/// Rows to time so that one run does about `flops` FLOPs: at least 16, whole tiles, at most all.
std::size_t sample_rows(Shape s, double flops, std::size_t multiple);

/// Step 6, OpenBLAS and BLIS timed in turn in one process. Seconds, minimum of the runs; index 0
/// is one thread, index 1 all threads (0: not measured: one thread only, or no such library).
struct LibraryRun {
    std::string openblas_core;  // OpenBLAS's kernel ("" without OpenBLAS)
    std::string blis_name;      // "BLIS <version>, <its kernels>" ("" without BLIS)
    std::array<double, 2> step6{}, openblas{}, blis{};
    double step6_plain = 0;   // step 6's kernel without the prefetch of C, 1 thread (0: no such twin)
    double openblas_cpu = 0;  // OpenBLAS on 1 thread, the calling thread's CPU seconds, least of the runs
    bool openblas_matches = false, blis_matches = false;
};
nlohmann::json to_json(const LibraryRun& run);
LibraryRun library_run_from_json(const nlohmann::json& j);

/// The thread counts of the side-by-side runs: 1, and `threads` when that is more.
std::vector<int> thread_counts(int threads);
/// Step 6 (with `blocks`), OpenBLAS and BLIS (those present) on an n x n problem, runs interleaved;
/// with `probe`, OpenBLAS alone, `runs` timed calls per thread count and no warm-up.
LibraryRun time_beside_libraries(std::size_t n, int threads, int runs, const MicroKernel& kernel, Blocking blocks,
                                 bool probe = false);

/// One OpenBLAS kernel type tried, and what its process measured.
struct CoreRun {
    std::string coretype;  // "" for OpenBLAS's own choice
    LibraryRun run;
};
/// OPENBLAS_CORETYPE values worth trying here: "" (OpenBLAS's own, `default_core`), then the others.
std::vector<std::string> openblas_coretypes(const cachebook::CpuFeatures& f, const std::string& default_core);
/// The fastest of `coretypes` by `cpu_seconds(coretype)`: a call on one thread in a process that loaded
/// that kernel, the thread's CPU time (nullopt: it failed), which leaves out the time other programs
/// held the core (the wall clock once picked a kernel of half the speed). nullopt when none ran.
using CpuSecondsOf = std::function<std::optional<double>(const std::string& coretype)>;
std::optional<std::string> fastest_openblas_core(const std::vector<std::string>& coretypes,
                                                 const CpuSecondsOf& cpu_seconds);

/// One candidate of the block search and its time (seconds, minimum of the runs).
struct BlockTrial {
    Blocking blocks;
    double seconds = 0;
};
/// Step 6 on one thread with each of block_candidates(rule), the candidates taken in turn in every
/// round (a noisy moment falls on one run of each, not on every run of one), as `rounds` allows.
std::vector<BlockTrial> search_blocks(Problem& p, const MicroKernel& kernel, Blocking rule, const RunBudget& rounds);
/// The fastest trial's blocks.
Blocking fastest_blocks(const std::vector<BlockTrial>& trials);

/// GFLOPS of steps 3 (one float per instruction) and 4 (`isa`) with tiles of `tile`.
struct TileTiming {
    std::size_t tile = 0;
    double scalar_gflops = 0, vector_gflops = 0;
};
/// Steps 3 and 4 timed for each tile of `tiles` (a tile of N is step 2's loop, untiled), each
/// on a sample of rows of about `scalar_flops` and `vector_flops` FLOPs: at least one whole
/// tile of rows, so that each tile of B is used as often as in the full product.
std::vector<TileTiming> time_tiles(Problem& p, Isa isa, const std::vector<std::size_t>& tiles, const RunBudget& runs,
                                   double scalar_flops, double vector_flops, cachebook::Progress& progress);

/// The best tile of each kind (T = N left out) and its gain over untiled (T = N, the first row).
struct TileGain {
    double scalar = 0, vector = 0;
    std::size_t scalar_tile = 0, vector_tile = 0;
};
TileGain best_tiles(const std::vector<TileTiming>& rows, std::size_t n);

/// The time of the rule's blocks among the trials (0: not among them), and the fastest time.
double rule_seconds(const std::vector<BlockTrial>& trials, Blocking rule);
double fastest_seconds(const std::vector<BlockTrial>& trials);

/// The data caches chapter 8 found by timing (bytes; nullopt where it found no level).
struct MeasuredCaches {
    std::array<std::optional<std::size_t>, 3> bytes;  // L1d, L2, L3
};
/// The levels of `ch08_cliff --json` results. Throws std::invalid_argument, saying what is
/// wrong, when there is no "levels" object, a size is not a positive whole number of bytes, or
/// no level was found at all.
MeasuredCaches measured_caches_from_json(const nlohmann::json& cliff);
/// The same from a file. Throws std::invalid_argument naming what went wrong (cannot be read,
/// not JSON, or as above).
MeasuredCaches read_measured_caches(const std::string& path);
/// Step 6's blocks from measured caches; a level not found takes the size `reported` gives
/// (0: unknown, derive_blocking's common size).
Blocking measured_blocking(const MeasuredCaches& measured, const std::array<std::size_t, 3>& reported,
                           const MicroKernel& kernel);

/// Amdahl's law: the speed-up on `workers` of a program whose share `parallel` runs in parallel,
/// for a problem of a fixed size: 1 / ((1 - p) + p / workers).
double amdahl_speedup(double parallel, double workers);
/// Gustafson's law: the speed-up when the problem grows with the workers, so the parallel part
/// fills the same time on each: (1 - p) + p x workers.
double gustafson_speedup(double parallel, double workers);
/// Gustafson's share of the same measurement: Amdahl's share `parallel` is a fraction of one
/// worker's time, Gustafson's a fraction of the run on `workers`:
/// p' = (p / w) / ((1 - p) + p / w). With it gustafson_speedup(p', w) equals amdahl_speedup(p, w).
double gustafson_share(double parallel, double workers);
/// The parallel share Amdahl's law gives for a measured `speedup` on `workers` (> 1) workers,
/// clamped to [0, 1].
double parallel_share(double speedup, double workers);

// ---- The run: settings, the machine, the peak, the steps --------------------------------

/// The run's settings, as the command line gave them.
struct Settings {
    std::size_t n = 2048;
    int threads = 1, runs = 3;
    bool quick = false;
    Isa isa = Isa::Scalar;
    MicroKernel kernel;
    std::optional<std::size_t> tile, mc, kc, nc;  // given on the command line
    std::optional<MeasuredCaches> measured_caches;
    std::string caches_path;
    bool sweep_tiles = false, sweep_threads = false, sweep_kernels = false, child = false, probe = false,
         no_blas = false;
    /// Of the FLOPs each sample times.
    [[nodiscard]] double scale() const { return quick ? 0.25 : 1.0; }
    [[nodiscard]] bool blocks_given() const { return mc || kc || nc; }
    /// Blocks given on the command line replace the rule's, one by one.
    [[nodiscard]] Blocking with_given(Blocking rule) const {
        return {mc.value_or(rule.mc), kc.value_or(rule.kc), nc.value_or(rule.nc)};
    }
};

/// A figure no claim decides (a table's row, a round of the block search): two runs, then more up to
/// --runs while kTableSeconds last since its first, so a busy machine leaves out the runs past two.
inline constexpr double kTableSeconds = 0.5;
RunBudget table_runs(const Settings& o);
std::string table_runs_text(const Settings& o);  // "2 to 3": the runs table_runs allows
RunBudget all_runs(const Settings& o);           // every one of --runs: the sweeps a reader asks for

/// What the program reads from the machine, and the clock it measures.
struct MachineFacts {
    int cpus = 1;
    std::array<std::optional<cachebook::CacheInfo>, 3> caches;  // L1d, L2, L3
    std::optional<std::size_t> reported_line;
    std::size_t line = 64;  // the models assume 64 bytes when the machine does not say
    cachebook::CpuFeatures features;
    double ghz = 0, ghz_nominal = 0;
    std::size_t tile = 32;  // of steps 3 to 5
    [[nodiscard]] std::array<std::size_t, 3> cache_bytes() const;
};
/// The caches of the machine (the rest unmeasured).
MachineFacts machine_caches();
/// The caches, line, features, tile (given, or from L1, at most N) and both clocks.
MachineFacts machine_facts(const Settings& o);

/// The tiling study (report_tiles.cpp): steps 2 to 4 at several tiles, where the rule's tile of B
/// falls in the L1d's sets at N and at N plus one line, and that tile timed at the padded N.
void tiling_study(cachebook::Report& report, Problem& p, const Settings& o, const MachineFacts& m,
                  cachebook::Progress& progress);

/// Two FMA units per core: Intel since Haswell, AMD since Zen 2, ARM's Cortex-A76 and Neoverse N1
/// (128-bit each); some cores have one 512-bit unit or four 128-bit ones: the measured peak shows it.
inline constexpr int kFmaPorts = 2;

/// The measured ceilings of section 2.
struct Peak {
    double core = 0, all = 0;      // measured GFLOPS: one core, all threads
    double bandwidth = 0;          // GB/s, triad
    std::size_t triad_floats = 0;  // floats per array of the triad
};
Peak measure_peak(const Settings& o, const MachineFacts& m, cachebook::Progress& progress);

/// One row of the table of steps.
struct StepResult {
    std::string key, label;           // label: as recorded
    std::string before, part, after;  // label = before + part + after; `part` depends on the machine
    double seconds = 0;               // for the whole product (extrapolated from the rows timed); 0: not run
    std::size_t rows_timed = 0;       // rows of C computed per timed run
    int threads = 1;
    Check check;
    double intensity = 0;        // FLOPs per byte, by the model; 0: no model
    bool sampled = false;        // rows_timed chosen by sample_rows: it depends on the tile, so on the L1
    bool needs_threads = false;  // run only with several threads: whether it ran depends on the machine
};

/// Step 6's blocks: the rules from the reported and the measured caches, and the search.
struct Blocks {
    Blocking reported, rule, used;
    std::optional<Blocking> measured;
    std::vector<BlockTrial> trials;  // empty: blocks given on the command line
};
Blocks choose_blocks(Problem& p, const Settings& o, const MachineFacts& m, cachebook::Progress& progress);

/// Step 7: each OpenBLAS kernel worth trying in a child process of its own, with step 6 and BLIS.
struct Libraries {
    std::string default_core;  // OpenBLAS's own choice ("" without OpenBLAS)
    std::vector<CoreRun> cores;
    std::optional<std::size_t> fastest;
    /// The fastest kernel's OpenBLAS alone in a process of its own, one call per thread count.
    std::optional<LibraryRun> alone;
    [[nodiscard]] const LibraryRun* best() const { return fastest ? &cores[*fastest].run : nullptr; }
    [[nodiscard]] bool have_openblas() const { return best() && !best()->openblas_core.empty(); }
};
Libraries run_libraries(const Settings& o, const MachineFacts& m, Blocking blocks, cachebook::Progress& progress);
/// The child process (--blas-child): step 6 and the libraries side by side (--blas-probe: OpenBLAS
/// alone), one line of JSON for run_child; cachebook::UsageError when it has neither library.
int child_main(const Settings& o);

/// Reads the command line into `o` and checks it (cachebook::UsageError, naming the option, when
/// it is wrong); an exit status when the program should stop now (--help).
std::optional<int> parse_settings(cachebook::Cli& cli, Settings& o, int argc, char** argv);
/// "L1d", "L2", "L3".
std::string level_name(int level);
/// "L1d hwloc, L2 hwloc, L3 hwloc", and why any level is unknown.
std::string cache_sources(const cachebook::Machine& machine);
/// The vector instructions the kernels choose between, as this architecture names them.
std::string instruction_sets(const cachebook::CpuFeatures& f);
/// What steps 4 and 5 run: the vector kernel, or the scalar fallback and why.
std::string steps45_kernel(Isa isa);
/// Where step 7's OpenBLAS and BLIS figures come from, or why they are missing.
std::string openblas_note(const Settings& o, const Libraries& libs);
std::string blis_note(const Settings& o, const Libraries& libs);
/// "core (GFLOPS on 1 thread, on all)" for each OpenBLAS kernel tried, or "none".
std::string cores_tried(const Libraries& libs, double flops);
/// sec_lib / sec_6, or 0 when either was not measured.
double ratio(double sec_lib, double sec_6);

/// Steps 1 to 6, measured in this process, and the transpose of step 1t on its own.
struct StepRuns {
    std::vector<StepResult> steps;
    double transpose_seconds = 0;
};
/// Step 6 is timed here only where no child timed it beside the libraries (the table shows those).
StepRuns run_steps(Problem& p, const Reference& ref, const Settings& o, const MachineFacts& m, Blocking blocks,
                   const Libraries& libs, cachebook::Progress& progress);

/// The tiles of the tiling study: N (untiled), then 16 to 256 below N.
std::vector<std::size_t> study_tiles(std::size_t n);
/// The tiles of the tile sweep: 8 to 256, at most N.
std::vector<std::size_t> sweep_tiles(std::size_t n);

// ---- The chapter's measured claims, each decided by the book's rule (cachebook/claim.hpp) ----

/// Each claim says "the slow side takes at least R times as long as the fast side", on an
/// N x N problem (N = kClaimN, or --n when smaller), both sides timed interleaved kClaimRuns
/// times; above kClaimMaxNoise of noise in the control there is no verdict.
inline constexpr std::size_t kClaimN = 1024;
inline constexpr int kClaimRuns = 8;
inline constexpr double kClaimMaxNoise = 0.2;
inline constexpr std::size_t kClaimTile = 32;     // of steps 3 and 4 in the claims
inline constexpr double kIkjThreshold = 1.5;      // step 1 (i-j-k) over step 2 (i-k-j), 32 rows
inline constexpr double kSimdThreshold = 2.0;     // step 3 (tiled) over step 4 (tiled + SIMD), 64 rows
inline constexpr double kBlisThreshold = 4.0;     // step 4 over step 6 on one thread, all of C
inline constexpr double kThreadsThreshold = 1.3;  // step 6 on one thread over step 6 on two
cachebook::ClaimResult ikj_claim(Problem& p);
/// Inconclusive, with the reason, when `isa` is Scalar (no vector kernel here).
cachebook::ClaimResult simd_claim(Problem& p, Isa isa);
cachebook::ClaimResult blis_claim(Problem& p, Isa isa, const MicroKernel& kernel, Blocking blocks);
/// Inconclusive, with the reason, on one CPU, with `threads` below 2, without a vector kernel, or when
/// a thread got under kOwnCoreShare of a core, as the pool's threads note it (core_share.hpp).
cachebook::ClaimResult threads_claim(Problem& p, Isa isa, const MicroKernel& kernel, Blocking blocks, int threads,
                                     cachebook::Instruments instruments = cachebook::machine_instruments());
/// The four, decided on a problem of their own with the run's kernel and blocks.
struct Claims {
    std::size_t n = 0;
    cachebook::ClaimResult ikj, simd, blis, threads;
};
Claims decide_claims(const Settings& o, Blocking blocks, cachebook::Progress& progress);

/// Steps 5 and 6 on `threads` threads, GFLOPS.
struct ThreadTiming {
    int threads = 1;
    double threaded_gflops = 0, blis_gflops = 0;
};
std::vector<ThreadTiming> time_threads(Problem& p, const Settings& o, std::size_t tile, Blocking blocks,
                                       cachebook::Progress& progress);

/// Step 6 on one thread with one micro-kernel and the blocks derived for it.
struct KernelTiming {
    std::string name;
    Blocking blocks;
    double gflops = 0;
    bool matches = false;
};
std::vector<KernelTiming> time_kernels(Problem& p, const Reference& ref, int runs, cachebook::Progress& progress);

// ---- The roofs below the peak: one core's read bandwidth per level (lab_roofs.cpp) -------

/// One core's sequential read bandwidth from L2, from L3 and from memory (GB/s; nullopt where
/// not measured), and where the figures come from.
struct Roofs {
    std::array<std::optional<double>, 3> gbs;  // L2, L3, memory
    std::string source;
};
/// The roofs chapter 8 measured (`bandwidth.read_gbs` of its JSON); nullopt when it holds none.
std::optional<Roofs> roofs_from_json(const nlohmann::json& cliff);
/// The roofs from chapter 8's results at `caches_path` when given and they hold them, else a
/// short run here of the same kernel (cachebook/bandwidth.hpp) at the same working sets.
Roofs find_roofs(const Settings& o);

}  // namespace ch09
