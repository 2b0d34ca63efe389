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
#include "cachebook/profile.hpp"
#include "cachebook/report.hpp"
#include "cachebook/time_model.hpp"

namespace cachebook {

/// The caches the model runs (L1d, then L2 and L3 while the machine gives their size, ways and
/// line size) and their prices from the profile, then memory's.
struct PricedMachine {
    std::vector<CacheConfig> caches;
    std::vector<LevelPrice> prices;  ///< one per cache, then memory
    std::string why_not;             ///< not empty: the model cannot price here, and why
    [[nodiscard]] bool usable() const { return why_not.empty(); }
};

/// "the levels: L1 1.1 ns, 72 GB/s, 10.2 in flight; ...", or "no model: why".
std::string levels_text(const PricedMachine& m);

/// This machine's caches (machine()) priced by `profile`.
PricedMachine priced_machine(const Profile& profile);

/// A walk as the model sees it: its loads, their width and whether each waits for the one before.
struct WalkShape {
    Walk walk;
    double bytes_per_load = 8;
    bool dependent = false;
    bool prefetched = false;  ///< in address order: the prefetcher runs ahead (time_model.hpp)
};

/// The model's time for one pass of the walk (warm, pages placed at random `placements` times),
/// with the levels overlapped and added.
struct WalkPrediction {
    std::uint64_t loads = 0;
    Prediction overlapped, added;
};
WalkPrediction predict_walk(const PricedMachine& m, const WalkShape& shape, int placements = 3);

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

/// Prints "  the model predicts R (bottleneck), measured R, predicted / measured q", then the
/// added levels' figure, or "  not priced: why"; records priced.KEY: what, predicted,
/// predicted_added, measured, q (predicted / measured), q_added, bottleneck, left_out, why_not
/// (null where not priced). `format` formats the figures ("{:.2f}x").
void report_priced(Report& report, const PricedClaim& claim, const std::string& format);

}  // namespace cachebook
