#include "measurement.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <limits>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cachebook/chase.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/matmul_orders.hpp"
#include "cachebook/trace.hpp"
#include "sum_kernel.hpp"

namespace ch07 {

std::vector<int> make_grid(std::size_t n) {
    std::vector<int> a(n * n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i % 10);
    return a;
}

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// A dependent chain of multiply-adds: CPU work that touches no memory.
double spin(std::uint64_t iterations, double start) {
    double x = start;
    for (std::uint64_t i = 0; i < iterations; ++i) x = x * 0.999999 + 1e-7;
    return x;
}
}  // namespace

// [snippet: clocks]
ClockRule clock_rule(int threads, std::uint64_t work, int runs) {
    ClockRule rule;
    rule.threads = threads;
    auto measure = [&](int count) {
        ClockPair best{kInf, kInf};
        for (int run = 0; run < runs; ++run) {
            std::vector<double> results(static_cast<std::size_t>(count));
            const std::clock_t cpu_start = std::clock();      // CPU time of the process
            const auto wall_start = cachebook::Clock::now();  // time on the wall
            std::vector<std::thread> pool;
            for (int t = 0; t < count; ++t)
                pool.emplace_back([&, t] { results[static_cast<std::size_t>(t)] = spin(work / count, 1.0 + t); });
            for (auto& th : pool) th.join();
            const double wall = cachebook::seconds_since(wall_start);
            const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
            cachebook::do_not_optimize(results);
            best.wall_s = std::min(best.wall_s, wall);
            best.cpu_s = std::min(best.cpu_s, cpu);
        }
        return best;
    };
    rule.one = measure(1);
    rule.many = measure(threads);
    return rule;
}
// [end: clocks]

RunsRule runs_rule(std::size_t n, int runs) {
    RunsRule rule;
    rule.n = n;
    const auto grid = make_grid(n);
    auto once = [&] { cachebook::do_not_optimize(o2::sum_rows(grid.data(), n)); };
    rule.batch_a = cachebook::time_runs(runs, once, 0);  // no warm-up: the first run is whatever it is
    rule.batch_b = cachebook::time_runs(runs, once, 0);
    return rule;
}

double RunsRule::min_gap() const {
    return std::abs(batch_a.min() / batch_b.min() - 1.0);
}

namespace {
std::uint64_t minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<std::uint64_t>(u.ru_minflt);
}
}  // namespace

// [snippet: first_touch]
TouchRule touch_rule(std::size_t bytes, int runs) {
    TouchRule rule;
    rule.bytes = bytes;
    rule.first_fill_s = rule.second_fill_s = kInf;
    for (int run = 0; run < runs; ++run) {
        // Fresh pages straight from the OS, as a large malloc or new gets them.
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error(fmt::format("cannot map {} bytes", bytes));
        auto* a = static_cast<std::int64_t*>(p);
        const std::size_t n = bytes / sizeof(std::int64_t);
        auto fill = [&](std::int64_t v) {
            const std::uint64_t faults = minor_faults();
            const auto start = cachebook::Clock::now();
            for (std::size_t i = 0; i < n; ++i) a[i] = v;
            cachebook::clobber_memory();
            return std::pair{cachebook::seconds_since(start), minor_faults() - faults};
        };
        const auto [first, first_faults] = fill(1);    // the timed region pays the page faults
        const auto [second, second_faults] = fill(2);  // the pages exist now: only the writes
        rule.first_fill_s = std::min(rule.first_fill_s, first);
        rule.second_fill_s = std::min(rule.second_fill_s, second);
        rule.faults_first = first_faults;
        rule.faults_second = second_faults;
        munmap(p, bytes);
    }
    return rule;
}
// [end: first_touch]

// [snippet: dead_code]
namespace {
double time_sum_unused(const int* a, std::size_t count) {
    const auto start = cachebook::Clock::now();
    std::int64_t s = 0;
    for (std::size_t i = 0; i < count; ++i) s += a[i];
    (void)s;  // the result goes nowhere, so the compiler may drop the whole loop
    return cachebook::seconds_since(start);
}
double time_sum_used(const int* a, std::size_t count, std::int64_t& out) {
    const auto start = cachebook::Clock::now();
    std::int64_t s = 0;
    for (std::size_t i = 0; i < count; ++i) s += a[i];
    cachebook::do_not_optimize(s);  // the compiler must produce s: the loop stays
    const double t = cachebook::seconds_since(start);
    out = s;
    return t;
}
}  // namespace
// [end: dead_code]

DeadCodeRule dead_code_rule(std::size_t n, int runs) {
    DeadCodeRule rule;
    rule.n = n;
    rule.unused_s = rule.used_s = kInf;
    const auto grid = make_grid(n);
    for (int run = 0; run < runs; ++run) {
        rule.unused_s = std::min(rule.unused_s, time_sum_unused(grid.data(), grid.size()));
        rule.used_s = std::min(rule.used_s, time_sum_used(grid.data(), grid.size(), rule.sum));
    }
    return rule;
}

BlockedRule blocked_rule(std::size_t n, std::size_t tile, int runs) {
    BlockedRule rule;
    rule.n = n;
    rule.tile = tile;
    rule.naive_o0 = rule.blocked_o0 = rule.naive_o2 = rule.blocked_o2 = kInf;
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<std::vector<double>> c(4, std::vector<double>(n * n));
    for (int run = -1; run < runs; ++run) {  // run -1 warms up, untimed
        auto once = [&](auto product, double& best, std::vector<double>& out) {
            const double start = cachebook::thread_cpu_seconds();  // one thread: see rule 2
            product(out.data());
            cachebook::do_not_optimize(out.data());
            if (run >= 0) best = std::min(best, cachebook::thread_cpu_seconds() - start);
        };
        once([&](double* out) { o0::product_naive(m.a.data(), m.b.data(), out, n); }, rule.naive_o0, c[0]);
        once([&](double* out) { o0::product_blocked(m.a.data(), m.b.data(), out, n, tile); }, rule.blocked_o0, c[1]);
        once([&](double* out) { o2::product_naive(m.a.data(), m.b.data(), out, n); }, rule.naive_o2, c[2]);
        once([&](double* out) { o2::product_blocked(m.a.data(), m.b.data(), out, n, tile); }, rule.blocked_o2, c[3]);
    }
    rule.same_results = c[0] == c[1] && c[1] == c[2] && c[2] == c[3];
    return rule;
}

std::size_t l1_resident_order(std::size_t l1_bytes) {
    std::size_t n = 16;
    while (2 * n * 2 * n * sizeof(int) <= l1_bytes / 2) n *= 2;
    return n;
}

std::vector<SizeRow> size_rule(const std::vector<std::size_t>& sizes, std::size_t elements, int runs) {
    std::vector<SizeRow> rows;
    for (std::size_t n : sizes) {
        const auto grid = make_grid(n);
        const std::size_t per_pass = n * n;
        const std::size_t passes = std::max<std::size_t>(1, elements / per_pass);
        auto time_walk = [&](auto f) {
            // The thread's CPU clock: one thread, and a shared machine (see rule 2).
            const auto t = cachebook::time_runs_thread_cpu(runs, [&] {
                for (std::size_t p = 0; p < passes; ++p) cachebook::do_not_optimize(f(grid.data(), n));
            });
            return t.min() * 1e9 / static_cast<double>(passes * per_pass);
        };
        rows.push_back(SizeRow{n, per_pass * sizeof(int), time_walk(o2::sum_rows), time_walk(o2::sum_columns)});
    }
    return rows;
}

// [snippet: latency]
namespace {
struct alignas(64) Slot {  // one slot per line, so every access is a different line
    std::uint32_t next;
    std::uint32_t value;
};
}  // namespace

LatencyRow latency_row(std::size_t bytes, std::size_t hops, int runs) {
    const std::size_t n = std::max<std::size_t>(2, bytes / sizeof(Slot));
    std::vector<Slot> slots(n);
    const auto cycle = cachebook::single_cycle(n, 3);
    for (std::size_t i = 0; i < n; ++i) slots[i] = Slot{cycle[i], static_cast<std::uint32_t>(i % 7)};
    std::vector<std::uint32_t> order(n);  // the chase's own order, as a list of indices
    for (std::size_t k = 0, i = 0; k < n; ++k, i = cycle[i]) order[k] = static_cast<std::uint32_t>(i);

    auto per_access = [&](auto&& walk) { return cachebook::time_runs(runs, walk).min() * 1e9 / double(hops); };
    LatencyRow row;
    row.bytes = n * sizeof(Slot);
    row.strided_ns = per_access([&] {  // the strided sum: independent loads, addresses in order
        std::uint64_t s = 0;
        for (std::size_t h = 0, i = 0; h < hops; ++h, i = i + 1 == n ? 0 : i + 1) s += slots[i].value;
        cachebook::do_not_optimize(s);
    });
    row.gather_ns = per_access([&] {  // random order, but every address known in advance
        std::uint64_t s = 0;
        for (std::size_t h = 0, k = 0; h < hops; ++h, k = k + 1 == n ? 0 : k + 1) s += slots[order[k]].value;
        cachebook::do_not_optimize(s);
    });
    row.chase_ns = per_access([&] {  // each address comes out of the previous load
        std::uint32_t i = 0;
        for (std::size_t h = 0; h < hops; ++h) i = slots[i].next;
        cachebook::do_not_optimize(i);
    });
    return row;
}
// [end: latency]

// --- Hardware counters -----------------------------------------------------------------------

std::string_view perf_state_name(PerfState s) {
    switch (s) {
        case PerfState::NotInstalled:
            return "perf is not installed";
        case PerfState::NoPermission:
            return "perf may not open counters here (permission)";
        case PerfState::NotSupported:
            return "perf reports the event as <not supported>";
        case PerfState::Works:
            return "perf counts the event";
    }
    return "unknown";
}

PerfState parse_perf_probe(const std::string& output, int status) {
    if (status == 127 || output.find("not found") != std::string::npos) return PerfState::NotInstalled;
    if (output.find("<not supported>") != std::string::npos) return PerfState::NotSupported;
    if (output.find("<not counted>") != std::string::npos) return PerfState::NotSupported;
    if (output.find("ermission") != std::string::npos || output.find("paranoid") != std::string::npos ||
        output.find("Access to performance monitoring") != std::string::npos)
        return PerfState::NoPermission;
    if (status != 0) return PerfState::NotSupported;
    // -x, lines start with the count: "12345,,cache-misses,..."
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) return PerfState::Works;
    return PerfState::NotSupported;
}

std::optional<std::uint64_t> parse_perf_count(const std::string& output, const std::string& event) {
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
        const auto comma = line.find(',');
        if (comma == std::string::npos || line.find("," + event) == std::string::npos) continue;
        const std::string count = line.substr(0, comma);
        if (count.empty() || !std::all_of(count.begin(), count.end(), [](char c) { return std::isdigit(c) != 0; }))
            return std::nullopt;
        return std::stoull(count);
    }
    return std::nullopt;
}

PerfProbe probe_perf(const std::string& event) {
    const auto which = cachebook::run_command("command -v perf 2>&1");
    if (which.status != 0) return {PerfState::NotInstalled, "no perf on PATH"};
    const auto result = cachebook::run_command(fmt::format("perf stat -x, -e {} -- true 2>&1", event));
    PerfProbe probe{parse_perf_probe(result.output, result.status), ""};
    std::istringstream in(result.output);
    for (std::string line; std::getline(in, line);)
        if (line.find(event) != std::string::npos || probe.detail.empty()) probe.detail = line;
    return probe;
}

std::optional<std::uint64_t> parse_cachegrind_d1_misses(const std::string& output) {
    static const std::regex d1(R"(D1\s+misses:\s+([0-9,]+))");
    std::smatch m;
    if (!std::regex_search(output, m, d1)) return std::nullopt;
    std::string digits;
    for (char c : m[1].str())
        if (c != ',') digits += c;
    return std::stoull(digits);
}

// [snippet: simulate_walks]
SimulatedWalks simulate_walks(const cachebook::CacheConfig& config, std::size_t n) {
    SimulatedWalks walks;
    walks.row_misses = cachebook::simulate(config, cachebook::row_major_trace(n, sizeof(int))).misses;
    walks.column_misses = cachebook::simulate(config, cachebook::col_major_trace(n, sizeof(int))).misses;
    walks.accesses = static_cast<std::uint64_t>(n) * n;
    return walks;
}
// [end: simulate_walks]

std::string walk_program() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto sibling = self.parent_path() / "ch07_walk";
        if (std::filesystem::exists(sibling, ec)) return sibling.string();
    }
    return CH07_WALK_PATH;
}

std::string cachegrind_d1_flag(const cachebook::CacheConfig& config) {
    return fmt::format("--D1={},{},{}", config.capacity_bytes(), config.ways, config.line_bytes);
}

namespace {
// Runs `PREFIX ch07_walk MODE N` for each mode and reads one count from each run;
// on the first failure, the counts so far and why.
struct ModeCounts {
    std::vector<std::uint64_t> counts;
    std::string why_not;
};
ModeCounts run_modes(const std::string& tool, const std::string& prefix,
                     const std::function<std::optional<std::uint64_t>(const std::string&)>& parse,
                     const std::vector<std::string>& modes, std::size_t n) {
    ModeCounts result;
    const std::string walk = walk_program();
    for (const auto& mode : modes) {
        const auto run = cachebook::run_command(fmt::format("{} '{}' {} {} 2>&1", prefix, walk, mode, n));
        const auto count = parse(run.output);
        if (run.status != 0 || !count) {
            std::string last;
            std::istringstream in(run.output);
            for (std::string line; std::getline(in, line);)
                if (!line.empty()) last = line;
            result.why_not = fmt::format("{} failed (status {}): {}", tool, run.status, last);
            return result;
        }
        result.counts.push_back(*count);
    }
    return result;
}

ToolCounts run_walks(const std::string& tool, const std::string& prefix,
                     const std::function<std::optional<std::uint64_t>(const std::string&)>& parse, std::size_t n) {
    const auto run = run_modes(tool, prefix, parse, {"none", "row", "column"}, n);
    if (!run.why_not.empty()) return {"", run.why_not, 0, 0, 0};
    return {tool, "", run.counts[0], run.counts[1], run.counts[2]};
}

// cachegrind with D1 = `d1`; I1 gets the same geometry and LL a fixed one, so that
// cachegrind never has to guess them from the CPU.
std::string cachegrind_prefix(const cachebook::CacheConfig& d1) {
    return fmt::format(
        "valgrind --tool=cachegrind --cache-sim=yes {} --I1={},{},{} --LL=1048576,16,{} "
        "--cachegrind-out-file=/dev/null",
        cachegrind_d1_flag(d1), d1.capacity_bytes(), d1.ways, d1.line_bytes, d1.line_bytes);
}
}  // namespace

// [snippet: cachegrind]
ToolCounts cachegrind_walks(const cachebook::CacheConfig& l1, std::size_t n) {
    if (cachebook::run_command("command -v valgrind 2>&1").status != 0)
        return {"", "valgrind is not installed", 0, 0, 0};
    // Prefix: valgrind --tool=cachegrind --cache-sim=yes --D1=size,ways,line (I1, LL fixed).
    return run_walks("cachegrind", cachegrind_prefix(l1), parse_cachegrind_d1_misses, n);
}
// [end: cachegrind]

ToolCounts perf_walks(const std::string& event, std::size_t n) {
    return run_walks(
        "perf", fmt::format("perf stat -x, -e {} --", event),
        [&](const std::string& out) { return parse_perf_count(out, event); }, n);
}

ToolCounts count_walks(const PerfProbe& probe, const cachebook::CacheConfig& l1, std::size_t n) {
    ToolCounts counts;
    if (probe.state == PerfState::Works) counts = perf_walks("L1-dcache-load-misses", n);
    if (!counts.tool.empty()) return counts;
    // perf could not count: cachegrind instead, unless it is missing too and perf said why.
    const auto simulated = cachegrind_walks(l1, n);
    return !simulated.tool.empty() || counts.why_not.empty() ? simulated : counts;
}

cachebook::CacheConfig l1_geometry() {
    const auto l1 = cachebook::data_cache(1);
    if (l1 && l1->sets > 0 && l1->ways > 0 && l1->line_bytes > 0) return {l1->sets, l1->ways, l1->line_bytes};
    return cachebook::CacheConfig::from_capacity(32768, 8, 64);
}

// --- Chapter 3's six orders, counted ----------------------------------------------------------

OrderMisses model_order_misses(cachebook::LoopOrder order, std::size_t n, const cachebook::CacheConfig& cache) {
    auto model = cachebook::abc_cache(cache);
    const auto layout = cachebook::MatmulLayout::packed(n, sizeof(double), cache.line_bytes);
    cachebook::for_each_matmul_access(order, n, sizeof(double), layout,
                                      [&](const cachebook::Access& a) { model.access(a.address, a.stream, a.write); });
    const auto iterations = static_cast<double>(n * n * n);
    auto per = [&](int stream) { return static_cast<double>(model.stream(stream).misses) / iterations; };
    return {per(1), per(2), per(3)};
}

double OrderCounts::per_iteration(std::size_t k, std::size_t n) const {
    return static_cast<double>(static_cast<std::int64_t>(misses.at(k) - baseline)) / static_cast<double>(n * n * n);
}

// [snippet: six_orders_counted]
OrderCounts cachegrind_orders(const cachebook::CacheConfig& d1, std::size_t n) {
    if (cachebook::run_command("command -v valgrind 2>&1").status != 0) return {"valgrind is not installed", 0, {}};
    std::vector<std::string> modes = {"fill3"};  // fills A, B and C, no product: the baseline
    for (auto order : cachebook::kAllOrders) modes.emplace_back(cachebook::order_name(order));
    auto run = run_modes("cachegrind", cachegrind_prefix(d1), parse_cachegrind_d1_misses, modes, n);
    if (!run.why_not.empty()) return {run.why_not, 0, {}};
    const std::uint64_t baseline = run.counts.front();
    run.counts.erase(run.counts.begin());
    return {"", baseline, run.counts};
}
// [end: six_orders_counted]

std::string compare_with_model(double counted, double model) {
    if (std::abs(counted - model) <= std::max(0.01, 0.1 * model)) return "agrees";
    return counted < model ? "fewer" : "more";
}

// --- Auditing one claim ----------------------------------------------------------------------

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

// [snippet: audit]
PrefetchAudit audit_prefetch(std::size_t n, std::size_t distance, int runs) {
    PrefetchAudit audit;
    audit.n = n;
    audit.distance = distance;
    model_prefetch(audit, l1_geometry());
    const auto grid = make_grid(n);
    std::int64_t plain_sum = 0, prefetched_sum = 0;
    audit.plain_s = audit.prefetched_s = kInf;
    for (int run = -1; run < runs; ++run) {  // interleaved, so both see the same machine
        const double t0 = cachebook::thread_cpu_seconds();
        plain_sum = o2::sum_rows(grid.data(), n);
        cachebook::do_not_optimize(plain_sum);
        const double t1 = cachebook::thread_cpu_seconds();
        prefetched_sum = o2::sum_rows_prefetched(grid.data(), n, distance);
        cachebook::do_not_optimize(prefetched_sum);
        const double t2 = cachebook::thread_cpu_seconds();
        if (run < 0) continue;  // the warm-up
        audit.plain_s = std::min(audit.plain_s, t1 - t0);
        audit.prefetched_s = std::min(audit.prefetched_s, t2 - t1);
    }
    audit.same_sums = plain_sum == prefetched_sum;
    return audit;
}
// [end: audit]

std::string audit_verdict(double speedup, double claimed, double noise) {
    if (speedup >= claimed) return "holds";
    return speedup > 1.0 + noise ? "smaller" : "none";
}

// [snippet: amdahl]
double amdahl(double fraction, double speedup) {
    return 1.0 / ((1.0 - fraction) + fraction / speedup);
}
// [end: amdahl]

}  // namespace ch07
