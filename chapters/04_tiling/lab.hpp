#pragma once
// Chapter 4's experiment around the lesson (tiling.hpp): the timed products and transposes,
// the sweep of tiles, the model's transpose rates, the study's data, and the stepper's
// groups and JSON for the book's widget.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/experiment.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/miss_kinds.hpp"
#include "cachebook/priced.hpp"
#include "cachebook/profile.hpp"
#include "tiling.hpp"

namespace ch04 {

/// The tiles of the lab's tables (0: untiled), and the lab's cache: 4 KiB, 8 sets x 8 ways x 64 B.
inline const std::vector<std::size_t> kModelTiles = {0, 4, 8, 16, 32};
inline cachebook::CacheConfig lab_cache() {
    return cachebook::CacheConfig{8, 8, 64};
}
/// The chapter's measured claims, each declared once: its key (claims.KEY in the JSON), what it
/// compares, its threshold on min(slow) / min(fast), and the N it is made at (another N, as
/// --quick, --n or --transpose-n give, is timed but not decided).
struct ClaimDeclaration {
    std::string key, text;
    double threshold = 1;
    std::size_t n = 0;
};
/// Naive ijk takes at least 3 times as long as blocked with the tile from the L1 (N = 512); the
/// naive transpose at least 1.15 times as long as the tiled one (T = 8, N = 2048); each recursive
/// walk at most kRecursiveSlack times the tiled one's time, as "tiled / recursive at least
/// 1 / kRecursiveSlack", at the N of the other claims.
inline constexpr std::size_t kBlockedN = 512, kTransposeN = 2048;
inline constexpr double kRecursiveSlack = 3.0;
inline const ClaimDeclaration kBlockedClaim{"blocked", "naive / blocked", 3.0, kBlockedN};
inline const ClaimDeclaration kTransposeClaim{"transpose", "naive / tiled (T = 8)", 1.15, kTransposeN};
inline const ClaimDeclaration kRecursiveProductClaim{"recursive_product", "tiled / recursive product",
                                                     1.0 / kRecursiveSlack, kBlockedN};
inline const ClaimDeclaration kRecursiveTransposeClaim{"recursive_transpose", "tiled / recursive transpose",
                                                       1.0 / kRecursiveSlack, kTransposeN};
/// The runs a side of a claim in the tests and with --quick: the kit's quick size.
inline constexpr int kQuickClaimRuns = 8;

/// How two walks are timed against each other, by the calling thread's CPU clock (cpu_time.hpp:
/// on a shared machine it stops while the thread waits for a CPU). A claim (`claim` set) runs on
/// the kit (cachebook::run_experiment): A B B A after one untimed call of each, `runs` runs a side
/// (kQuickClaimRuns with `quick`), decided by the book's rule. A figure no claim decides (the
/// padded size, the tile sweep, the transpose's larger tiles) takes `budget`'s runs: two, then up
/// to --runs while its seconds of the wall clock last.
struct PairRuns {
    const ClaimDeclaration* claim = nullptr;
    int runs = cachebook::kMinRunsPerSide;
    bool quick = false;
    cachebook::RunBudget budget;
};
/// Two sides' runs, whether they computed the same result, and the kit's outcome when they were
/// a claim (else an empty key).
struct PairTimes {
    cachebook::Timing slow, fast;
    bool identical = false;
    cachebook::ExperimentResult claim;
};
/// Times `slow` against `fast` as `runs` says. At an N other than the claim's, its verdict is
/// inconclusive, with the reason.
PairTimes time_pair(std::size_t n, const std::function<void()>& slow, const std::function<void()>& fast,
                    const PairRuns& runs);
/// A product C = A x B of n x n doubles, and a transpose dst = src^T: the walks the pairs time.
using ProductWalk = std::function<void(std::size_t n, const double* a, const double* b, double* c)>;
using TransposeWalk = std::function<void(std::size_t n, const double* src, double* dst)>;
/// Two products of the same integer-valued matrices, each into its own C, compared byte for byte.
PairTimes time_products(std::size_t n, const ProductWalk& slow, const ProductWalk& fast, const PairRuns& runs);
/// Two transposes of the same src into the same dst, so that both see the same pages (and page
/// sizes): `slow` first, untimed (every page's first touch), then `fast` into a dst filled with
/// -1, compared with it; then both timed.
PairTimes time_transposes(std::size_t n, const TransposeWalk& slow, const TransposeWalk& fast, const PairRuns& runs);
/// A claim's sizing: --runs (6 by default, kMinRunsPerSide) a side, or the quick size.
PairRuns claim_runs(const ClaimDeclaration& claim, int runs, bool quick);
/// A table's sizing: min(2, runs) runs, then up to `runs` while `seconds` last.
PairRuns table_runs(int runs, double seconds);
inline constexpr double kPaddedSeconds = 0.5, kSweepSeconds = 1.0, kTransposeSeconds = 0.5;

/// The tiles the blocked product is timed with.
inline const std::vector<std::size_t> kSweepTiles = {8, 16, 24, 32, 48, 64, 96, 128};

/// The step at which each cell of an n x n matrix is visited (row-major), from cachebook::visit_order.
std::vector<std::size_t> visit_steps(std::size_t n, std::size_t tile);

/// The tile formula on the L1d the machine reports; nullopt when no source reports one.
std::optional<TileChoice> machine_tile(const cachebook::Machine& machine, std::size_t n);
/// The tile of the measurements: `requested` when not 0, else this machine's, else the
/// one the course notes' 32 KiB L1 gives.
std::size_t blocked_tile(std::size_t requested, std::size_t n, const std::optional<TileChoice>& mine);

/// Naive ijk against blocked, on integer-valued n x n doubles, each into its own C.
struct BlockedTiming {
    std::size_t n = 0, tile = 0;
    cachebook::Timing naive, blocked;
    bool identical = false;             ///< memcmp of the two results
    cachebook::ExperimentResult claim;  ///< the kit's outcome when timed as a claim
    [[nodiscard]] double speedup() const { return naive.min() / blocked.min(); }
};
BlockedTiming time_blocked(std::size_t n, std::size_t tile, const PairRuns& runs);

/// The time model's price of naive ijk and of the blocked product at N and at N plus one line of
/// doubles (cachebook/priced.hpp), made before either is timed; nullopt where it cannot price.
struct BlockedPrice {
    cachebook::Profile profile;
    cachebook::PricedMachine machine;
    std::size_t n = 0, padded = 0, tile = 0;
    std::optional<cachebook::WalkPrediction> naive, naive_padded, blocked, blocked_padded;
};
BlockedPrice price_blocked(std::size_t n, std::size_t tile);

/// The blocked product for each tile, timed; results checked against the first.
struct SweepPoint {
    std::size_t tile = 0;
    cachebook::Timing timing;
};
struct Sweep {
    std::vector<SweepPoint> points;
    bool identical = false;
    [[nodiscard]] std::size_t best() const;  ///< the tile with the smallest minimum time
    /// The minimum time of `tile` over the fastest tile's; 0 when `tile` was not swept.
    [[nodiscard]] double over_best(std::size_t tile) const;
};
Sweep tile_sweep(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::RunBudget& runs);

/// Transpose misses per element of src (A, stream 1) and dst (B, stream 2).
struct TransposeRate {
    double src = 0, dst = 0;
    [[nodiscard]] double total() const { return src + dst; }
};
TransposeRate transpose_rate(std::size_t n, std::size_t tile, const cachebook::CacheConfig& cache);

/// The lab's table: misses of the transpose for each tile, the best tile, and how many
/// times fewer misses the last tile has than the first (untiled).
struct TileTable {
    std::vector<std::pair<std::size_t, std::uint64_t>> misses;
    std::size_t best = 0;
    double gain = 0;
};
TileTable tile_table(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache);

/// Why the lab's transpose misses (cachebook/miss_kinds.hpp): each walk's LRU misses split into
/// compulsory, capacity and conflict, the fully associative LRU cache's, and OPT's.
struct WalkKinds {
    std::string walk;  ///< "none", a tile, or "recursive"
    cachebook::MissKinds kinds;
    std::uint64_t fully_associative = 0, optimal = 0;
};
/// For each tile of `tiles` (0: untiled) and then the recursive walk, the transpose of n x n doubles.
std::vector<WalkKinds> transpose_kinds(std::size_t n, const std::vector<std::size_t>& tiles,
                                       const cachebook::CacheConfig& cache);

/// The real transposes timed against each other, both writing the same dst.
struct TransposeTiming {
    std::size_t n = 0, tile = 0;
    cachebook::Timing naive, tiled;
    bool identical = false;  ///< the tiled dst equals the naive one
    cachebook::ExperimentResult claim;
    [[nodiscard]] double speedup() const { return naive.min() / tiled.min(); }
};
TransposeTiming time_transpose(std::size_t n, std::size_t tile, const PairRuns& runs);

/// Reads the named columns of a CSV file (lines starting with '#' skipped,
/// first other line the header, empty cells skipped). Throws std::runtime_error
/// naming the file and the problem when it is missing, unreadable or malformed.
std::vector<Series> read_csv_columns(const std::string& path, const std::vector<std::string>& columns);
/// A seeded random walk starting at 100: data with no meaning, for comparison.
Series random_walk(std::size_t count, std::uint64_t seed);
/// The study's default data: matplotlib's sample file, its two columns, and where it comes from.
inline constexpr const char* kStudyFile = "/usr/share/matplotlib/mpl-data/sample_data/Stocks.csv";
inline const std::vector<std::string> kStudyColumns = {"^GSPC", "IBM"};
struct StudyData {
    std::vector<Series> series;  ///< empty when no file was given and the default is not installed
    std::string note;            ///< where they came from
};
/// The study's columns from `path`, or from kStudyFile when `path` is empty and the file exists.
StudyData read_study_data(const std::string& path);
/// Whether every study counted the same misses for each tile (the counts depend only on the addresses).
bool same_counts(const std::vector<Study>& studies);

/// Cache-oblivious blocking in the model: each walk's accesses, as the traces of common/ number
/// them (A 1, B 2, C 3), run through two caches. The transposes put dst right after src; the
/// products lay A, B, C out one after another (MatmulLayout::packed).
inline cachebook::CacheConfig large_cache() {
    return cachebook::CacheConfig{64, 8, 64};  // 32 KiB, 64 sets x 8 ways x 64 B
}
std::vector<cachebook::Access> tiled_transpose_trace(std::size_t n, std::size_t tile);  ///< tile 0: naive
std::vector<cachebook::Access> recursive_transpose_trace(std::size_t n);
std::vector<cachebook::Access> tiled_product_trace(std::size_t n, std::size_t tile);  ///< tile 0: ikj
std::vector<cachebook::Access> recursive_product_trace(std::size_t n);
/// The misses of a trace through a fresh cache of that geometry.
std::uint64_t trace_misses(const std::vector<cachebook::Access>& trace, const cachebook::CacheConfig& cache);

/// A walk's misses in one cache: tiled with each tile (0: untiled), and recursive.
struct CacheMisses {
    std::string cache;  ///< CacheConfig::describe()
    std::size_t capacity = 0;
    std::vector<std::pair<std::size_t, std::uint64_t>> by_tile;
    std::size_t best = 0;  ///< the tile with the fewest misses (the first such)
    std::uint64_t recursive = 0;
};
/// The tiles of the two-cache tables: 0 (untiled, ikj for the product) and the powers of two.
inline const std::vector<std::size_t> kTransposeTiles = {0, 4, 8, 16, 32, 64};
inline const std::vector<std::size_t> kProductTiles = {0, 4, 8, 16, 32};
/// The transpose and the product of n x n doubles, tiled and recursive, in each cache.
std::vector<CacheMisses> transpose_in_caches(std::size_t n, const std::vector<cachebook::CacheConfig>& caches);
std::vector<CacheMisses> product_in_caches(std::size_t n, const std::vector<cachebook::CacheConfig>& caches);

/// The recursive walk timed against the tiled one, each run on the same inputs.
struct RecursiveTiming {
    std::size_t n = 0, tile = 0;
    cachebook::Timing tiled, recursive;
    bool identical = false;
    cachebook::ExperimentResult claim;
    [[nodiscard]] double ratio() const { return recursive.min() / tiled.min(); }  ///< recursive / tiled
};
RecursiveTiming time_recursive_product(std::size_t n, std::size_t tile, const PairRuns& runs);
RecursiveTiming time_recursive_transpose(std::size_t n, std::size_t tile, const PairRuns& runs);
/// The tile of the tiled transpose the recursive one is timed against: the transpose claim's.
inline constexpr std::size_t kRecursiveTransposeTile = 8;

/// The M / H string of steps [first, last), three letters per iteration separated by spaces.
std::string stepper_marks(const MatmulStepper& run, std::size_t first, std::size_t last);

/// A run of consecutive steps of one tile step (tiled) or one row of C (untiled).
struct StepperGroup {
    std::size_t first = 0, count = 0;  ///< steps [first, first + count)
    std::size_t ii = 0, jj = 0, kk = 0, row = 0;
    std::uint64_t hits = 0, misses = 0;
};
std::vector<StepperGroup> stepper_groups(const MatmulStepper& run);

/// The stepper widget's walk (book/_static/stepper.js): arrays A, B, C, the steps with
/// their tile corners, and the groups; `walk` names it in the widget's picker.
nlohmann::json to_json(const MatmulStepper& run, const std::string& walk);

}  // namespace ch04
