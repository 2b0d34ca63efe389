#pragma once
/// @file profile.hpp
/// @brief This machine's profile: what each level costs, measured by short microbenchmarks on
/// the machine that runs the program, never typed. For each level (L1, L2, L3, memory, at the
/// working sets of bandwidth.hpp's level_sizes): the latency of a dependent chase, the read
/// bandwidth with 8-byte loads and with the widest vector loads the CPU offers, the store
/// bandwidth, and the loads in flight (the knee of several chases at once, in_flight.hpp); the
/// core's own adds; and what one line costs when two cores write it in turn (the ping-pong). Each
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
    std::string name;         ///< "L1", "L2", "L3", "memory"
    std::size_t bytes = 0;    ///< the working set (0: the level's size is unknown, nothing measured)
    Figure latency_ns;        ///< ns a hop of one dependent chase
    Figure read_gbs;          ///< GB/s of 8-byte loads (read_sum)
    Figure vector_read_gbs;   ///< GB/s of the widest vector loads (Profile::vector_bytes)
    Figure store_gbs;         ///< GB/s of 8-byte stores, each line read for ownership first
    Figure stream_store_gbs;  ///< GB/s of 8-byte streaming stores (x86-64 movnti): no read for ownership
    Figure in_flight;         ///< ns a hop of one chase over the best ns an access of 1 to 48 chases (in_flight.hpp)
};

/// What the core needs apart from its loads: measured by loops of adds alone, no load in them.
struct CoreProfile {
    Figure int_add_ns;  ///< ns an integer add of one dependent chain (the core's cycle, where adds take one)
    Figure fp_add_ns;   ///< ns a double add of one dependent chain
    Figure
        peak_gflops;  ///< double flops a ns: fused multiply-adds of the widest vectors, chains enough to fill the units
};

/// What writes to one line cost: moved between two cores, or kept by one (chapter 6 prices its races with them).
struct SharingProfile {
    /// ns one move of a line between two cores: two threads pinned to two usable cpus bounce one
    /// line by atomic writes, each waiting to see the other's write before it writes; a move is
    /// half a round trip. Unavailable (and why) on one usable cpu.
    Figure ping_pong_ns;
    Figure atomic_add_ns;          ///< ns an atomic fetch_add of a counter no other core touches, one after another
    Figure volatile_increment_ns;  ///< ns a volatile increment (load, add, store) of such a counter, one after another
};

struct Profile {
    std::vector<LevelProfile> levels;  ///< L1, L2, L3, memory
    CoreProfile core;
    SharingProfile sharing;
    /// ns between two lines brought into one L1 set: sixteen chases at once over lines one L1 way
    /// apart (all in one set), eight times the set's ways of them, so that every load misses L1 and
    /// L2 serves it. The time model prices a walk's misses to the set of the miss before with it.
    Figure l1_set_refill_ns;
    Figure l3_reach;               ///< bytes: the largest working set the L3 serves at nearer its latency than memory's
    std::size_t vector_bytes = 0;  ///< the width of the vector loads measured
    double probe_seconds = 0;      ///< how long the probe took
    std::string origin;            ///< who measured it: this program, or the run's shared file
    int runs = 0;                  ///< runs of each figure
    /// The prices of the named levels, in order, for the time model: latency, read bandwidth
    /// (L1's with 8-byte loads, the loads themselves; a lower level's with the widest loads, as it
    /// serves whole lines, or with 8-byte loads where those were not measured), loads in flight.
    /// nullopt when one of them lacks a figure.
    [[nodiscard]] std::optional<std::vector<LevelPrice>> prices(const std::vector<std::string>& names) const;
    /// The core's prices for the time model; nullopt without both add latencies.
    [[nodiscard]] std::optional<CorePrice> core_price() const;
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

/// The profile the chapters of one run share. With CACHEBOOK_PROFILE_DIR set (make run, make
/// share), the file profile-KEY.json there, KEY from this machine and build (profile_key): the
/// first program that asks measures it and writes it, the others read it. Without it, a short
/// probe of the program's own (a chapter run alone). Measured or read once a program.
Profile shared_profile();
/// The shared profile of directory `dir`: read from its file for this machine and build, or
/// measured and written there when it has none (or one it cannot read).
Profile shared_profile_in(const std::string& dir);
/// The key of this machine and build: the machine module's description, the compiler, the vector width.
std::string profile_key();
/// The profile as profile_json wrote it. Throws nlohmann::json::exception on another shape.
Profile profile_from_json(const nlohmann::json& j);

/// The widest vector loads this CPU offers the build (64 bytes with AVX-512, 32 with AVX2, else 16).
std::size_t widest_vector_bytes();

/// The profile as the JSON records it (key "profile"): levels [{name, bytes, latency_ns,
/// read_gbs, vector_read_gbs, store_gbs, stream_store_gbs, in_flight, each a value with its spread and source}],
/// core {int_add_ns, fp_add_ns, peak_gflops, the same}, l1_set_refill_ns (the same),
/// l3_reach_bytes (the same), sharing {ping_pong_ns, atomic_add_ns, volatile_increment_ns, the same}, origin,
/// vector_loads ("64 B"), probe_seconds (the runs are in each source); null where not measured.
nlohmann::json profile_json(const Profile& p);

/// One line per level, as make doctor prints it.
std::vector<std::string> profile_lines(const Profile& p);

}  // namespace cachebook
