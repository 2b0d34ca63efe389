#pragma once
/// @file measure.hpp
/// @brief Timing done the way chapter 7 teaches: the clock, runs and their minimum,
/// do_not_optimize, the one clock-speed estimate and the one command runner.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cachebook {

/// The clock of every measurement: monotonic, never adjusted.
using Clock = std::chrono::steady_clock;

/// Keeps the compiler from deleting the computation of `value`.
template <class T>
inline void do_not_optimize(const T& value) {
    asm volatile("" : : "r,m"(value) : "memory");
}

/// Keeps the compiler from moving or dropping memory writes across this point.
inline void clobber_memory() {
    asm volatile("" : : : "memory");
}

/// Seconds elapsed since `start`.
inline double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The runs of one measurement, in seconds.
struct Timing {
    std::vector<double> runs;  ///< every timed run, in the order run
    [[nodiscard]] double min() const { return runs.empty() ? 0.0 : *std::min_element(runs.begin(), runs.end()); }
    [[nodiscard]] double max() const { return runs.empty() ? 0.0 : *std::max_element(runs.begin(), runs.end()); }
    [[nodiscard]] double median() const;
};

/// Calls `f` `warmup` times untimed, then `runs` times timed; returns every run.
/// The minimum is the figure to report: noise only ever adds time.
template <class F>
Timing time_runs(int runs, F&& f, int warmup = 1) {
    for (int i = 0; i < warmup; ++i) f();
    Timing t;
    t.runs.reserve(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) {
        const auto start = Clock::now();
        f();
        t.runs.push_back(seconds_since(start));
    }
    return t;
}

/// GHz of the core now, from a chain of dependent integer adds (one cycle each on every
/// x86-64 and AArch64 core): the fastest of at least ten short attempts, made for about
/// `seconds` in all. nullopt on other instruction sets.
std::optional<double> estimate_clock_ghz(double seconds);

/// Waits until no other thread of this process is running, at most `limit_seconds`; true when
/// they all were idle. A BLAS library's worker threads spin for a while after each call
/// (OpenBLAS for 2^28 cycles, 0.13 s at 2.1 GHz), and a spinning thread takes half a core from
/// whatever is timed next. Without /proc (not Linux) it pauses for `limit_seconds` and says false.
bool wait_for_idle_threads(double limit_seconds);

/// What a shell command printed on stdout, and its exit status (-1 when it did not run or
/// was killed by a signal). Add " 2>&1" to the command to capture stderr too.
struct CommandResult {
    int status = -1;
    std::string output;
};
CommandResult run_command(const std::string& command);

/// True when CACHEBOOK_GOLDEN=1: measured values print as a placeholder.
bool golden_mode();

/// What a measured value prints as in golden mode.
inline constexpr std::string_view kMeasuredPlaceholder = "<measured>";

/// A progress line on stderr for long runs, shown only on a terminal (or with
/// CACHEBOOK_PROGRESS=1), so that stdout and logs stay clean.
class Progress {
public:
    explicit Progress(std::string task, std::size_t steps);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    /// Marks one more step done, with a short note of what it was.
    void step(std::string_view note = {});

private:
    std::string task_;
    std::size_t steps_, done_ = 0;
    bool enabled_;
};

}  // namespace cachebook
