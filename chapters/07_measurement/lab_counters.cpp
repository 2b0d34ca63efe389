// Chapter 7's lab, its counting half: perf (cachebook/perf_counters.hpp) and cachegrind run as
// child processes and read, and chapter 3's six orders counted beside the model.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <future>
#include <regex>
#include <sstream>

#include "cachebook/machine.hpp"
#include "cachebook/matmul_orders.hpp"
#include "lab.hpp"

namespace ch07 {
// --- Hardware counters -----------------------------------------------------------------------

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
    // The runs are counted, not timed, so they may run at once: on two CPUs in about half the time.
    std::vector<std::future<cachebook::CommandResult>> runs;
    for (const auto& mode : modes)
        runs.push_back(std::async(std::launch::async, cachebook::run_command,
                                  fmt::format("{} '{}' {} {} 2>&1", prefix, walk, mode, n)));
    for (auto& pending : runs) {
        const auto run = pending.get();
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

}  // namespace ch07
