#pragma once
// Chapter 9: how the program measures the steps. Problems filled before any timing, slow steps
// timed on a sample of rows, step 6 timed in turn with the libraries (in a child process per
// OpenBLAS kernel), the search for step 6's blocks, the tile study, blocks from the caches
// chapter 8 measured, and the two laws of speed-up the book sets beside the measured one.

#include <array>
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cachebook/measure.hpp"
#include "matmul.hpp"

namespace ch09 {

/// The three matrices of one problem, filled and first-touched before any timing.
struct Problem {
    Shape shape;
    Buffer a, b, c;
    explicit Problem(Shape s);
};

/// The rows every result is checked on: the first and the last (up to) 16 rows.
struct Reference {
    RowRange head, tail;
    std::vector<double> head_ref, head_abs, tail_ref, tail_abs;
    explicit Reference(const Problem& p);
    /// Checks the head rows, and the tail rows too when the step computed all of C.
    [[nodiscard]] Check check(const Problem& p, bool all_rows) const;
};

/// Times `run(rows)` on rows [0, rows_timed) of C, minimum of `runs`; returns seconds for all of C.
double time_rows(const Problem& p, std::size_t rows_timed, int runs, int warmup,
                 const std::function<void(RowRange)>& run);
/// Rows to time so that one run does about `flops` FLOPs: at least 16, whole tiles, at most all.
std::size_t sample_rows(Shape s, double flops, std::size_t multiple);

/// Step 6, OpenBLAS and BLIS timed in turn in one process. Seconds, minimum of the runs; index 0
/// is one thread, index 1 all threads (0: not measured: one thread only, or no such library).
struct LibraryRun {
    std::string openblas_core;  // OpenBLAS's kernel ("" without OpenBLAS)
    std::string blis_name;      // "BLIS <version>, <its kernels>" ("" without BLIS)
    std::array<double, 2> step6{}, openblas{}, blis{};
    double step6_plain = 0;  // step 6's kernel without the prefetch of C, 1 thread (0: no such twin)
    bool openblas_matches = false, blis_matches = false;
};
nlohmann::json to_json(const LibraryRun& run);
LibraryRun library_run_from_json(const nlohmann::json& j);

/// The thread counts of the side-by-side runs: 1, and `threads` when that is more.
std::vector<int> thread_counts(int threads);
/// Step 6 (with `blocks`), OpenBLAS and BLIS (those present) on an n x n problem, runs interleaved.
LibraryRun time_beside_libraries(std::size_t n, int threads, int runs, const MicroKernel& kernel, Blocking blocks);

/// What a child process is asked to time: this program, run again with `--blas-child`.
struct ChildRequest {
    std::string program;   // the path of this program
    std::string coretype;  // OPENBLAS_CORETYPE for the child ("": the environment as it is)
    std::size_t n = 0;
    int threads = 1, runs = 1;
    std::string kernel;
    Blocking blocks;
};
/// Runs the child (OpenBLAS reads OPENBLAS_CORETYPE only when it loads); what it measured, or
/// nullopt when it failed.
std::optional<LibraryRun> run_child(const ChildRequest& request);
/// The path of the running program ("" when /proc does not say).
std::string self_path();

/// One OpenBLAS kernel type tried, and what its process measured.
struct CoreRun {
    std::string coretype;  // "" for OpenBLAS's own choice
    LibraryRun run;
};
/// The run whose OpenBLAS kernel was fastest (one thread and all, summed); without OpenBLAS, the
/// one run (which timed BLIS). nullopt when no run is given.
std::optional<std::size_t> fastest_openblas(const std::vector<CoreRun>& runs);

/// One candidate of the block search and its time (seconds, minimum of the runs).
struct BlockTrial {
    Blocking blocks;
    double seconds = 0;
};
/// Step 6 on one thread with each of block_candidates(rule), the candidates taken in turn in
/// every run, so that a noisy moment falls on one run of each rather than on every run of one.
std::vector<BlockTrial> search_blocks(Problem& p, const MicroKernel& kernel, Blocking rule, int runs);
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
std::vector<TileTiming> time_tiles(Problem& p, Isa isa, const std::vector<std::size_t>& tiles, int runs,
                                   double scalar_flops, double vector_flops, cachebook::Progress& progress);

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
/// The parallel share Amdahl's law gives for a measured `speedup` on `workers` (> 1) workers,
/// clamped to [0, 1].
double parallel_share(double speedup, double workers);

}  // namespace ch09
