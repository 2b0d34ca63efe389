#pragma once
// Chapter 5's experiment: the structs as the compiler laid them out, the data each
// measured loop runs over, the timing loops, and the JSON the page reads.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cachebook/experiment.hpp"
#include "cachebook/measure.hpp"
#include "layout.hpp"

namespace ch05 {

// --- Layouts as the compiler made them ---------------------------------------------

/// One field of a struct, where the compiler put it.
struct Field {
    std::string name;
    std::size_t offset = 0, size = 0;
};

/// A struct as the compiler laid it out.
struct StructLayout {
    std::string name;
    std::size_t size = 0, align = 0;
    std::vector<Field> fields;
    /// Bytes the compiler added (holes between fields and at the end).
    [[nodiscard]] std::size_t padding() const;
    /// "c@0+1 [7 pad] d@8+8 i@16+4 [4 pad]".
    [[nodiscard]] std::string picture() const;
    /// Structs per line: line / size (2.67 for a 24-byte struct and 64-byte lines).
    [[nodiscard]] double per_line(std::size_t line_bytes) const;
};

StructLayout particle_layout();
StructLayout hot_particle_layout();
StructLayout cold_particle_layout();
StructLayout char_double_int_layout();
StructLayout double_int_char_layout();
StructLayout body_layout();
StructLayout aligned_body_layout();

// --- The update loop --------------------------------------------------------------------

/// The same n particles (positions, velocities, ids, names from i) in each layout.
ParticlesAoS make_aos(std::size_t n);
ParticlesSoA make_soa(std::size_t n);
ParticlesHotCold make_hot_cold(std::size_t n);

/// Sum of all x: the layouts agree bit for bit after the same updates.
double sum_x(const ParticlesAoS& s);
double sum_x(const ParticlesSoA& s);
double sum_x(const ParticlesHotCold& s);

/// Where an array of `bytes` stands against the data caches a machine reports.
struct CacheFit {
    std::string beyond;      // the largest level smaller than the array ("L2"); "" if none is
    std::string within;      // the smallest level that holds it ("L3"); "" if none does
    std::string last_level;  // the largest level reported; "" if none is
    [[nodiscard]] bool beyond_last_level() const { return !last_level.empty() && beyond == last_level; }
    /// "beyond L3, the last level", "beyond L2, within L3", "within L1"; "" when no level is reported.
    [[nodiscard]] std::string text() const;
};
/// `level_bytes[k]`: the data cache of level k + 1, 0 where none is reported.
CacheFit cache_fit(std::size_t bytes, const std::vector<std::size_t>& level_bytes);
/// The same against this machine's data caches (levels 1 to 4).
CacheFit cache_fit(std::size_t bytes);

// --- Linked list against vector --------------------------------------------------------

/// The same values three ways, plus the scattered order as a list of indices.
struct ListBench {
    std::vector<Node> ordered_pool;              // linked in address order (nodes from a pool, in order)
    std::vector<Node> scattered_pool;            // linked in a random order: each hop lands anywhere
    std::vector<std::int64_t> values;            // a vector of the same values
    std::vector<std::uint32_t> scattered_order;  // the slots of the scattered list, in list order
    Node* ordered_head = nullptr;
    Node* scattered_head = nullptr;
};
ListBench make_lists(std::size_t n, std::uint64_t seed = 5);
/// The scattered pool's values, slot by slot: the gather reads them in list order, so it visits
/// exactly the slots the scattered list visits, in the same order.
std::vector<std::int64_t> scattered_values(const ListBench& b);

// --- Software prefetch, timed ----------------------------------------------------------

struct PrefetchTimes {
    std::size_t n = 0;
    std::vector<std::size_t> distances;  // 0 first: no prefetch
    std::vector<cachebook::Timing> times;
    std::vector<double> sums;  // identical
};
PrefetchTimes time_prefetch(std::size_t n, const std::vector<std::size_t>& distances, int runs);
/// The index of the timing with the fastest run (the first of equals); 0 for none.
std::size_t fastest(const std::vector<cachebook::Timing>& times);

// --- Fusion, fission and stores: the arrays --------------------------------------------

/// How large the fusion arrays are and why: beyond the last-level cache when
/// that is affordable (each array, or the arrays together), else beyond L2 (said so).
struct StreamSize {
    std::size_t bytes_per_array = 0;
    std::string beyond;  // "L3", "L2" or "default"
    std::string reason;
};
/// `llc_bytes`, `l2_bytes`: as sysfs reports them (0 if unknown); `budget`: most bytes per
/// array; `arrays`: how many such arrays one loop streams at once.
StreamSize choose_stream_size(std::size_t llc_bytes, std::size_t l2_bytes, std::size_t budget, std::size_t arrays);
/// A streaming array's size on this machine: from the caches it reports (within `budget`
/// bytes), or `stream_mib` when that is above 0, or 8 MiB for a quick run.
StreamSize stream_size(std::int64_t stream_mib, bool quick, std::size_t budget, std::size_t arrays);
/// The fusion arrays' size: stream_size within 128 MiB per array, three arrays.
StreamSize fusion_stream_size(std::int64_t stream_mib, bool quick);

/// Where the fusion arrays lie. The three (a, b, c) share one allocation, each starting this
/// many bytes after the end of the one before, and both versions run over the same three, so
/// that where they lie weighs on both alike. 64 KiB and a line apart, as the chapter shows.
inline constexpr std::size_t kFusionGapBytes = (std::size_t{64} << 10) + 64;
/// The placement the chapter shows for contrast: 8 KiB between arrays.
inline constexpr std::size_t kFusionCloseGapBytes = std::size_t{8} << 10;

/// The stores array's size: stream_size within 768 MiB (one array, so it can lie well beyond
/// a large last-level cache).
StreamSize stores_stream_size(std::int64_t stream_mib, bool quick);

// --- The chapter's measured claims, declared (cachebook/experiment.hpp) -------------------

/// Each claim is "slow takes at least R times as long as fast", an experiment the kit runs and
/// decides: both sides A B B A, timed by the calling thread's CPU clock (experiment_instruments),
/// `runs` runs a side (kMinRunsPerSide with --quick, the size the tests run). A run is one call,
/// or, for the update loop and fusion, as many calls as last kRunBudgetSeconds.
/// The chapter prints these verdicts and the tests require them: the same objects.
inline constexpr double kAosOverSoa = 2.0;           // AoS against SoA, update loop
inline constexpr double kAosOverHotCold = 1.2;       // AoS against hot/cold
inline constexpr double kScatteredOverVector = 5.0;  // scattered list against vector
inline constexpr double kScatteredOverGather = 2.0;  // scattered list against the gather
inline constexpr double kSeparateOverFused = 1.1;    // two loops against the fused one
inline constexpr double kStoreOverStream = 1.3;      // plain stores against non-temporal ones
/// The stores claim's premise: plain stores, which move each line twice, take at least this many
/// times as long as the read-only sum, which moves it once. Below it the read for ownership costs
/// this machine no time, non-temporal stores have nothing to save, and the claim gives no verdict.
inline constexpr double kStoreOverReadPremise = 1.1;
/// How long a run of the update loop or of fusion lasts at least: their faster sides take well under a
/// millisecond a call at the --quick size, where one call a run let the run after the other side
/// (whose arrays had evicted this side's) read 15-50 % slower than the run after itself, and the
/// control refused a verdict. Many calls a run time the steady state; the first call's carry-over
/// is then a small part of the run.
inline constexpr double kRunBudgetSeconds = 0.01;
/// The particles and list nodes of a --quick run, and of the tests.
inline constexpr std::size_t kQuickParticles = 1'000'000, kQuickNodes = std::size_t{1} << 20;

/// The kit's instruments with the calling thread's CPU clock, which stops while a busy machine
/// makes the thread wait.
cachebook::Instruments experiment_instruments();
/// A side's runs as a Timing (seconds a call, in the order run).
cachebook::Timing timing_of(const std::vector<double>& runs);
/// Two loops that make no claim, for a table: timed as experiment `e` times its sides (its runs,
/// A B B A, `calls` calls a run as the experiment's own run made, the same clock), with no verdict.
std::pair<cachebook::Timing, cachebook::Timing> time_beside(const cachebook::Experiment& e, long calls, bool quick,
                                                            const std::function<void()>& first,
                                                            const std::function<void()>& second);

/// The update loop, AoS against SoA (claim aos_over_soa) and against hot/cold (aos_over_hot_cold),
/// both bound by memory bandwidth; the table's three rows from their runs.
struct LayoutTimes {
    std::size_t n = 0;
    cachebook::ExperimentResult over_soa, over_hot_cold;
    cachebook::Timing aos, soa, hot_cold;
    bool same_result = false;  // one update of each layout, before the timing, gave the same positions
};
class LayoutExperiments {
public:
    LayoutExperiments(std::size_t n, int runs);
    LayoutExperiments(const LayoutExperiments&) = delete;
    [[nodiscard]] LayoutTimes run(bool quick) const;

private:
    ParticlesAoS aos_;
    ParticlesSoA soa_;
    ParticlesHotCold hot_cold_;
    bool same_result_ = false;
    cachebook::Experiment over_soa_, over_hot_cold_;
};

/// The scattered list against the vector (claim scattered_over_vector) and against the gather of
/// the same slots in the same order (scattered_over_gather); the list in address order is timed
/// against the vector beside them, A B B A, with no claim.
struct ListTimes {
    std::size_t n = 0;
    cachebook::ExperimentResult over_vector, over_gather;
    cachebook::Timing vector, ordered, scattered, gather;
    bool same_result = false;  // the four walks give the same sum
};
class ListExperiments {
public:
    ListExperiments(std::size_t n, int runs);
    ListExperiments(const ListExperiments&) = delete;
    [[nodiscard]] ListTimes run(bool quick) const;

private:
    ListBench bench_;
    std::vector<std::int64_t> scattered_values_;  // the scattered pool's values, slot by slot
    mutable std::int64_t sink_ = 0;
    cachebook::Experiment over_vector_, over_gather_;
};

/// Fusion and fission: the claim (key fusion, memory-bound) on two loops against the fused one
/// over three arrays `gap_bytes` apart; the same two with the arrays `close_gap_bytes` apart, and
/// the fission pair, timed A B B A beside it with no claim.
struct FusionTimes {
    std::size_t n = 0, fission_n = 0, fission_ways = 0;
    std::size_t gap_bytes = 0, close_gap_bytes = 0;
    cachebook::ExperimentResult claim;
    cachebook::Timing separate, fused, fission_one, fission_split;
    cachebook::Timing separate_close, fused_close;
    bool same_result = false;  // each version computes b = 2a and c = 2a + 1; the a_k agree
};
class FusionExperiment {
public:
    FusionExperiment(std::size_t n, std::size_t fission_n, std::size_t ways, int runs,
                     std::size_t gap_bytes = kFusionGapBytes, std::size_t close_gap_bytes = kFusionCloseGapBytes);
    FusionExperiment(const FusionExperiment&) = delete;
    [[nodiscard]] FusionTimes run(bool quick);

private:
    // One allocation: the distance between the arrays is the program's choice, not the allocator's.
    std::vector<double> block_;
    double *a_, *b_, *c_, *b_close_, *c_close_;
    std::vector<std::vector<double>> fa1_, fa2_, fb_;
    FusionTimes shape_;
    cachebook::Experiment declared_;
};
/// Which placement of the fusion arrays was slower, the two versions' runs added up, by the
/// book's rule with a threshold of 1: slower by more than this run's noise, or neither.
struct PlacementVerdict {
    std::string slower;  ///< "close", "apart", or "neither" when the run cannot tell
    cachebook::ClaimResult result;
};
PlacementVerdict placement_verdict(const FusionTimes& t);

/// The four loops over one array of n words: plain stores against non-temporal ones (claim
/// stores, memory-bound), read-modify-write against the read-only sum beside it with no claim.
struct StoreTimes {
    std::size_t n = 0;
    cachebook::ExperimentResult claim;  // as the kit decided it; stores_claim adds the premises
    cachebook::Timing read_only, modify, store, stream;
    std::string stream_instruction;  // streaming_store_instruction(): "" when plain stores ran in its place
    CacheFit fit;                    // where the array stands against this machine's caches
    bool same_result = false;        // each loop left (or read) the values it should
};
class StoresExperiment {
public:
    StoresExperiment(std::size_t n, int runs);
    StoresExperiment(const StoresExperiment&) = delete;
    [[nodiscard]] StoreTimes run(bool quick);

private:
    std::vector<std::uint64_t> a_;
    std::uint64_t sink_ = 0;
    cachebook::Experiment declared_;
};
/// The kit's verdict, with the premises: inconclusive, said why, where no non-temporal store ran,
/// where the array lies within a cache (plain stores then hit, streamed ones not), or where plain
/// stores took under kStoreOverReadPremise times the read-only sum.
cachebook::ClaimResult stores_claim(const StoreTimes& t);

// --- JSON -------------------------------------------------------------------------------

nlohmann::json to_json(const StructLayout& s);
nlohmann::json to_json(const Straddle& s);

// --- The Report's cells (main.cpp prints through these) ----------------------------------

/// 1234567 as "1,234,567".
std::string with_commas(std::uint64_t v);
/// A count printed with thousands separators, recorded as a number (and as the printed text for the prose).
cachebook::Value count(std::string key, std::uint64_t n);
/// Nanoseconds per element of the fastest run.
double ns_per(const cachebook::Timing& t, std::size_t n);
/// A timing's cell, nanoseconds per element, recorded at `key`.ns_per_element with the runs beside it.
cachebook::Value ns_cell(cachebook::Report& report, const std::string& key, const cachebook::Timing& t, std::size_t n);
/// A ratio of two fastest runs, printed and recorded as text with `digits` decimals (empty key: printed only).
cachebook::Value ratio(std::string key, const cachebook::Timing& a, const cachebook::Timing& b, int digits);
/// An experiment's verdict beside its measurement (cachebook::report_experiment), recorded at
/// claims.`key` with its margin, effect / threshold - 1, for the page.
void claim_lines(cachebook::Report& report, const cachebook::ExperimentResult& outcome);
/// Which placement of the fusion arrays was slower, one line, recorded at fusion.placement.
void placement_line(cachebook::Report& report, const PlacementVerdict& v);
/// `head` then `words`, broken at spaces onto lines of at most `width` columns (one word
/// longer than that stays whole), each further line indented as far as `head` is long.
std::string wrap_words(const std::string& head, const std::string& words, std::size_t width);
/// 66624 bytes as "65 KiB + 64 B".
std::string kib_text(std::size_t bytes);

}  // namespace ch05
