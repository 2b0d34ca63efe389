#pragma once
/// @file cpu_time.hpp
/// @brief The calling thread's own CPU clock, for single-threaded kernels on a busy machine.
///
/// steady_clock measures what a user waits for, and stays the book's clock.
/// On a machine shared with other work, though, a run of a few tens of
/// milliseconds rarely gets a CPU to itself: the wall clock then also counts
/// the time the thread sat waiting to be scheduled, and even the minimum of
/// several runs can be far off. The thread's CPU clock stops while it waits,
/// and keeps counting while it stalls on memory, which is what a cache
/// experiment measures. Use it for one thread only: for several threads,
/// chapter 7 shows why a CPU clock misleads.

#include <time.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "cachebook/measure.hpp"

namespace cachebook {

/// CPU time consumed so far by the calling thread, in seconds (CLOCK_THREAD_CPUTIME_ID).
inline double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// As time_runs(), but each run is timed by the calling thread's CPU clock.
template <class F>
Timing time_runs_thread_cpu(int runs, F&& f, int warmup = 1) {
    for (int i = 0; i < warmup; ++i) f();
    Timing t;
    t.runs.reserve(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) {
        const double start = thread_cpu_seconds();
        f();
        t.runs.push_back(thread_cpu_seconds() - start);
    }
    return t;
}

/// The share of one CPU the calling thread gets over about `seconds` of busy
/// work: its CPU time over the wall time. Near 1 on an idle machine.
inline double cpu_share(double seconds = 0.05) {
    const double cpu_start = thread_cpu_seconds();
    const auto wall_start = Clock::now();
    volatile double x = 1.0;
    while (seconds_since(wall_start) < seconds)
        for (int i = 0; i < 10000; ++i) x = x * 0.999999 + 1e-7;
    return (thread_cpu_seconds() - cpu_start) / seconds_since(wall_start);
}

/// The share of a CPU that each of `threads` busy threads, run at once, gets over `seconds`,
/// one per thread: near 1 when that many CPUs are free, lower when other programs run on them
/// (and may be using memory bandwidth too) or when two of the threads share one core. It first
/// waits for this process's other threads to go idle (wait_for_idle_threads).
inline std::vector<double> cpu_shares_each(int threads, double seconds = 0.05) {
    wait_for_idle_threads(1.0);  // this process's own spinning threads are not other programs
    std::vector<double> share(static_cast<std::size_t>(std::max(threads, 1)));
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < share.size(); ++t)
        pool.emplace_back([&share, t, seconds] { share[t] = cpu_share(seconds); });
    share[0] = cpu_share(seconds);
    for (auto& th : pool) th.join();
    return share;
}

/// The smallest of cpu_shares_each(threads, seconds).
inline double cpu_shares(int threads, double seconds = 0.05) {
    const auto share = cpu_shares_each(threads, seconds);
    return *std::min_element(share.begin(), share.end());
}

}  // namespace cachebook
