// Chapter 7's lab: the rules run at the program's sizes, perf and cachegrind run as child
// processes and read, the six orders' table and the audit put together.
#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <regex>
#include <sstream>

#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/matmul_orders.hpp"
#include "sum_kernel.hpp"

namespace ch07 {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

std::vector<int> make_grid(std::size_t n) {
    std::vector<int> a(n * n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i % 10);
    return a;
}

double cpu_share_now() {
    return cachebook::cpu_share();
}

RunsRule runs_rule(std::size_t n, int runs) {
    RunsRule rule;
    rule.n = n;
    const auto grid = make_grid(n);
    auto once = [&] { cachebook::do_not_optimize(o2::sum_rows(grid.data(), n)); };
    for (int run = 0; run < runs; ++run) {  // no warm-up: the first run is whatever it is
        rule.batch_a.runs.push_back(cachebook::time_runs(1, once, 0).runs.front());
        rule.batch_b.runs.push_back(cachebook::time_runs(1, once, 0).runs.front());
    }
    return rule;
}

cachebook::ClaimResult minima_agree(const RunsRule& rule, double tolerance, double max_noise) {
    const cachebook::ClaimRule both_ways{1 / (1 + tolerance), static_cast<int>(rule.batch_a.runs.size()), max_noise};
    const auto a_vs_b = cachebook::decide(rule.batch_a.runs, rule.batch_b.runs, both_ways);
    const auto b_vs_a = cachebook::decide(rule.batch_b.runs, rule.batch_a.runs, both_ways);
    // The side whose minimum is the smaller decides: the other way round holds whenever this one can.
    const auto& deciding = a_vs_b.effect <= b_vs_a.effect ? a_vs_b : b_vs_a;
    cachebook::ClaimResult agree;
    agree.effect = std::max(a_vs_b.effect, b_vs_a.effect);
    agree.noise = deciding.noise;
    agree.threshold = 1 + tolerance;
    agree.verdict = deciding.verdict;
    const std::string figures = fmt::format("minima {:.2f}x apart against at most {:.2f}x, noise {:.0f} %",
                                            agree.effect, agree.threshold, 100 * agree.noise);
    const auto why = deciding.reason.substr(deciding.reason.find(": ") + 2);
    switch (agree.verdict) {
        case cachebook::Verdict::holds:
            agree.reason = figures + ": they agree by more than the noise";
            break;
        case cachebook::Verdict::fails:
            agree.reason = figures + ": they differ by more than the tolerance and the noise";
            break;
        case cachebook::Verdict::inconclusive:
            agree.reason = figures + ": " + why;
            break;
    }
    return agree;
}

double RunsRule::min_gap() const {
    return std::abs(batch_a.min() / batch_b.min() - 1.0);
}

DeadCodeRule dead_code_rule(std::size_t n, int runs) {
    DeadCodeRule rule;
    rule.n = n;
    rule.unused_s = rule.used_s = kInf;
    const auto grid = make_grid(n);
    for (int run = 0; run < runs; ++run) {
        rule.unused_runs.push_back(time_sum_unused(grid.data(), grid.size()));
        rule.used_runs.push_back(time_sum_used(grid.data(), grid.size(), rule.sum));
        rule.unused_s = std::min(rule.unused_s, rule.unused_runs.back());
        rule.used_s = std::min(rule.used_s, rule.used_runs.back());
    }
    return rule;
}

cachebook::ClaimResult dead_code_claim(const DeadCodeRule& rule, double max_noise) {
    const auto runs = static_cast<int>(rule.used_runs.size());
    return cachebook::decide(rule.used_runs, rule.unused_runs,
                             cachebook::ClaimRule{kDeadCodeThreshold, runs, max_noise});
}

cachebook::ClaimResult touch_claim(const TouchRule& rule, double max_noise) {
    const auto runs = static_cast<int>(rule.first_runs.size());
    return cachebook::decide(rule.first_runs, rule.second_runs, cachebook::ClaimRule{kTouchThreshold, runs, max_noise});
}

BlockedRule blocked_rule(std::size_t n, std::size_t tile, int runs) {
    BlockedRule rule;
    rule.n = n;
    rule.tile = tile;
    rule.naive_o0 = rule.blocked_o0 = rule.naive_o2 = rule.blocked_o2 = kInf;
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<std::vector<double>> c(4, std::vector<double>(n * n));
    for (int run = -1; run < runs; ++run) {  // run -1 warms up, untimed
        auto once = [&](auto product, double& best, int k) {
            const double start = cachebook::thread_cpu_seconds();  // one thread: see rule 2
            product(c[static_cast<std::size_t>(k)].data());
            cachebook::do_not_optimize(c[static_cast<std::size_t>(k)].data());
            const double seconds = cachebook::thread_cpu_seconds() - start;
            if (run < 0) return;
            best = std::min(best, seconds);
            rule.runs[k].push_back(seconds);
        };
        once([&](double* out) { o0::product_naive(m.a.data(), m.b.data(), out, n); }, rule.naive_o0, 0);
        once([&](double* out) { o0::product_blocked(m.a.data(), m.b.data(), out, n, tile); }, rule.blocked_o0, 1);
        once([&](double* out) { o2::product_naive(m.a.data(), m.b.data(), out, n); }, rule.naive_o2, 2);
        once([&](double* out) { o2::product_blocked(m.a.data(), m.b.data(), out, n, tile); }, rule.blocked_o2, 3);
    }
    rule.same_results = c[0] == c[1] && c[1] == c[2] && c[2] == c[3];
    return rule;
}

BlockedClaims blocked_claims(const BlockedRule& rule, double max_noise) {
    const auto& [naive_o0, blocked_o0, naive_o2, blocked_o2] = rule.runs;
    std::vector<double> share_o0, share_o2;  // each run's blocked / naive time: 1 / the gain of blocking
    for (std::size_t i = 0; i < naive_o0.size(); ++i) {
        share_o0.push_back(blocked_o0[i] / naive_o0[i]);
        share_o2.push_back(blocked_o2[i] / naive_o2[i]);
    }
    const auto runs = static_cast<int>(naive_o0.size());
    return {cachebook::decide(blocked_o0, blocked_o2, cachebook::ClaimRule{kO0OverO2, runs, max_noise}),
            cachebook::decide(share_o0, share_o2, cachebook::ClaimRule{kGainO2OverO0, runs, max_noise})};
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

LatencyClaims latency_claims(const LatencyRow& row, double max_noise) {
    const auto runs = static_cast<int>(row.chase_runs.size());
    return {
        cachebook::decide(row.chase_runs, row.strided_runs, cachebook::ClaimRule{kChaseOverStrided, runs, max_noise}),
        cachebook::decide(row.chase_runs, row.gather_runs, cachebook::ClaimRule{kChaseOverGather, runs, max_noise})};
}

std::optional<std::size_t> largest_cache_bytes() {
    std::optional<std::size_t> largest;
    for (const auto& cache : cachebook::machine().caches)
        if (cache.type != "Instruction" && cache.size_bytes > 0)
            largest = std::max(largest.value_or(0), cache.size_bytes);
    return largest;
}

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

std::string walk_program() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto sibling = self.parent_path() / "ch07_walk";
        if (std::filesystem::exists(sibling, ec)) return sibling.string();
    }
    return CH07_WALK_PATH;
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

}  // namespace

ToolCounts cachegrind_walks(const cachebook::CacheConfig& l1, std::size_t n) {
    if (cachebook::run_command("command -v valgrind 2>&1").status != 0)
        return {"", "valgrind is not installed", 0, 0, 0};
    return run_walks("cachegrind", cachegrind_command(l1), parse_cachegrind_d1_misses, n);
}

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
    return misses_per_iteration(misses.at(k), baseline, n);
}

OrderCounts cachegrind_orders(const cachebook::CacheConfig& d1, std::size_t n) {
    if (cachebook::run_command("command -v valgrind 2>&1").status != 0) return {"valgrind is not installed", 0, {}};
    std::vector<std::string> modes = {"fill3"};  // fills A, B and C, no product: the baseline
    for (auto order : cachebook::kAllOrders) modes.emplace_back(cachebook::order_name(order));
    auto run = run_modes("cachegrind", cachegrind_command(d1), parse_cachegrind_d1_misses, modes, n);
    if (!run.why_not.empty()) return {run.why_not, 0, {}};
    const std::uint64_t baseline = run.counts.front();
    run.counts.erase(run.counts.begin());
    return {"", baseline, run.counts};
}

std::string compare_with_model(double counted, double model) {
    if (std::abs(counted - model) <= std::max(0.01, 0.1 * model)) return "agrees";
    return counted < model ? "fewer" : "more";
}

std::vector<OrderRow> order_rows(const OrderCounts& counted, std::size_t n, const cachebook::CacheConfig& cache) {
    const bool have = counted.why_not.empty();
    std::vector<OrderRow> rows;
    for (std::size_t k = 0; k < std::size(cachebook::kAllOrders); ++k) {
        OrderRow row{cachebook::kAllOrders[k], model_order_misses(cachebook::kAllOrders[k], n, cache), 0, ""};
        if (have) {
            row.counted = counted.per_iteration(k, n);
            row.compared = compare_with_model(row.counted, row.model.total());
        }
        rows.push_back(row);
    }
    return rows;
}

std::string orders_compared(const std::vector<OrderRow>& rows, std::string_view compared) {
    std::string names;
    for (const auto& row : rows)
        if (row.compared == compared)
            names += (names.empty() ? "" : ", ") + std::string(cachebook::order_name(row.order));
    return names;
}

// --- Auditing one claim ----------------------------------------------------------------------

PrefetchAudit audit_prefetch(std::size_t n, std::size_t distance, int runs) {
    PrefetchAudit audit;
    audit.n = n;
    audit.distance = distance;
    model_prefetch(audit, l1_geometry());
    time_prefetch(audit, make_grid(n), runs);
    return audit;
}

std::string audit_verdict(double speedup, double claimed, double noise) {
    if (speedup >= claimed) return "holds";
    return speedup > 1.0 + noise ? "smaller" : "none";
}

}  // namespace ch07
