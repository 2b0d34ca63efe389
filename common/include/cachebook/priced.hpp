#pragma once
/// @file priced.hpp
/// @brief A measured claim priced by the time model: this machine's caches as the cache model
/// runs them, priced by its profile; a walk's predicted time; and the line every priced claim
/// prints, "the model predicts R (bottleneck), measured R, predicted / measured q".

#include <optional>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/hierarchy.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/profile.hpp"
#include "cachebook/report.hpp"
#include "cachebook/time_model.hpp"

namespace cachebook {

/// The caches the model runs (L1d, then L2 and L3 while the machine gives their size, ways and
/// line size; an L3 without its ways is run with the L2's, and `note` says so) and their prices
/// from the profile, then memory's.
struct PricedMachine {
    std::vector<CacheConfig> caches;
    std::vector<LevelPrice> prices;  ///< one per cache, then memory
    CorePrice core;                  ///< the core's own work: an add of a dependent chain
    std::string why_not;             ///< not empty: the model cannot price here, and why
    std::string note;  ///< how a level the machine describes in part is run ("the L3's ways unknown: ...")
    [[nodiscard]] bool usable() const { return why_not.empty(); }
};

/// The L3 as the model runs it: the machine's ways, or the L2's where it gives none; its size the
/// smaller of the reported one and the profile's l3_reach. `note` says what was assumed or cut.
/// nullopt without a size, or with a line unlike the L2's.
std::optional<CacheConfig> modelled_l3(const std::optional<CacheInfo>& l3, const CacheConfig& l2,
                                       const Profile& profile, std::string& note);

/// "the levels: L1 1.1 ns, 72 GB/s, 10.2 in flight; ...; the core: an add 0.27 ns, ...", or "no model: why".
std::string levels_text(const PricedMachine& m);

/// This machine's caches (machine()) priced by `profile`.
PricedMachine priced_machine(const Profile& profile);

/// A walk as the model sees it: its loads, their width and whether each waits for the one before.
struct WalkShape {
    Walk walk;
    double bytes_per_load = 8;
    bool dependent = false;
    bool prefetched = false;  ///< in address order: the prefetcher runs ahead (time_model.hpp)
    /// A walk too long to run whole is run in part: `walk` is the part counted, after `warm`
    /// (empty: one pass of `walk` itself), and the whole is `scale` times the part.
    Walk warm;
    double scale = 1;
    InCore in_core{};  ///< the loop's chained adds a load, from its compiled code (time_model.hpp)
};

/// The chains of walks.hpp's sums as GCC -O3 compiles them for plain x86-64 (objdump -d): the row
/// sum loads four ints a movdqu and adds them in two paddq to one accumulator, half an add a load;
/// a column sum (sum_by_columns, sum_columns) loads one int a movslq and adds it to one register,
/// one add a load. Both adds take one cycle, as the profile's integer chain does.
inline constexpr InCore kRowSumCore{0.5, 0};
inline constexpr InCore kColumnSumCore{1, 0};

/// The model's time for one pass of the walk (warm, pages placed at random `placements` times),
/// with the levels overlapped and added; `loads` is the whole walk's, scale included.
struct WalkPrediction {
    std::uint64_t loads = 0;
    Prediction overlapped, added;
};
WalkPrediction predict_walk(const PricedMachine& m, const WalkShape& shape, int placements = 3);

/// The model's time for C = A x B on n x n doubles (hierarchy.hpp's matmul_walk; `tile` > 0: the
/// blocked product): the three matrices touched once, two outer units run to warm the caches, the
/// next two counted and the whole scaled from them (every unit of a nest walks alike). `prefetched`:
/// the inner loop walks rows, which the prefetcher follows. nullopt when the product has fewer than
/// four units (whole tiles in a row of tiles) to sample. The core's work: an inner loop over k sums
/// into one double, a chain of one addsd a multiply-add; the others carry no chain from one
/// iteration to the next (matmul_orders.cpp, compiled at -O3 without -ffast-math).
std::optional<WalkPrediction> predict_matmul(const PricedMachine& m, LoopOrder order, std::size_t n, std::size_t tile,
                                             bool prefetched);

/// One priced claim: the model's figure, made before the measurement, against the measured one.
struct PricedClaim {
    std::string key;                                   ///< recorded under priced.KEY
    std::string what;                                  ///< "column / row", "ns a load of the row sum"
    std::optional<double> predicted, predicted_added;  ///< nullopt: not priced (why_not says why)
    std::string bottleneck;
    double measured = 0;
    std::string left_out;  ///< what the model leaves out that matters here
    std::string why_not;
};

/// The multiply-adds of an n x n product: n^3.
inline double multiply_adds(std::size_t n) {
    const auto x = static_cast<double>(n);
    return x * x * x;
}

/// The three priced claims of one walk at a power-of-two size and at a padded one: ns a unit of
/// work at each (keys KEY_ns and KEY_padded_ns) and power / padded (KEY_power_over_padded).
/// `power`, `padded`: the model's predictions, nullopt where it cannot price (`why_not` says why);
/// `measured_*_ns`: ns a unit as timed; `*_units`: the units of work of each walk.
struct PaddedPair {
    std::string key, what;                  ///< "ikj", "ikj"
    std::string power_label, padded_label;  ///< "N = 512", "N = 520"
    std::string unit;                       ///< "a multiply-add"
    std::optional<WalkPrediction> power, padded;
    double power_units = 0, padded_units = 0;
    double measured_power_ns = 0, measured_padded_ns = 0;
    std::string left_out, why_not;
};
std::vector<PricedClaim> padded_claims(const PaddedPair& pair);

/// Prints "  the model predicts R (bottleneck), measured R, predicted / measured q", then the
/// added levels' figure; where the model cannot price, "unknown (not priced: why)"; records priced.KEY: what,
/// predicted, predicted_added, measured, q (predicted / measured), q_added, bottleneck, left_out, why_not (null where
/// not priced). `format` formats the figures ("{:.2f}x"); `added` names what the second line adds (chapter 6: the
/// transfers and the core's own work).
void report_priced(Report& report, const PricedClaim& claim, const std::string& format,
                   const std::string& added = "the levels");

}  // namespace cachebook
