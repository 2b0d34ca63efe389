// Chapter 3's output, one function per numbered section, in the order printed: each figure a Value
// made once, with its JSON key. main.cpp calls them; the lab (lab.cpp) computes what they print.
#include "sections.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/walks.hpp"
#include "lab.hpp"

namespace ch03 {
namespace {

using cachebook::LoopOrder;
using cachebook::Report;
using cachebook::Value;

std::string name(LoopOrder order) {
    return std::string(cachebook::order_name(order));
}
std::string inner(LoopOrder order) {
    return std::string(1, ch03::inner_variable(order));
}

}  // namespace

void analytic_section(Report& report) {
    report.section("The textbook's analysis: misses per inner iteration, doubles, 64-byte lines (B = 8)");
    report.line("   inner variable is an array's right index: 1/B; its left index: 1; absent: 0");
    auto table = report.table({"order", "inner", "A[i][k]", "B[k][j]", "C[i][j]", "total"});
    for (LoopOrder order : cachebook::kAllOrders) {
        const auto misses = ch03::analytic(order, 8);
        const std::string key = "analytic." + name(order);
        table.row({name(order), inner(order), Value::exact(key + ".a", misses.a, "{:g}"),
                   Value::exact(key + ".b", misses.b, "{:g}"), Value::exact(key + ".c", misses.c, "{:g}"),
                   Value::exact(key + ".total", misses.total(), "{:g}")});
    }
    table.print();
}

namespace {

// The six orders simulated in `cache`, beside the analytic totals, recorded under `key`.
void simulated_table(Report& report, std::size_t n, const cachebook::CacheConfig& cache, const std::string& key) {
    auto table = report.table({"order", "A", "B", "C", "total", "analytic total", "vs analytic"});
    for (LoopOrder order : cachebook::kAllOrders) {
        const auto simulated = ch03::simulate_order(order, n, cache).per_iteration();
        const double predicted = ch03::analytic(order, cache.line_bytes / 8).total();
        const bool departs = ch03::departs(simulated.total(), predicted);
        const std::string verdict = !departs ? "as predicted" : simulated.total() < predicted ? "fewer" : "more";
        const std::string at = key + "." + name(order);
        table.row({name(order), Value::exact(at + ".a", ch03::three(simulated.a)),
                   Value::exact(at + ".b", ch03::three(simulated.b)), Value::exact(at + ".c", ch03::three(simulated.c)),
                   Value::exact(at + ".total", ch03::three(simulated.total())),
                   Value::exact(at + ".analytic_total", ch03::three(predicted)),
                   Value::exact_as(at + ".departs", departs, verdict)});
    }
    table.print();
}

// The tiled product with each tile in `cache`, beside the estimate, recorded under `key`.
void tiled_table(Report& report, std::size_t n, const cachebook::CacheConfig& cache,
                 const std::vector<std::size_t>& tiles, const std::string& key) {
    auto table = report.table({"tile", "A", "B", "C", "total", "estimate 2/(B T) + 1/(B N)", "3 T^2 fits"});
    for (std::size_t tile : tiles) {
        const auto simulated = ch03::simulate_tiled(n, tile, cache).per_iteration();
        const double estimate = ch03::tiled_estimate(cache.line_bytes / 8, tile, n);
        const bool fits = 3 * tile * tile <= cache.capacity_bytes() / 8;
        const std::string at = fmt::format("{}.t{}", key, tile);
        table.row({fmt::format("T={}", tile), Value::exact(at + ".a", ch03::three(simulated.a)),
                   Value::exact(at + ".b", ch03::three(simulated.b)), Value::exact(at + ".c", ch03::three(simulated.c)),
                   Value::exact(at + ".total", ch03::three(simulated.total())),
                   Value::exact(at + ".estimate", ch03::three(estimate)),
                   Value::exact_as(at + ".fits", fits, fits ? "yes" : "no")});
    }
    table.print();
}

}  // namespace

// Sections 2 and 3: the course notes' N = 64 in a 4-line and a 32-line cache.
void small_cache_section(Report& report, std::size_t cache_lines) {
    const auto cache = cachebook::CacheConfig::fully_associative(cache_lines, 64);
    const std::string key = fmt::format("simulated.lines{}", cache_lines);
    report.section("Simulated: N = {}, fully associative LRU cache of {} lines ({} B)",
                   Value::exact(key + ".n", ch03::kNotesN), cache_lines,
                   Value::exact(key + ".cache_bytes", cache.capacity_bytes()));
    simulated_table(report, ch03::kNotesN, cache, key);
}

void tiled_section(Report& report) {
    const auto cache = cachebook::CacheConfig::fully_associative(32, 64);
    const std::size_t cache_doubles = cache.capacity_bytes() / 8;
    report.section("Tiled (tiles ii, jj, kk; then i, k, j), N = {}, the 32-line cache: {} doubles",
                   Value::exact("simulated.tiled_n", ch03::kNotesN),
                   Value::exact("simulated.cache_doubles", cache_doubles));
    report.line("   3 T^2 <= {} gives T <= {}", Value::exact("simulated.rule_doubles", cache_doubles),
                Value::exact("simulated.tile_bound", fmt::format("{:.1f}", ch03::tile_bound(cache_doubles))));
    tiled_table(report, ch03::kNotesN, cache, {8, 16}, "simulated.tiled");
}

void chosen_cache_section(Report& report, const Options& options) {
    const auto n = static_cast<std::size_t>(options.n);
    report.section("Simulated: N = {}, {}", Value::exact("custom.n", options.n),
                   Value::exact("custom.cache", options.cache.describe()));
    simulated_table(report, n, options.cache, "custom.orders");
    if (options.tile == 0) return;
    report.line("  tiled:");
    tiled_table(report, n, options.cache, {static_cast<std::size_t>(options.tile)}, "custom.tiled");
}

namespace {

// Where one column of an N x N matrix of doubles falls in this machine's L1d: the inner-i orders
// walk such columns of A and C.
void column_sets_line(Report& report, std::size_t n) {
    const auto& machine = cachebook::machine();
    const auto info = machine.data_cache(1);
    report.line("  where the L1d comes from: {}",
                Value::measured("measured.l1_source",
                                info ? cachebook::source_name(info->source) : machine.why_unknown("the L1d")));
    const auto l1 = cachebook::cache_config(info);
    if (!l1) {
        report.record("measured.column_sets", nullptr);
        const auto unknown = cachebook::Value::unknown("", "unknown");
        report.line("  a column's {} lines in this machine's L1d: sets {} ({} of {} sets, room for {} lines)",
                    Value::exact("measured.column_lines", n), unknown, unknown, unknown, unknown);
        return;
    }
    const auto column = cachebook::block_sets(*l1, 0, n, sizeof(double), n * sizeof(double));
    report.line(
        "  a column's {} lines in this machine's L1d: sets {} ({} of {} sets, room for {} lines)",
        Value::exact("measured.column_lines", n),
        Value::measured("measured.column_sets.set_list", cachebook::set_list(column.sets)),
        Value::measured("measured.column_sets.sets", column.sets.size()),
        Value::measured("measured.column_sets.l1_sets", fmt::format("{}", l1->sets)),  // text: for the prose only
        Value::measured("measured.column_sets.room", column.room));
}

// ikj (inner j) and jki (inner i) again at N plus one line of doubles, a padded size whose columns
// spread over the L1's sets: time per multiply-add, side by side.
// The time model priced both before either size was timed (`price`); its lines follow.
void padded_lines(Report& report, const ch03::MeasuredOrders& timed, const ch03::PaddedPrice& price, int runs) {
    using cachebook::LoopOrder;
    const std::size_t n = timed.n, padded = price.padded;
    // Priced, not a claim: two runs of each order, then more while the budget lasts.
    const cachebook::RunBudget budget{std::min(2, runs), runs, ch03::kPaddedSeconds};
    const auto again = ch03::time_orders(padded, budget, {LoopOrder::ikj, LoopOrder::jki});
    report.line("  ns per multiply-add, N = {} against N = {} (rows one line longer):",
                Value::exact("measured.padded.power_n", n), Value::exact("measured.padded.n", padded));
    for (const auto& o : again.orders) {
        const std::string at = "measured.padded." + name(o.order);
        report.line("    {}: {} against {}", name(o.order),
                    Value::measured(at + "_power_ns", ch03::madd_ns(timed, o.order), "{:.2f}"),
                    Value::measured(at + "_ns", ch03::madd_ns(again, o.order), "{:.2f}"));
    }
    report.line("  priced from this machine's profile before the timing (the appendix Priced):");
    report.line("    {}", Value::measured("measured.padded.levels", cachebook::levels_text(price.machine)));
    for (const auto& claim : ch03::padded_priced(price, timed, again))
        cachebook::report_priced(report, claim, claim.key.ends_with("over_padded") ? "{:.2f}x" : "{:.2f} ns");
}

}  // namespace

void measured_section(Report& report, const Options& options) {
    const auto n = static_cast<std::size_t>(options.measure_n);
    report.section("Measured: the six orders on {0} x {0} doubles ({1} KiB per matrix), integer-valued data",
                   Value::exact("measured.n", n), Value::exact("measured.kib_per_matrix", n * n * 8 / 1024));
    cachebook::Progress progress("six orders", 1);
    // The prediction comes first: the profile and the model, before any order is timed.
    const auto price = ch03::price_padded(n);
    report.record("profile", cachebook::profile_json(price.profile));
    const auto measured = ch03::measure_six_orders(n, static_cast<int>(options.runs), options.quick);
    const auto& timed = measured.timed;
    progress.step();
    report.record("measured.runs", measured.claim.outcome.slow_runs.size());
    report.record("measured.table_seconds", ch03::kOrdersSeconds);
    report.line("  results identical across the six orders: {} (sum of C = {})",
                Value::exact_as("measured.identical", timed.identical, timed.identical ? "yes" : "NO"),
                Value::exact("measured.checksum", timed.checksum, "{:.0f}"));
    auto table = report.table({"order", "inner", "ms (min of runs)", "vs best"});
    for (const auto& order : timed.orders)
        table.row({name(order.order), inner(order.order),
                   Value::measured("measured." + name(order.order) + "_ms", order.timing.min() * 1e3, "{:.1f}"),
                   Value::measured("measured." + name(order.order) + "_vs_best", order.timing.min() / timed.fastest(),
                                   "{:.1f}")});
    table.print();
    report.line("  fastest inner-i / fastest inner-j = {}",
                Value::measured("measured.i_over_j", timed.min_of('i') / timed.min_of('j'), "{:.1f}").quoted());
    report.line("  fastest inner-k / fastest inner-j = {}",
                Value::measured("measured.k_over_j", timed.min_of('k') / timed.min_of('j'), "{:.1f}").quoted());
    padded_lines(report, timed, price, static_cast<int>(options.runs));
    column_sets_line(report, n);
    cachebook::report_experiment(report, measured.claim.outcome);
    report.record("claims.inner_i.sides", {name(measured.claim.inner_i), name(measured.claim.inner_j)});
}

}  // namespace ch03
