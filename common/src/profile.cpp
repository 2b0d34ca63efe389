// This machine's profile (profile.hpp): short microbenchmarks of each level, best and spread,
// timed by the thread's CPU clock as the chapters' claims are: on a shared machine it stops
// while the thread waits for a cpu.
#include "cachebook/profile.hpp"

#include <fmt/format.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>

#include "cachebook/chase.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/in_flight.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"

namespace cachebook {

namespace {

constexpr std::size_t kNodeBytes = 64;  // one chase node a line

// Sums every word of `bytes` bytes `passes` times with vector loads of BYTES bytes, four sums
// so the additions do not chain. The target attribute lets the build use wider loads than its
// baseline where the CPU has them (widest_vector_bytes decides at run time).
#define CACHEBOOK_VECTOR_READ(NAME, BYTES, TARGET)                                                 \
    TARGET std::uint64_t NAME(const std::byte* data, std::size_t bytes, std::size_t passes) {      \
        using V = std::uint64_t __attribute__((vector_size(BYTES)));                               \
        const auto* v = reinterpret_cast<const V*>(data);                                          \
        const std::size_t count = bytes / (BYTES);                                                 \
        V s0{}, s1{}, s2{}, s3{};                                                                  \
        for (std::size_t pass = 0; pass < passes; ++pass)                                          \
            for (std::size_t i = 0; i + 4 <= count; i += 4) {                                      \
                s0 += v[i];                                                                        \
                s1 += v[i + 1];                                                                    \
                s2 += v[i + 2];                                                                    \
                s3 += v[i + 3];                                                                    \
            }                                                                                      \
        const V s = s0 + s1 + s2 + s3;                                                             \
        std::uint64_t out = 0;                                                                     \
        for (std::size_t lane = 0; lane < (BYTES) / sizeof(std::uint64_t); ++lane) out += s[lane]; \
        return out;                                                                                \
    }

CACHEBOOK_VECTOR_READ(read_vectors_16, 16, )
#if defined(__x86_64__)
CACHEBOOK_VECTOR_READ(read_vectors_32, 32, __attribute__((target("avx2"))))
CACHEBOOK_VECTOR_READ(read_vectors_64, 64, __attribute__((target("avx512f"))))
#endif
#undef CACHEBOOK_VECTOR_READ

std::uint64_t read_vectors(const std::byte* data, std::size_t bytes, std::size_t passes, std::size_t width) {
#if defined(__x86_64__)
    if (width == 64) return read_vectors_64(data, bytes, passes);
    if (width == 32) return read_vectors_32(data, bytes, passes);
#endif
    (void)width;
    return read_vectors_16(data, bytes, passes);
}

// Writes every word, `passes` times; each value differs, so the compiler cannot call memset
// (whose large fills may skip the read for ownership).
void store_words(std::uint64_t* words, std::size_t count, std::size_t passes) {
    for (std::size_t pass = 0; pass < passes; ++pass)
        for (std::size_t i = 0; i < count; ++i) words[i] = i + pass;
}

// The best of `samples` (lowest when `lower_is_better`) and how far their median strays from it.
Figure figure_of(std::vector<double> samples, bool lower_is_better, std::string source) {
    std::sort(samples.begin(), samples.end());
    const double best = lower_is_better ? samples.front() : samples.back();
    const double median = samples[samples.size() / 2];
    return {best, std::abs(median - best) / best, std::move(source)};
}

// GB/s of `kernel` over `bytes`, one run of at least `min_bytes`, after an untimed pass.
double gbs_of(const std::function<void(std::size_t passes)>& kernel, std::size_t bytes, std::size_t min_bytes) {
    const std::size_t passes = std::max<std::size_t>(1, min_bytes / bytes);
    const double t0 = thread_cpu_seconds();
    kernel(passes);
    return static_cast<double>(bytes * passes) / (thread_cpu_seconds() - t0) / 1e9;
}

struct Probe {
    const PageBuffer& buf;
    std::size_t bytes;
    bool memory;
    int runs;
    std::uint64_t seed;
};

// Lays a chase that visits the nodes of `buf` (`node_bytes` apart) in `order`, the last back to
// the first; returns the first. A random permutation read as a visiting order is a random single
// cycle whose order is known without following it (following 2 M nodes costs a miss each).
const void* link_order(const PageBuffer& buf, const std::vector<std::uint32_t>& order, std::size_t node_bytes) {
    std::byte* base = buf.data();
    for (std::size_t i = 0; i < order.size(); ++i) {
        void* target = base + std::size_t{order[(i + 1) % order.size()]} * node_bytes;
        std::memcpy(base + std::size_t{order[i]} * node_bytes, &target, sizeof target);
    }
    return base + std::size_t{order.front()} * node_bytes;
}

Figure measure_latency(const Probe& p, const std::vector<std::uint32_t>& order, const std::string& pages) {
    const std::size_t nodes = order.size();
    const void* start = link_order(p.buf, order, kNodeBytes);
    const std::size_t hops = p.memory ? 1 << 13 : 1 << 15;
    const std::size_t warmup = p.memory ? 1 << 10 : std::min<std::size_t>(nodes, 1 << 17);
    std::vector<double> ns;
    // One lap more before the first run: a victim L3 is filled only by what L2 evicts.
    const void* at = chase(start, warmup);
    for (int r = 0; r < p.runs; ++r) {  // each run goes on from where the last stopped: new nodes
        at = chase(at, warmup);
        const double t0 = thread_cpu_seconds();
        at = chase(at, hops);
        ns.push_back((thread_cpu_seconds() - t0) / static_cast<double>(hops) * 1e9);
    }
    do_not_optimize(at);
    return figure_of(
        ns, true, fmt::format("a dependent chase over {} on {} pages, best of {}", size_text(p.bytes), pages, p.runs));
}

// ns an access of k chases spaced along the cycle, one run.
double chases_ns(const Probe& p, const std::vector<std::uint32_t>& order, std::size_t k, std::size_t from) {
    std::vector<const void*> chases;
    for (std::uint32_t node : spaced_starts(order, k, from))
        chases.push_back(p.buf.data() + std::size_t{node} * kNodeBytes);
    const std::size_t accesses = p.memory ? 1 << 12 : 1 << 14;
    const std::size_t hops = std::max<std::size_t>(1, accesses / k);
    if (!p.memory) chase_together(chases, std::min<std::size_t>(order.size(), 1 << 17) / k + 1);
    const double t0 = thread_cpu_seconds();
    chase_together(chases, hops);
    const double ns = (thread_cpu_seconds() - t0) / static_cast<double>(hops * k) * 1e9;
    do_not_optimize(chases);
    return ns;
}

// Loads in flight: ns a hop of one chase over the best ns an access of any count of chase_counts
// (the knee of in_flight.hpp), every count once a round. The spread is that of one chase's runs.
// A knee at the largest count is a lower bound, and the source says so.
Figure measure_in_flight(const Probe& p, const std::vector<std::uint32_t>& order) {  // the order link_order laid
    const auto counts = chase_counts();
    std::vector<std::vector<double>> runs_by_k(counts.size());
    for (int r = 0; r < p.runs; ++r)
        for (std::size_t i = 0; i < counts.size(); ++i)
            runs_by_k[i].push_back(chases_ns(p, order, counts[i],
                                             (static_cast<std::size_t>(r) * 7919 + counts[i] * 104729) % order.size()));
    std::vector<double> best;
    for (auto& runs : runs_by_k) best.push_back(*std::min_element(runs.begin(), runs.end()));
    const Knee knee = knee_of(counts, best);
    Figure f = figure_of(runs_by_k[0], true, "");
    // k chases keep at most k loads in flight: a larger ratio means the one chase's runs were all
    // slowed (other programs sharing the L3 on a busy machine), and the count of the best time bounds it.
    const auto at_best = static_cast<double>(
        counts[static_cast<std::size_t>(std::min_element(best.begin(), best.end()) - best.begin())]);
    f.value = std::min(knee.in_flight, at_best);
    f.source = fmt::format("1 to {} chases at once over {}, best of {}: the knee at {} chases{}{}", kMostChases,
                           size_text(p.bytes), p.runs, knee.k,
                           knee.k == kMostChases ? " (the most the probe runs: a lower bound)" : "",
                           knee.in_flight > at_best ? fmt::format(" (one chase {:.1f} times the best: bounded by the "
                                                                  "{:.0f} chases of the best)",
                                                                  knee.in_flight, at_best)
                                                    : "");
    return f;
}

// Writes every word `passes` times with streaming stores, which send the line to memory without
// reading it first (no read for ownership), then waits for them to drain.
#if defined(__x86_64__)
void stream_words(std::uint64_t* words, std::size_t count, std::size_t passes) {
    for (std::size_t pass = 0; pass < passes; ++pass)
        for (std::size_t i = 0; i < count; ++i)
            _mm_stream_si64(reinterpret_cast<long long*>(words + i), static_cast<long long>(i + pass));
    _mm_sfence();
}
#endif

Figure measure_reads(const Probe& p, std::size_t width) {
    const std::size_t min_bytes = std::size_t{1} << 22;
    std::vector<double> gbs;
    const auto* words = reinterpret_cast<const std::uint64_t*>(p.buf.data());
    const std::size_t count = p.bytes / sizeof(std::uint64_t);
    std::uint64_t sink = width == 8 ? read_sum(words, count, 1, 1) : read_vectors(p.buf.data(), p.bytes, 1, width);
    for (int r = 0; r < p.runs; ++r)
        gbs.push_back(gbs_of(
            [&](std::size_t passes) {
                sink +=
                    width == 8 ? read_sum(words, count, 1, passes) : read_vectors(p.buf.data(), p.bytes, passes, width);
            },
            p.bytes, min_bytes));
    do_not_optimize(sink);
    return figure_of(gbs, false,
                     fmt::format("reads of {}-byte words over {}, best of {}", width, size_text(p.bytes), p.runs));
}

// GB/s of `write` over the level's words, best of the probe's runs, after an untimed pass.
// A template, so that each kernel is inlined into its timed loop as it was when called by name.
template <class WriteWords>
Figure measure_writes(const Probe& p, WriteWords write, const std::string& what) {
    auto* words = reinterpret_cast<std::uint64_t*>(p.buf.data());
    const std::size_t count = p.bytes / sizeof(std::uint64_t);
    write(words, count, 1);
    std::vector<double> gbs;
    for (int r = 0; r < p.runs; ++r)
        gbs.push_back(gbs_of([&](std::size_t passes) { write(words, count, passes); }, p.bytes, std::size_t{1} << 22));
    do_not_optimize(words[count / 2]);
    return figure_of(gbs, false,
                     fmt::format("{} of 8-byte words over {}, best of {}", what, size_text(p.bytes), p.runs));
}

Figure measure_stream_stores(const Probe& p) {
#if defined(__x86_64__)
    return measure_writes(
        p, [](std::uint64_t* w, std::size_t count, std::size_t passes) { stream_words(w, count, passes); },
        "streaming stores (movnti)");
#else
    (void)p;
    return {std::nullopt, 0, "not measured: the probe has streaming stores for x86-64 only"};
#endif
}

LevelProfile measure_level(const std::string& name, const Probe& p, std::size_t width, const std::string& pages) {
    LevelProfile l;
    l.name = name;
    l.bytes = p.bytes;
    const auto order = random_permutation(p.bytes / kNodeBytes, p.seed);
    l.latency_ns = measure_latency(p, order, pages);  // lays the chase the next one follows
    l.in_flight = measure_in_flight(p, order);
    l.read_gbs = measure_reads(p, 8);
    l.vector_read_gbs = measure_reads(p, width);
    l.store_gbs = measure_writes(  // last two: they overwrite the chase
        p, [](std::uint64_t* w, std::size_t count, std::size_t passes) { store_words(w, count, passes); }, "stores");
    l.stream_store_gbs = measure_stream_stores(p);
    return l;
}

// ns a hop of a dependent chase over `bytes`, after one whole lap, best of `runs` runs that go on
// from where the last stopped: what a level of that working set costs when it has held the whole
// set once.
double lap_latency(const PageBuffer& buf, std::size_t bytes, std::uint64_t seed, int runs) {
    const std::size_t hops = 1 << 13;
    const void* at = link_order(buf, random_permutation(bytes / kNodeBytes, seed), kNodeBytes);
    at = chase(at, bytes / kNodeBytes);
    double best = 1e300;
    for (int r = 0; r < runs; ++r) {
        const double t0 = thread_cpu_seconds();
        at = chase(at, hops);
        best = std::min(best, (thread_cpu_seconds() - t0) / static_cast<double>(hops) * 1e9);
    }
    do_not_optimize(at);
    return best;
}

// The core's own work: loops of adds with no load in them, so nothing but the core is timed.

// `adds` integer adds in one chain. The empty asm after each says x may have changed: the
// compiler must do every add in turn, and cannot fold them into one multiply.
#define CACHEBOOK_CHAINED_ADD \
    x += step;                \
    __asm__("" : "+r"(x));
std::uint64_t int_add_chain(std::uint64_t x, std::uint64_t step, std::size_t adds) {
    for (std::size_t i = 0; i < adds; i += 8) {
        CACHEBOOK_CHAINED_ADD CACHEBOOK_CHAINED_ADD CACHEBOOK_CHAINED_ADD CACHEBOOK_CHAINED_ADD CACHEBOOK_CHAINED_ADD
            CACHEBOOK_CHAINED_ADD CACHEBOOK_CHAINED_ADD CACHEBOOK_CHAINED_ADD
    }
    return x;
}
#undef CACHEBOOK_CHAINED_ADD

// `adds` double adds in one chain: without -ffast-math the compiler keeps their order, so each
// waits for the one before (addsd, as the sums of the matrix products compile to).
double fp_add_chain(double x, double step, std::size_t adds) {
    for (std::size_t i = 0; i < adds; i += 4) {
        x += step;
        x += step;
        x += step;
        x += step;
    }
    return x;
}

// Twelve chains of fused multiply-adds over the widest vectors: more chains than FMA units times
// their latency on the cores of today (two units, four cycles), so the units, not a chain, set the
// pace. Returns the double flops done (two a lane of each multiply-add) through `flops`.
constexpr int kFmaChains = 12;
// One width's chains, with its intrinsics: the vector type, its lanes, and set1, fmadd, storeu.
#define CACHEBOOK_FMA_CHAINS(NAME, TARGET, VEC, LANES, SET1, FMADD, STOREU)            \
    TARGET double NAME(std::size_t steps, double& flops) {                             \
        VEC acc[kFmaChains];                                                           \
        for (auto& a : acc) a = SET1(1.0);                                             \
        const VEC m = SET1(0.999999), add = SET1(1e-3);                                \
        for (std::size_t s = 0; s < steps; ++s)                                        \
            for (auto& a : acc) a = FMADD(a, m, add);                                  \
        double lanes[(LANES)*kFmaChains]; /* not reduced by intrinsic: GCC 12 warns */ \
        for (int k = 0; k < kFmaChains; ++k) STOREU(lanes + (LANES)*k, acc[k]);        \
        double out = 0;                                                                \
        for (double v : lanes) out += v;                                               \
        flops = 2.0 * (LANES)*kFmaChains * static_cast<double>(steps);                 \
        return out;                                                                    \
    }
#if defined(__x86_64__)
CACHEBOOK_FMA_CHAINS(fma_chains_64, __attribute__((target("avx512f"))), __m512d, 8, _mm512_set1_pd, _mm512_fmadd_pd,
                     _mm512_storeu_pd)
CACHEBOOK_FMA_CHAINS(fma_chains_32, __attribute__((target("avx2,fma"))), __m256d, 4, _mm256_set1_pd, _mm256_fmadd_pd,
                     _mm256_storeu_pd)
#endif
#undef CACHEBOOK_FMA_CHAINS
// Without FMA: a multiply and an add of 16-byte vectors, two flops a lane as well.
double fma_chains_16(std::size_t steps, double& flops) {
    using V = double __attribute__((vector_size(16)));
    V acc[kFmaChains];
    for (auto& a : acc) a = V{1.0, 1.0};
    const V m = {0.999999, 0.999999}, add = {1e-3, 1e-3};
    for (std::size_t s = 0; s < steps; ++s)
        for (auto& a : acc) a = a * m + add;
    double out = 0;
    for (auto& a : acc) out += a[0] + a[1];
    flops = 2.0 * 2 * kFmaChains * static_cast<double>(steps);
    return out;
}

double fma_chains(std::size_t width, std::size_t steps, double& flops) {
#if defined(__x86_64__)
    if (width == 64) return fma_chains_64(steps, flops);
    if (width == 32 && cpu_features().fma) return fma_chains_32(steps, flops);
#endif
    (void)width;
    return fma_chains_16(steps, flops);
}

// ns a unit of `run(units)`, best of `runs`, after one untimed run.
Figure ns_per_unit(const std::function<void(std::size_t)>& run, std::size_t units, int runs, std::string source) {
    run(units / 8);
    std::vector<double> ns;
    for (int r = 0; r < runs; ++r) {
        const double t0 = thread_cpu_seconds();
        run(units);
        ns.push_back((thread_cpu_seconds() - t0) / static_cast<double>(units) * 1e9);
    }
    return figure_of(ns, true, std::move(source));
}

CoreProfile measure_core(std::size_t width, int runs) {
    constexpr std::size_t kAdds = std::size_t{1} << 22;
    CoreProfile c;
    std::uint64_t int_sink = 0;
    double fp_sink = 0;
    c.int_add_ns = ns_per_unit([&](std::size_t adds) { int_sink += int_add_chain(int_sink, 3, adds); }, kAdds, runs,
                               fmt::format("a chain of {} dependent integer adds, best of {}", kAdds, runs));
    c.fp_add_ns = ns_per_unit([&](std::size_t adds) { fp_sink += fp_add_chain(fp_sink, 1e-9, adds); }, kAdds, runs,
                              fmt::format("a chain of {} dependent double adds, best of {}", kAdds, runs));
    constexpr std::size_t kSteps = std::size_t{1} << 18;
    double flops = 0;
    std::vector<double> gflops;
    fp_sink += fma_chains(width, kSteps / 8, flops);
    for (int r = 0; r < runs; ++r) {
        const double t0 = thread_cpu_seconds();
        fp_sink += fma_chains(width, kSteps, flops);
        gflops.push_back(flops / (thread_cpu_seconds() - t0) / 1e9);
    }
    c.peak_gflops = figure_of(gflops, false,
                              fmt::format("{} chains of {}-byte {} of doubles, best of {}", kFmaChains, width,
                                          width >= 32 ? "fused multiply-adds" : "multiplies and adds", runs));
    do_not_optimize(int_sink);
    do_not_optimize(fp_sink);
    return c;
}

// ns between refills of one L1 set: kMaxChases chases at once over 8 x ways lines one way of the L1
// apart (sets x line bytes: the same set, on pages at least that large), best ns an access of
// `runs`. Eight times the ways, so that no replacement policy keeps a share of them (at four times
// the ways some loads still hit); few enough for L2 to hold them all.
Figure measure_set_refill(const PageBuffer& buf, const std::optional<CacheInfo>& l1, int runs) {
    Figure f;
    if (!l1 || l1->size_bytes == 0 || l1->ways == 0 || l1->line_bytes == 0) {
        f.source = "not measured: " + machine().why_unknown("the L1d's size, ways or line size");
        return f;
    }
    const std::size_t way_bytes = l1->size_bytes / l1->ways, nodes = 8 * l1->ways;
    if (nodes * way_bytes > buf.size() || nodes < kMaxChases) {
        f.source = "not measured: the L1d's ways too few or its ways too large for the probe's buffer";
        return f;
    }
    const auto order = random_permutation(nodes, 7);
    link_order(buf, order, way_bytes);
    std::vector<const void*> chases;
    for (std::uint32_t node : spaced_starts(order, kMaxChases))
        chases.push_back(buf.data() + std::size_t{node} * way_bytes);
    const std::size_t hops = (std::size_t{1} << 14) / kMaxChases;
    chase_together(chases, hops);
    std::vector<double> ns;
    for (int r = 0; r < runs; ++r) {
        const double t0 = thread_cpu_seconds();
        chase_together(chases, hops);
        ns.push_back((thread_cpu_seconds() - t0) / static_cast<double>(hops * kMaxChases) * 1e9);
    }
    do_not_optimize(chases);
    return figure_of(ns, true,
                     fmt::format("{} chases at once over {} lines {} apart (one L1 set), best of {}", kMaxChases, nodes,
                                 size_text(way_bytes), runs));
}

// What writes to one line cost: bounced between two cores, or kept by one.

// A run of the ping-pong: this many round trips, about ten microseconds at 50 ns a move, short
// enough that on a busy machine some runs fall where both threads have their cpus at once.
constexpr std::uint64_t kRoundTrips = 100;
// The probe stops once this much time has passed: on a busy machine both threads may seldom run at once.
constexpr double kPingPongSeconds = 0.2;

// The bounced line, and the stop flag on a line of its own: two lines apart, so that a prefetcher
// that fetches lines in pairs never brings the flag along with the bounced line.
struct PingPong {
    alignas(128) std::atomic<std::uint64_t> turn{0};
    alignas(128) std::atomic<bool> stop{false};
};

// Spins until the line holds `value`; false once the flag is up or `deadline` has passed, both
// read only every 4096 spins, so that the wait is a plain load of the line.
bool wait_for(const PingPong& p, std::uint64_t value, Clock::time_point deadline) {
    for (std::uint32_t spins = 1;; ++spins) {
        if (p.turn.load(std::memory_order_acquire) == value) return true;
        if (spins % 4096 == 0 && (p.stop.load(std::memory_order_relaxed) || Clock::now() > deadline)) return false;
    }
}

// The answering thread: waits for each odd value and writes the next even one, until stopped.
void answer(PingPong& p, Clock::time_point deadline) {
    for (std::uint64_t v = 1; wait_for(p, v, deadline); v += 2) p.turn.store(v + 1, std::memory_order_release);
}

// The timing thread: writes each odd value and waits for the answer. Returns ns a move (half a
// round trip) of each run of kRoundTrips round trips, after one untimed run, until `runs` runs
// or the deadline; then stops the other thread.
std::vector<double> serve(PingPong& p, int runs, Clock::time_point deadline) {
    std::vector<double> ns;
    std::uint64_t v = 0;
    bool going = true;
    for (int r = -1; going && r < runs; ++r) {
        const auto start = Clock::now();
        for (std::uint64_t i = 0; going && i < kRoundTrips; ++i) {
            p.turn.store(v + 1, std::memory_order_release);
            v += 2;
            going = wait_for(p, v, deadline);
        }
        if (going && r >= 0) ns.push_back(seconds_since(start) * 1e9 / (2.0 * static_cast<double>(kRoundTrips)));
    }
    p.stop.store(true, std::memory_order_relaxed);
    return ns;
}

// Two threads, pinned to the first two usable cpus, bounce one line: the best ns a move of
// `runs` runs, timed by the wall clock (both threads spin: their CPU clocks run whether or not
// the line moves). On one usable cpu the two would take turns a time slice long: unavailable.
Figure measure_ping_pong(int runs) {
    if (usable_cpus() < 2)
        return {std::nullopt, 0,
                "unavailable: this process may use one cpu, where two threads take turns a time slice long and the "
                "line never leaves the core"};
    const int cpus[2] = {nth_usable_cpu(0), nth_usable_cpu(1)};
    auto p = std::make_unique<PingPong>();
    std::atomic<int> ready{0}, pinned{0};
    std::vector<double> ns;
    const auto after = [](double seconds) {
        return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    };
    const auto start_together = [&](int me) {
        if (pin_to_cpu(cpus[me])) pinned.fetch_add(1);
        ready.fetch_add(1);
        while (ready.load() < 2) std::this_thread::yield();
    };
    std::thread answering([&] {
        start_together(1);
        answer(*p, after(1 + kPingPongSeconds));  // stopped by the timing thread well before
    });
    std::thread timing([&] {
        start_together(0);
        if (pinned.load() == 2) ns = serve(*p, runs, after(kPingPongSeconds));  // from when both are pinned
        p->stop.store(true, std::memory_order_relaxed);
    });
    timing.join();
    answering.join();
    if (pinned.load() != 2) return {std::nullopt, 0, "unavailable: a thread could not be pinned to its cpu"};
    if (ns.empty())
        return {std::nullopt, 0,
                fmt::format("unavailable: the two threads did not run at once for a whole run within {:.1f} s (a busy "
                            "machine)",
                            kPingPongSeconds)};
    const int timed = static_cast<int>(ns.size());
    return figure_of(
        std::move(ns), true,
        fmt::format(
            "two threads on cpus {} and {} bounce one line by atomic writes, {} round trips a "
            "run, best of {}{}",
            cpus[0], cpus[1], kRoundTrips, timed,
            timed < runs ? fmt::format(" ({} asked: the rest did not fit in {:.1f} s)", runs, kPingPongSeconds) : ""));
}

// The core's own work of an increment, on a counter no other core touches (chapter 6's races
// pay it besides the line's moves): an atomic add, and a volatile load, add and store.
void atomic_adds(std::atomic<long>& counter, std::size_t adds) {
    for (std::size_t i = 0; i < adds; ++i) counter.fetch_add(1, std::memory_order_relaxed);
}
void volatile_increments(volatile long* counter, std::size_t increments) {
    for (std::size_t i = 0; i < increments; ++i) *counter = *counter + 1;
}

SharingProfile measure_sharing(int runs) {
    constexpr std::size_t kIncrements = std::size_t{1} << 20;
    SharingProfile s;
    s.ping_pong_ns = measure_ping_pong(10 * runs);
    std::atomic<long> atomic_counter{0};
    volatile long volatile_counter = 0;
    s.atomic_add_ns = ns_per_unit(
        [&](std::size_t n) { atomic_adds(atomic_counter, n); }, kIncrements, runs,
        fmt::format("{} atomic fetch_adds of one counter no other core touches, best of {}", kIncrements, runs));
    s.volatile_increment_ns = ns_per_unit(
        [&](std::size_t n) { volatile_increments(&volatile_counter, n); }, kIncrements, runs,
        fmt::format("{} volatile increments of one counter no other core touches, best of {}", kIncrements, runs));
    do_not_optimize(atomic_counter.load());
    return s;
}

// How far the L3 serves: working sets doubling from twice the L3 probe's to half the memory
// probe's, each chased after a whole lap (best of `runs`); the largest before the first whose
// latency reaches the geometric mean of the L3's and memory's. A machine may report a whole
// socket's L3, of which a guest, or a program among others, holds a share.
Figure measure_l3_reach(const PageBuffer& buf, const LevelProfile& l3, const LevelProfile& memory, int runs) {
    Figure f;
    if (!l3.latency_ns.value || !memory.latency_ns.value) {
        f.source = "not measured: the L3's or memory's latency is unknown";
        return f;
    }
    const double midpoint = std::sqrt(*l3.latency_ns.value * *memory.latency_ns.value);
    std::size_t reach = l3.bytes;
    for (std::size_t bytes = 2 * l3.bytes; bytes <= memory.bytes / 2; bytes *= 2) {
        if (lap_latency(buf, bytes, 100, runs) >= midpoint) break;
        reach = bytes;
    }
    f.value = static_cast<double>(reach);
    f.source = fmt::format(
        "dependent chases over {} to {} after a whole lap, best of {}: the largest below {:.1f} ns, between the L3's "
        "latency and memory's",
        size_text(2 * l3.bytes), size_text(memory.bytes / 2), runs, midpoint);
    return f;
}

}  // namespace

std::size_t widest_vector_bytes() {
    const CpuFeatures f = cpu_features();
    return f.avx512f ? 64 : f.avx2 ? 32 : 16;
}

Profile measure_profile(const ProfileOptions& options) {
    return measure_profile(level_sizes_of_this_machine(), options);
}

Profile measure_profile(const LevelSizes& sizes, const ProfileOptions& options) {
    if (options.runs < 1) throw std::invalid_argument("measure_profile: one run or more");
    const auto started = Clock::now();
    Profile profile;
    profile.vector_bytes = widest_vector_bytes();
    profile.runs = options.runs;
    const std::pair<const char*, std::size_t> levels[] = {
        {"L1", sizes.l1}, {"L2", sizes.l2}, {"L3", sizes.l3}, {"memory", sizes.memory}};
    std::size_t largest = 0;
    for (const auto& [name, bytes] : levels) largest = std::max(largest, bytes);
    const PageBuffer buf(std::max(largest, kNodeBytes * kMostChases), PageSize::Huge);
    const std::string pages = buf.huge_page_bytes() > 0 ? "huge" : "4 KiB";
    std::uint64_t seed = 1;
    for (const auto& [name, bytes] : levels) {
        if (bytes < kNodeBytes * kMostChases) {
            LevelProfile l;
            l.name = name;
            const std::string why = "not measured: " + machine().why_unknown(std::string(name) + "'s size");
            l.latency_ns.source = l.read_gbs.source = l.vector_read_gbs.source = l.store_gbs.source =
                l.stream_store_gbs.source = l.in_flight.source = why;
            profile.levels.push_back(l);
            continue;
        }
        profile.levels.push_back(measure_level(name, {buf, bytes, name == std::string("memory"), options.runs, seed++},
                                               profile.vector_bytes, pages));
    }
    const LevelProfile *l3 = profile.level("L3"), *memory = profile.level("memory");
    profile.l3_reach = measure_l3_reach(buf, *l3, *memory, std::min(options.runs, 2));
    profile.core = measure_core(profile.vector_bytes, options.runs);
    profile.l1_set_refill_ns = measure_set_refill(buf, machine().data_cache(1), options.runs);
    profile.sharing = measure_sharing(options.runs);
    profile.probe_seconds = seconds_since(started);
    return profile;
}

const LevelProfile* Profile::level(const std::string& name) const {
    for (const auto& l : levels)
        if (l.name == name) return &l;
    return nullptr;
}

std::optional<CorePrice> Profile::core_price() const {
    if (!core.int_add_ns.value || !core.fp_add_ns.value) return std::nullopt;
    return CorePrice{*core.int_add_ns.value, *core.fp_add_ns.value};
}

std::optional<std::vector<LevelPrice>> Profile::prices(const std::vector<std::string>& names) const {
    std::vector<LevelPrice> out;
    for (const auto& name : names) {
        const LevelProfile* l = level(name);
        if (l == nullptr || !l->latency_ns.value || !l->read_gbs.value || !l->in_flight.value) return std::nullopt;
        // L1 serves the loads themselves, 8 bytes or so each; a level below it serves whole lines,
        // which the widest loads measure without the load ports in the way.
        const bool lines = name != "L1" && l->vector_read_gbs.value;
        out.push_back({name, *l->latency_ns.value, lines ? *l->vector_read_gbs.value : *l->read_gbs.value,
                       std::max(1.0, *l->in_flight.value), name == "L1" ? l1_set_refill_ns.value.value_or(0) : 0});
    }
    return out;
}

namespace {

nlohmann::json figure_json(const Figure& f) {
    return {{"value", f.value ? nlohmann::json(*f.value) : nlohmann::json()},
            {"spread", f.value ? nlohmann::json(f.spread) : nlohmann::json()},
            {"source", f.source}};
}

std::string figure_text(const Figure& f, const char* format) {
    if (!f.value) return "-";
    return fmt::format(fmt::runtime(format), *f.value) + fmt::format(" (±{:.0f}%)", 100 * f.spread);
}

// "lines  moved between two cores in 61.2 ns (±3%) (how); an atomic add ..., a volatile increment ...".
std::string sharing_line(const SharingProfile& s) {
    const std::string moved = s.ping_pong_ns.value
                                  ? "moved between two cores in " + figure_text(s.ping_pong_ns, "{:.1f} ns") + " (" +
                                        s.ping_pong_ns.source + ")"
                                  : "moved between two cores: " + s.ping_pong_ns.source;
    return fmt::format("{:<6} {}; an atomic add {}, a volatile increment {} (each of a line one core has alone)",
                       "lines", moved, figure_text(s.atomic_add_ns, "{:.2f} ns"),
                       figure_text(s.volatile_increment_ns, "{:.2f} ns"));
}

}  // namespace

nlohmann::json profile_json(const Profile& p) {
    nlohmann::json levels = nlohmann::json::array();
    for (const auto& l : p.levels)
        levels.push_back({{"name", l.name},
                          {"bytes", l.bytes},
                          {"latency_ns", figure_json(l.latency_ns)},
                          {"read_gbs", figure_json(l.read_gbs)},
                          {"vector_read_gbs", figure_json(l.vector_read_gbs)},
                          {"store_gbs", figure_json(l.store_gbs)},
                          {"stream_store_gbs", figure_json(l.stream_store_gbs)},
                          {"in_flight", figure_json(l.in_flight)}});
    // The width as text: a whole number here would read, to the typed-number check, as one the prose must substitute.
    return {{"levels", levels},
            {"core",
             {{"int_add_ns", figure_json(p.core.int_add_ns)},
              {"fp_add_ns", figure_json(p.core.fp_add_ns)},
              {"peak_gflops", figure_json(p.core.peak_gflops)}}},
            {"l1_set_refill_ns", figure_json(p.l1_set_refill_ns)},
            {"l3_reach_bytes", figure_json(p.l3_reach)},
            {"sharing",
             {{"ping_pong_ns", figure_json(p.sharing.ping_pong_ns)},
              {"atomic_add_ns", figure_json(p.sharing.atomic_add_ns)},
              {"volatile_increment_ns", figure_json(p.sharing.volatile_increment_ns)}}},
            {"origin", p.origin},
            {"vector_loads", fmt::format("{} B", p.vector_bytes)},
            {"probe_seconds", p.probe_seconds}};
}

std::vector<std::string> profile_lines(const Profile& p) {
    std::vector<std::string> lines;
    for (const auto& l : p.levels) {
        if (!l.latency_ns.value) {
            lines.push_back(fmt::format("{:<6} {}", l.name, l.latency_ns.source));
            continue;
        }
        lines.push_back(fmt::format(
            "{:<6} {:>9}: latency {}, {} in flight; reads {} (8 B), {} ({} B); stores {}, {} streaming", l.name,
            size_text(l.bytes), figure_text(l.latency_ns, "{:.2f} ns"), figure_text(l.in_flight, "{:.1f}"),
            figure_text(l.read_gbs, "{:.1f} GB/s"), figure_text(l.vector_read_gbs, "{:.1f} GB/s"), p.vector_bytes,
            figure_text(l.store_gbs, "{:.1f} GB/s"), figure_text(l.stream_store_gbs, "{:.1f} GB/s")));
    }
    lines.push_back(fmt::format("{:<6} an integer add {}, a double add {} (each of one dependent chain); peak {}",
                                "core", figure_text(p.core.int_add_ns, "{:.3f} ns"),
                                figure_text(p.core.fp_add_ns, "{:.3f} ns"),
                                figure_text(p.core.peak_gflops, "{:.1f} GFLOPS")));
    lines.push_back(fmt::format("{:<6} one L1 set refilled every {} ({})", "set",
                                figure_text(p.l1_set_refill_ns, "{:.2f} ns"), p.l1_set_refill_ns.source));
    lines.push_back(sharing_line(p.sharing));
    lines.push_back(fmt::format("{:<6} {}", "reach",
                                p.l3_reach.value
                                    ? "the L3 serves up to " + size_text(static_cast<std::size_t>(*p.l3_reach.value)) +
                                          " (" + p.l3_reach.source + ")"
                                    : p.l3_reach.source));
    return lines;
}

}  // namespace cachebook
