#pragma once
/// @file profile.hpp
/// @brief This machine's profile: what each level costs, measured by short microbenchmarks on
/// the machine that runs the program, never typed. For each level (L1, L2, L3, memory, at the
/// working sets of bandwidth.hpp's level_sizes): the latency of a dependent chase, the read
/// bandwidth with 8-byte loads and with the widest vector loads the CPU offers, the store
/// bandwidth, and the loads in flight (the knee of several chases at once, in_flight.hpp). Each
/// figure carries what measured it and its spread. The time model (time_model.hpp) prices with it.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/bandwidth.hpp"
#include "cachebook/time_model.hpp"

namespace cachebook {

/// One measured figure.
struct Figure {
    std::optional<double> value;  ///< the best run (lowest time, highest rate); nullopt: not measured
    double spread = 0;            ///< |median - best| / best over the runs: how far a typical run strayed
    std::string source;           ///< what measured it, or why it was not measured
};

/// One level's figures.
struct LevelProfile {
    std::string name;        ///< "L1", "L2", "L3", "memory"
    std::size_t bytes = 0;   ///< the working set (0: the level's size is unknown, nothing measured)
    Figure latency_ns;       ///< ns a hop of one dependent chase
    Figure read_gbs;         ///< GB/s of 8-byte loads (read_sum)
    Figure vector_read_gbs;  ///< GB/s of the widest vector loads (Profile::vector_bytes)
    Figure store_gbs;        ///< GB/s of 8-byte stores, each line read for ownership first
    Figure in_flight;        ///< ns a hop of one chase over the best ns an access of 1 to 16 chases
};

struct Profile {
    std::vector<LevelProfile> levels;  ///< L1, L2, L3, memory
    std::size_t vector_bytes = 0;      ///< the width of the vector loads measured
    double probe_seconds = 0;          ///< how long the probe took
    int runs = 0;                      ///< runs of each figure
    /// The prices of the named levels, in order, for the time model: latency, 8-byte read
    /// bandwidth, loads in flight. nullopt when one of them lacks a figure.
    [[nodiscard]] std::optional<std::vector<LevelPrice>> prices(const std::vector<std::string>& names) const;
    /// The level of that name, or nullptr.
    [[nodiscard]] const LevelProfile* level(const std::string& name) const;
};

struct ProfileOptions {
    int runs = 5;  ///< runs of each figure (best and spread over them)
};

/// Measures this machine at the working sets of level_sizes_of_this_machine(): a few seconds at
/// most. A level whose size the machine does not report is not measured (its figures say why).
Profile measure_profile(const ProfileOptions& options = {});
/// The same at the given working sets.
Profile measure_profile(const LevelSizes& sizes, const ProfileOptions& options);

/// The widest vector loads this CPU offers the build (64 bytes with AVX-512, 32 with AVX2, else 16).
std::size_t widest_vector_bytes();

/// The profile as the JSON records it (key "profile"): levels [{name, bytes, latency_ns,
/// read_gbs, vector_read_gbs, store_gbs, in_flight, each a value with its spread and source}],
/// vector_loads ("64 B"), probe_seconds (the runs are in each source); null where not measured.
nlohmann::json profile_json(const Profile& p);

/// One line per level, as make doctor prints it.
std::vector<std::string> profile_lines(const Profile& p);

}  // namespace cachebook
