#pragma once
// Chapter 2's lab: the experiments around the lesson (the matrix-read table and the geometries
// tried against the course notes' counts, this machine's caches, the timed sums) and what the
// program records of them.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/claim.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/miss_kinds.hpp"
#include "cachebook/priced.hpp"
#include "cachebook/profile.hpp"
#include "loop_orders.hpp"

namespace ch02 {

/// The geometry of a cache the machine reports (cachebook::cache_config), with a line of 8 bytes or more.
std::optional<cachebook::CacheConfig> cache_geometry(const std::optional<cachebook::CacheInfo>& cache);

/// The matrix-read table, one row per size.
std::vector<MatrixReadRow> matrix_read_table(const cachebook::CacheConfig& cache,
                                             const std::vector<std::size_t>& sizes = {16, 32, 48, 73});

/// The matrix-read table as the course notes print it (n, row misses, column misses). The notes
/// name only the cache's size, 4 KB; the geometry is what the program has to find.
struct NotesMatrixRead {
    std::size_t n = 0;
    std::uint64_t row = 0, column = 0;
};
std::vector<NotesMatrixRead> notes_matrix_reads();

/// The matrix-read counts in one 4 KiB LRU cache of 64-byte lines, and whether all of them
/// equal the notes' table.
struct GeometryTrial {
    cachebook::CacheConfig cache;
    std::vector<cachebook::OrderMisses> misses;  ///< one per size of notes_matrix_reads()
    bool matches_notes = false;
};
/// Every power-of-two associativity of a 4 KiB cache, direct-mapped (1 way) to fully associative.
std::vector<GeometryTrial> geometry_trials();

/// The addresses of a double n x n matrix at address 0, read row by row or column by column.
std::vector<std::uint64_t> matrix_walk(std::size_t n, bool by_columns);

/// One of the notes' walks in a cache: its misses split into the three kinds
/// (cachebook/miss_kinds.hpp), and the fewest any policy could take (Belady's OPT).
struct WalkKinds {
    std::size_t n = 0;
    bool by_columns = false;
    cachebook::MissKinds kinds;
    std::uint64_t fully_associative = 0;  ///< misses of the fully associative LRU cache of as many lines
    std::uint64_t optimal = 0;
};
/// The row and the column walk of each size of notes_matrix_reads(), in `cache`.
std::vector<WalkKinds> walk_kinds(const cachebook::CacheConfig& cache);

/// The small page of x86-64 and most ARM systems.
inline constexpr std::size_t kPageBytes = 4096;

/// The most sets of a physically indexed `cache` that column 0 of a rows x leading matrix can
/// reach on pages of `page` bytes: the bits of the set index inside the page are the column's own,
/// the bits above come from wherever the pages lie, so each page offset the column uses reaches at
/// most sets x line / page sets (never fewer than one, never more than its lines).
std::size_t physical_sets_bound(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t leading,
                                std::size_t elem, std::size_t page = kPageBytes);

/// The measured sum's input: an n x n int array, a[i][j] = (i + j) % 10.
std::vector<int> sum_input(std::size_t n);

struct SumTiming {
    std::size_t n = 0;
    long long row_sum = 0, column_sum = 0;
    cachebook::Timing row, column;
    /// column / row, minimum over minimum.
    [[nodiscard]] double ratio() const { return column.min() / row.min(); }
};
/// Times the column sum `runs` times and the row sum 4 x `runs` times, alternating,
/// after one untimed pass of each, by the calling thread's CPU clock (cachebook/cpu_time.hpp):
/// on a shared machine it stops while the thread waits for a CPU.
SumTiming time_sums(std::size_t n, int runs);

/// The time model's price of the two sums (cachebook/priced.hpp), made before they are timed:
/// this machine's profile, and each sum's predicted time (nullopt where the model cannot price).
struct SumPrice {
    cachebook::Profile profile;
    cachebook::PricedMachine machine;
    std::optional<cachebook::WalkPrediction> row, column;
};
SumPrice price_sums(std::size_t n);
/// The priced claims of the timed sums: ns an element of each, and column / row.
std::vector<cachebook::PricedClaim> sum_priced(const SumPrice& price, const SumTiming& timing);

/// The chapter's claim: the column sum takes at least this many times as long as the row sum.
inline constexpr double kSumThreshold = 2.0;
/// The claim decided by the book's rule (cachebook/claim.hpp): each round's column run against
/// the fastest of its four row runs, rounds interleaved as time_sums ran them; the control is
/// each side's odd rounds against its even rounds. Inconclusive, with the reason, where `l2`
/// (this machine's L2, when it describes one) keeps every line of a column, so the model
/// predicts no effect, or where one round gives no control.
cachebook::ClaimResult sum_claim(const SumTiming& timing, const std::optional<cachebook::CacheConfig>& l2,
                                 double max_noise = 0.2);

/// The measured conflict: the first kConflictCols columns of an int array of kConflictRows rows,
/// summed column by column, once with rows a page apart (a power of two) and once a page and a line.
inline constexpr std::size_t kConflictRows = 64;
inline constexpr std::size_t kConflictCols = 1024;
inline constexpr std::size_t kConflictStride = kPageBytes;  ///< bytes from row to row: the page
inline constexpr std::size_t kConflictPad = 64;             ///< bytes of padding per row: one line
/// The claim: the power-of-two stride takes at least this many times as long as the padded one.
inline constexpr double kConflictThreshold = 2.0;

struct ConflictRun {
    long long power_sum = 0, padded_sum = 0;
    std::vector<double> power_runs, padded_runs;  ///< seconds, interleaved, by the thread's CPU clock
    [[nodiscard]] double power_min() const;
    [[nodiscard]] double padded_min() const;
};
/// Times both sums `runs` times each, interleaved, each run `passes` passes over the columns,
/// on page-aligned arrays.
ConflictRun time_conflict(int runs, int passes);
/// The time model's price of one pass of each conflict sum (rows page-aligned, as time_conflict
/// lays them), made before they are timed, with the program's one profile (the sums' too).
struct ConflictPrice {
    cachebook::PricedMachine machine;
    std::optional<cachebook::WalkPrediction> power, padded;
};
ConflictPrice price_conflict();
/// The priced claims of the conflict: ns a load at each stride, and page / padded.
std::vector<cachebook::PricedClaim> conflict_priced(const ConflictPrice& price, const ConflictRun& run, int passes);

/// The claim decided by the book's rule; inconclusive, with the reason, where `l1` is unknown or
/// keeps all of a power-of-two column's lines, so the model predicts no effect.
cachebook::ClaimResult conflict_claim(const ConflictRun& run, const std::optional<cachebook::CacheConfig>& l1,
                                      double max_noise = 0.2);

nlohmann::json to_json(const ColumnWalk& w);
/// The misses of the first `count` columns, as "256 32 32 ...".
std::string first_columns(const std::vector<std::uint64_t>& misses, std::size_t count);
/// A cache's geometry as the book's page reads it.
nlohmann::json cache_json(const cachebook::CacheConfig& cache);

}  // namespace ch02
