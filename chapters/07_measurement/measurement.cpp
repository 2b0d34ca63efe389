// Chapter 7's lesson, shown whole on its page: each rule of measuring as code.
#include "measurement.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <stdexcept>
#include <thread>

#include "cachebook/chase.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/trace.hpp"

namespace ch07 {

// [snippet: clocks]
namespace {
// A dependent chain of multiply-adds: CPU work that touches no memory.
double spin(std::uint64_t iterations, double start) {
    double x = start;
    for (std::uint64_t i = 0; i < iterations; ++i) x = x * 0.999999 + 1e-7;
    return x;
}
}  // namespace

void split_work(int count, std::uint64_t work) {
    std::vector<double> results(static_cast<std::size_t>(count));
    std::vector<std::thread> pool;
    for (int t = 0; t < count; ++t)
        pool.emplace_back([&, t] { results[static_cast<std::size_t>(t)] = spin(work / count, 1.0 + t); });
    for (auto& th : pool) th.join();
    cachebook::do_not_optimize(results);
}

double wall_seconds() {  // time on the wall
    return std::chrono::duration<double>(cachebook::Clock::now().time_since_epoch()).count();
}

double process_cpu_seconds() {  // CPU time of the process: every thread's time added
    return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}
// [end: clocks]

// [snippet: first_touch]
namespace {
std::uint64_t minor_faults() {  // page faults served without reading a disk, so far
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<std::uint64_t>(u.ru_minflt);
}
}  // namespace

FreshPages::FreshPages(std::size_t bytes) : bytes_(bytes) {
    // Fresh pages straight from the OS, as a large malloc or new gets them: none present yet.
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error(fmt::format("cannot map {} bytes", bytes));
    words_ = static_cast<std::int64_t*>(p);
}

FreshPages::~FreshPages() {
    munmap(words_, bytes_);
}

std::uint64_t FreshPages::fill(std::int64_t v) {
    const std::uint64_t faults = minor_faults();
    for (std::size_t i = 0; i < bytes_ / sizeof(std::int64_t); ++i) words_[i] = v;  // a page's first write faults
    cachebook::clobber_memory();
    return minor_faults() - faults;
}
// [end: first_touch]

// [snippet: dead_code]
void sum_thrown_away(const int* a, std::size_t count) {
    std::int64_t s = 0;
    for (std::size_t i = 0; i < count; ++i) s += a[i];
    (void)s;  // the result goes nowhere, so the compiler may drop the whole loop
}

std::int64_t sum_kept(const int* a, std::size_t count) {
    std::int64_t s = 0;
    for (std::size_t i = 0; i < count; ++i) s += a[i];
    cachebook::do_not_optimize(s);  // the compiler must produce s: the loop stays
    return s;
}
// [end: dead_code]

// [snippet: latency]
Slots make_slots(std::size_t bytes) {
    const std::size_t n = std::max<std::size_t>(2, bytes / sizeof(Slot));
    Slots s{std::vector<Slot>(n), std::vector<std::uint32_t>(n)};
    const auto cycle = cachebook::single_cycle(n, 3);
    for (std::size_t i = 0; i < n; ++i) s.slots[i] = Slot{cycle[i], static_cast<std::uint32_t>(i % 7)};
    for (std::size_t k = 0, i = 0; k < n; ++k, i = cycle[i]) s.order[k] = static_cast<std::uint32_t>(i);
    return s;
}

std::uint64_t strided_sum(const Slots& s, std::size_t hops) {  // independent loads, addresses in order
    std::uint64_t sum = 0;
    for (std::size_t h = 0, i = 0; h < hops; ++h, i = i + 1 == s.slots.size() ? 0 : i + 1) sum += s.slots[i].value;
    return sum;
}

std::uint64_t gather_sum(const Slots& s, std::size_t hops) {  // random order, but every address known in advance
    std::uint64_t sum = 0;
    for (std::size_t h = 0, k = 0; h < hops; ++h, k = k + 1 == s.order.size() ? 0 : k + 1)
        sum += s.slots[s.order[k]].value;
    return sum;
}

std::uint32_t chase(const Slots& s, std::size_t hops) {  // each address comes out of the previous load
    std::uint32_t i = 0;
    for (std::size_t h = 0; h < hops; ++h) i = s.slots[i].next;
    return i;
}
// [end: latency]

// [snippet: simulate_walks]
SimulatedWalks simulate_walks(const cachebook::CacheConfig& config, std::size_t n) {
    SimulatedWalks walks;
    walks.row_misses = cachebook::simulate(config, cachebook::row_major_trace(n, sizeof(int))).misses;
    walks.column_misses = cachebook::simulate(config, cachebook::col_major_trace(n, sizeof(int))).misses;
    walks.accesses = static_cast<std::uint64_t>(n) * n;
    return walks;
}
// [end: simulate_walks]

// [snippet: cachegrind]
std::string cachegrind_d1_flag(const cachebook::CacheConfig& config) {
    return fmt::format("--D1={},{},{}", config.capacity_bytes(), config.ways, config.line_bytes);
}

std::string cachegrind_command(const cachebook::CacheConfig& d1) {
    // I1 gets the same geometry and LL a fixed one, so that cachegrind never guesses them from the CPU.
    return fmt::format(
        "valgrind --tool=cachegrind --cache-sim=yes {} --I1={},{},{} --LL=1048576,16,{} "
        "--cachegrind-out-file=/dev/null",
        cachegrind_d1_flag(d1), d1.capacity_bytes(), d1.ways, d1.line_bytes, d1.line_bytes);
}
// [end: cachegrind]

// [snippet: six_orders_counted]
double misses_per_iteration(std::uint64_t count, std::uint64_t baseline, std::size_t n) {
    const auto product_only = static_cast<std::int64_t>(count - baseline);  // start-up and filling removed
    return static_cast<double>(product_only) / static_cast<double>(n * n * n);
}
// [end: six_orders_counted]

// [snippet: amdahl]
double amdahl(double fraction, double speedup) {
    return 1.0 / ((1.0 - fraction) + fraction / speedup);
}
// [end: amdahl]

// [snippet: audit_model]
void model_prefetch(PrefetchAudit& audit, const cachebook::CacheConfig& l1) {
    const std::size_t count = audit.n * audit.n, per_line = 64 / sizeof(int);
    cachebook::Cache plain(l1), prefetched(l1);
    for (std::size_t k = 0; k < count; ++k) {
        plain.access(k * sizeof(int));
        // The kernel prefetches once per 64-byte line, `distance` elements ahead.
        if (k % per_line == 0 && k + audit.distance < count) prefetched.access((k + audit.distance) * sizeof(int));
        prefetched.access(k * sizeof(int));
    }
    audit.stride_bytes = sizeof(int);  // j is the inner variable and the right index: unit stride
    audit.model_plain = static_cast<double>(plain.total().misses) / static_cast<double>(count);
    audit.model_prefetched = static_cast<double>(prefetched.total().misses) / static_cast<double>(count);
}
// [end: audit_model]

}  // namespace ch07
