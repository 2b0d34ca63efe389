#pragma once
/// @file perf_counters.hpp
/// @brief Hardware counters, the two ways the book reads them, and why a machine has none: in
/// this process with perf_event_open (chapter 6, around a race of threads), and from the `perf
/// stat` tool run as a child (chapter 7, around a walk). Many virtual machines expose no
/// hardware events at all; every function here then says why, in one line, and never fails.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace cachebook {

// ---- In this process: perf_event_open -------------------------------------------------------

/// The two events of `perf stat -e cache-misses,LLC-load-misses`, counted in this process (user
/// space, threads included) with perf_event_open.
struct CounterReading {
    bool available = false;
    std::string why_not;  ///< when not available: the reason, in one line
    std::uint64_t cache_misses = 0, llc_load_misses = 0;
};
/// Counts both events while `work` runs; `available` false (with the reason) where the kernel or
/// the machine has no such counters. `work` runs either way.
CounterReading count_misses(const std::function<void()>& work);
/// The reason perf_event_open failed with `err` (an errno), in one line; `paranoid` is
/// kernel.perf_event_paranoid.
std::string why_no_counters(int err, int paranoid);

// ---- From the perf tool: perf stat as a child process ----------------------------------------

enum class PerfState { NotInstalled, NoPermission, NotSupported, Works };
std::string_view perf_state_name(PerfState s);
/// Reads the output of `perf stat -x, -e EVENT -- true` (stderr) and its exit status.
PerfState parse_perf_probe(const std::string& output, int status);
/// That probe run on this machine for an event.
struct PerfProbe {
    PerfState state = PerfState::NotInstalled;
    std::string detail;  ///< the line perf printed about the event
};
PerfProbe probe_perf(const std::string& event = "cache-misses");
/// The count of `event` in perf's -x, output, if there is one.
std::optional<std::uint64_t> parse_perf_count(const std::string& output, const std::string& event);

}  // namespace cachebook
