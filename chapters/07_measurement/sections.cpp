// Chapter 7's output, section by section in the order printed: each result written once, through
// cachebook::Report, from what the lab's experiments return.
#include "sections.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch07 {

namespace {

using cachebook::Report;
using cachebook::Value;

// A measured time, given in seconds, printed and recorded in milliseconds.
Value milliseconds(std::string key, double seconds) {
    return Value::measured(std::move(key), seconds * 1e3, "{:.2f}");
}
// A measured ratio of two times, two decimals.
Value ratio(std::string key, double value) {
    return Value::measured(std::move(key), value, "{:.2f}");
}

}  // namespace

void preface(Report& report, const Options& options) {
    const std::size_t n = options.size();
    report.blank_line();
    report.line("  array for sections 4, 6, 11: {0} x {0} int = {1}; {2} runs per measurement unless stated",
                Value::exact("array.n", n),
                Value::exact_as("array.bytes", n * n * sizeof(int), cachebook::size_text(n * n * sizeof(int))),
                Value::exact("runs_per_measurement", options.run_count()));
    report.line("  share of a CPU this program gets right now: {} (1.00 on an idle machine)",
                Value::measured("cpu_share", ch07::cpu_share_now(), "{:.2f}").quoted());
}

void clock_section(Report& report, const Options& options) {
    const auto clocks = ch07::clock_rule(static_cast<int>(options.threads), options.run_count(), options.quick);
    report.section("The clock: time on the wall, not the process's CPU time");
    report.line("  the same {} multiply-adds on 1 thread, then split over {}", Value::exact("clock.work", clocks.work),
                Value::exact("clock.threads", options.threads));
    auto table = report.table({"threads", fmt::format("{} ms (CPU)", ch07::kCpuClockName),
                               fmt::format("{} ms (wall)", ch07::kWallClockName)});
    table.row({"1", milliseconds("clock.one_cpu_ms", clocks.one_cpu_s()),
               milliseconds("clock.one_wall_ms", clocks.one_wall_s())});
    table.row({fmt::format("{}", options.threads), milliseconds("clock.many_cpu_ms", clocks.many_cpu_s()),
               milliseconds("clock.many_wall_ms", clocks.many_wall_s())});
    table.print();
    report.line("  mistake: {} says the threads gave a speed-up of {}", ch07::kCpuClockName,
                ratio("clock.speedup_cpu", clocks.one_cpu_s() / clocks.many_cpu_s()).quoted());
    report.line("  right:   {} says {}", ch07::kWallClockName,
                ratio("clock.speedup_wall", clocks.one_wall_s() / clocks.many_wall_s()).quoted());
    report.line("  CPU time / wall time: {} on 1 thread, {} on {} (a share of a CPU below 1 means others ran too)",
                ratio("clock.one_cpu_over_wall", clocks.one_cpu_s() / clocks.one_wall_s()),
                ratio("clock.cpu_over_wall", clocks.many_cpu_s() / clocks.many_wall_s()).quoted(), options.threads);
    cachebook::report_experiment(report, clocks.cpu);
    cachebook::report_experiment(report, clocks.wall);
}

void runs_section(Report& report, const Options& options) {
    const auto batches = ch07::runs_rule(options.size(), ch07::kBatchRuns, options.quick);
    report.section("One run, or the minimum of several");
    report.line("  the row sum of {0} x {0} ints, {1} runs in each of two batches, in the order A B B A",
                Value::exact("runs.n", batches.n),
                Value::exact("runs.count", static_cast<int>(batches.batch_a.runs.size())));
    auto table =
        report.table_of_rows("runs.batches", {"batch", "first ms", "min ms", "median ms", "max ms", "max / min"});
    for (const auto& [name, batch] : {std::pair{"A", &batches.batch_a}, std::pair{"B", &batches.batch_b}})
        table.row({Value::exact("batch", std::string(name)), milliseconds("first_ms", batch->runs.front()),
                   milliseconds("min_ms", batch->min()), milliseconds("median_ms", batch->median()),
                   milliseconds("max_ms", batch->max()), ratio("max_over_min", batch->max() / batch->min())});
    table.print();
    report.record("runs.a", batches.batch_a.runs);
    report.record("runs.b", batches.batch_b.runs);
    report.line("  mistake: one run can land anywhere in a spread of {} %",
                Value::measured("runs.spread_percent", 100 * batches.spread(), "{:.0f}").quoted());
    report.line("  right:   the two minima differ by {} % (the claim: the larger is at most {}x the smaller)",
                Value::measured("runs.min_gap_percent", 100 * batches.min_gap(), "{:.1f}").quoted(),
                Value::exact("runs.apart_at_most", 1 + ch07::kMinimaTolerance, 2));
    cachebook::report_claim(report, "minima", "faster batch's minimum / slower's", batches.claim);
}

void first_touch_section(Report& report, const Options& options) {
    const std::size_t bytes = ch07::kTouchBytes;
    const auto touch = ch07::touch_rule(bytes, options.run_count(), options.quick);
    report.section("First touch outside the timed region");
    report.line("  filling {} MiB of freshly mapped memory, then filling it again",
                Value::exact("touch.mib", bytes >> 20));
    auto table = report.table({"fill", "ms", "minor page faults"});
    table.row({"first (pages faulted in)", milliseconds("touch.first_ms", touch.first_fill_s()),
               Value::measured("touch.faults_first", touch.faults_first)});
    table.row({"second (pages present)", milliseconds("touch.second_ms", touch.second_fill_s()),
               Value::measured("touch.faults_second", touch.faults_second)});
    table.print();
    report.line("  mistake: timing the first touch costs {}x",
                ratio("touch.ratio", touch.first_fill_s() / touch.second_fill_s()).quoted());
    cachebook::report_experiment(report, touch.timed);
}

void dead_code_section(Report& report, const Options& options) {
    const auto sums = ch07::dead_code_rule(options.size(), options.run_count(), options.quick);
    const auto elements = static_cast<double>(sums.n * sums.n);
    report.section("Use the result");
    auto table = report.table(
        {fmt::format("sum of {} ints, best of {}", sums.n * sums.n, sums.timed.slow_runs.size()), "ms", "ns/element"});
    table.row({"result thrown away", milliseconds("dead_code.unused_ms", sums.unused_s()),
               Value::measured("dead_code.unused_ns_per_element", sums.unused_s() * 1e9 / elements, "{:.3f}")});
    table.row({"result kept", milliseconds("dead_code.used_ms", sums.used_s()),
               Value::measured("dead_code.used_ns_per_element", sums.used_s() * 1e9 / elements, "{:.3f}")});
    table.print();
    report.line("  mistake: the loop whose result is unused was deleted: {}x \"faster\"; the sum is {}",
                Value::measured("dead_code.ratio", sums.used_s() / std::max(sums.unused_s(), 1e-9), "{:.0f}").quoted(),
                Value::exact("dead_code.sum", sums.sum));
    cachebook::report_experiment(report, sums.timed);
}

void optimisation_section(Report& report, const Options& options) {
    const auto n = static_cast<std::size_t>(options.product_n), tile = ch07::kProductTile;
    const auto builds = ch07::blocked_rule(n, tile, options.run_count(), options.quick);
    report.section("Judge at -O2, not -O0: the blocked product, one kernel file built twice");
    report.line("  C = A x B, {0} x {0} doubles; naive ijk against tiles of {1} x {1}", Value::exact("opt.n", n),
                Value::exact("opt.tile", tile));
    auto table = report.table({"build", "naive ms", "blocked ms", "naive / blocked"});
    table.row({"-O0", milliseconds("opt.naive_o0_ms", builds.naive_o0()),
               milliseconds("opt.blocked_o0_ms", builds.blocked_o0()),
               ratio("opt.gain_o0", builds.gain.under.value).quoted()});
    table.row({"-O2", milliseconds("opt.naive_o2_ms", builds.naive_o2()),
               milliseconds("opt.blocked_o2_ms", builds.blocked_o2()),
               ratio("opt.gain_o2", builds.gain.over.value).quoted()});
    table.print();
    report.line("  same results: {}; -O0 makes the blocked product {}x slower and hides the gain of blocking",
                Value::exact_as("opt.same_results", builds.same_results, builds.same_results ? "yes" : "NO"),
                ratio("opt.o0_over_o2_blocked", builds.blocked_o0() / builds.blocked_o2()).quoted());
    cachebook::report_claim(report, "o0_over_o2", "blocked at -O0 / at -O2", builds.o0_over_o2);
    cachebook::report_ratio_of_ratios(report, builds.gain);
}

namespace {
// The L1d as the machine reports it and where that came from, or the size assumed without one.
Value l1_here() {
    const auto l1 = cachebook::data_cache(1);
    if (!l1) return Value::unknown("l1_kib", "unknown, 32 KiB assumed");
    return Value::measured_as(
        "l1_kib", l1->size_bytes / 1024,
        fmt::format("{}, from {}", cachebook::size_text(l1->size_bytes), cachebook::source_name(l1->source)));
}
}  // namespace

void size_section(Report& report, const Options& options) {
    const std::size_t small = ch07::l1_resident_order(ch07::l1_geometry().capacity_bytes());
    const auto sizes = ch07::size_rule(small, options.size(), options.run_count(), options.quick);
    report.section("Data large enough to leave the caches (L1d here: {})", l1_here());
    auto table = report.table_of_rows("size", {"array", "KiB", "rows ns/el", "columns ns/el", "columns / rows"});
    for (const auto* row : {&sizes.small, &sizes.large}) {
        // The small array's size follows this machine's L1; the large one is the option's.
        const bool from_l1 = row == &sizes.small;
        table.row({from_l1 ? Value::measured("n", row->n, "{0} x {0}") : Value::exact("n", row->n, "{0} x {0}"),
                   from_l1 ? Value::measured("kib", row->bytes / 1024) : Value::exact("kib", row->bytes / 1024),
                   Value::measured("rows_ns", row->rows_ns, "{:.3f}"),
                   Value::measured("columns_ns", row->columns_ns, "{:.3f}"),
                   ratio("ratio", row->columns_ns / row->rows_ns).quoted()});
    }
    table.print();
    report.line("  mistake: an array that fits in L1 shows little difference between the loop orders");
    cachebook::report_ratio_of_ratios(report, sizes.claim);
}

void latency_section(Report& report, const Options& options) {
    const std::size_t hops = options.quick ? ch07::kQuickLatencyHops : ch07::kLatencyHops;
    const std::size_t large = options.quick ? ch07::kQuickLatencyBytes : ch07::kLatencyBytes;
    report.section("Strided sum against pointer chase: one int per line, {} accesses per run",
                   Value::exact("latency_hops", hops));
    auto table = report.table_of_rows(
        "latency", {"working set", "strided sum ns", "random, addresses known ns", "pointer chase ns"});
    ch07::LatencyRow row;
    for (std::size_t bytes : {std::size_t{16} << 10, large}) {
        row = ch07::latency_row(bytes, hops, options.run_count(), options.quick);
        table.row({Value::exact_as("bytes", row.bytes, cachebook::size_text(bytes)),
                   Value::measured("strided_ns", row.strided_ns, "{:.2f}"),
                   Value::measured("gather_ns", row.gather_ns, "{:.2f}"),
                   Value::measured("chase_ns", row.chase_ns, "{:.2f}")},
                  {{"chase_over_strided", fmt::format("{:.2f}", row.chase_ns / row.strided_ns)},
                   {"chase_over_gather", fmt::format("{:.2f}", row.chase_ns / row.gather_ns)}});
    }
    table.print();
    const auto largest = ch07::largest_cache_bytes();  // for the prose: is the large set beyond every cache?
    report.record("largest_cache_kib", largest ? nlohmann::json(*largest / 1024) : nlohmann::json(nullptr));
    report.line("  mistake: the strided sum reports {}x less than the latency the chase shows",
                Value::measured("latency_understated", row.chase_ns / row.strided_ns, "{:.0f}"));
    cachebook::report_experiment(report, row.over_strided);  // the claims, in the large working set
    cachebook::report_experiment(report, row.over_gather);
}

namespace {
// The walks counted by perf or cachegrind beside the model's count for the same geometry.
void counted_walks(Report& report, const ch07::PerfProbe& probe, std::size_t n) {
    const auto geometry = ch07::l1_geometry();
    const auto model = ch07::simulate_walks(geometry, n);
    const auto counts = ch07::count_walks(probe, geometry, n);
    const bool counted = !counts.tool.empty();
    report.record("counters.why_not", counts.why_not);
    report.record("counters.d1_flag", ch07::cachegrind_d1_flag(geometry));
    report.line(
        "  counting the chapter 2 walks of a {0} x {0} int array ({1} KiB) with {2}", Value::exact("counters.n", n),
        Value::exact("counters.kib", n * n * sizeof(int) / 1024),
        Value::measured_as("counters.tool", counts.tool, counted ? counts.tool : "nothing (" + counts.why_not + ")"));
    report.line("  L1d: {}", Value::measured("counters.geometry", geometry.describe()));
    auto tool = [&](std::string key, std::int64_t misses) {
        return counted ? Value::measured(std::move(key), misses) : Value::unknown(std::move(key), "n/a");
    };
    auto table = report.table({"walk", "accesses", "model misses", "tool misses (minus fill-only run)"});
    table.row({"rows", Value::exact("counters.accesses_rows", model.accesses),
               Value::measured("counters.model_rows", model.row_misses),
               tool("counters.tool_rows", counts.row_walk())});
    table.row({"columns", Value::exact("counters.accesses_columns", model.accesses),
               Value::measured("counters.model_columns", model.column_misses),
               tool("counters.tool_columns", counts.column_walk())});
    table.print();
    report.line("  the fill-only run itself: {} misses",
                tool("counters.baseline", static_cast<std::int64_t>(counts.baseline)));
}
}  // namespace

namespace {
// Chapter 3's six orders: the model's misses per inner iteration beside cachegrind's.
void counted_orders(Report& report, bool run_tool) {
    constexpr std::size_t n = 64;  // chapter 3's six-order table: N = 64, 32 lines, fully associative
    const auto cache = cachebook::CacheConfig::fully_associative(32, 64);
    const auto counted = run_tool ? ch07::cachegrind_orders(cache, n) : ch07::OrderCounts{"--counters 0", 0, {}};
    const bool have = counted.why_not.empty();
    report.blank_line();
    report.line("  chapter 3's six orders, N = {}: misses per inner iteration", Value::exact("orders.n", n));
    report.line("  cachegrind: chapter 3's code as built here, minus a run that only fills the matrices");
    report.line("  cache: {}; cachegrind {}: {}", Value::exact("orders.cache", cache.describe()),
                Value::exact("orders.d1_flag", ch07::cachegrind_d1_flag(cache)),
                have ? Value::measured_as("orders.counted", true, "counted")
                     : Value::unknown("orders.counted", "not run (" + counted.why_not + ")"));
    const auto rows = ch07::order_rows(counted, n, cache);
    auto table = report.table_of_rows(
        "orders.rows", {"order", "model A", "model B", "model C", "model total", "cachegrind", "compared"});
    auto three = [](std::string key, double v) { return Value::exact_as(std::move(key), v, fmt::format("{:.3f}", v)); };
    for (const auto& row : rows)
        table.row({Value::exact("order", std::string(cachebook::order_name(row.order))), three("model_a", row.model.a),
                   three("model_b", row.model.b), three("model_c", row.model.c),
                   three("model_total", row.model.total()),
                   have ? Value::measured("cachegrind", row.counted, "{:.3f}") : Value::unknown("cachegrind", "n/a"),
                   have ? Value::measured("compared", row.compared) : Value::unknown("compared", "-")});
    table.print();
    // The orders cachegrind counts away from the model, for the prose.
    report.record("orders.fewer", ch07::orders_compared(rows, "fewer"));
    report.record("orders.more", ch07::orders_compared(rows, "more"));
}
}  // namespace

void counters_section(Report& report, const Options& options) {
    report.section("Hardware counters");
    const auto probe = ch07::probe_perf("cache-misses");
    report.line("  perf stat -e cache-misses: {}",
                Value::measured("perf.state", std::string(ch07::perf_state_name(probe.state))));
    report.record("perf.detail", probe.detail);
    if (options.counters == 0)
        report.line("  --counters 0: not run");
    else
        counted_walks(report, probe, static_cast<std::size_t>(options.walk_n));
    counted_orders(report, options.counters == 1);
}

void amdahl_section(Report& report) {
    report.section("When not to bother (Amdahl)");
    auto table = report.table_of_rows("amdahl", {"share of the time", "made faster by", "whole program faster by"});
    for (auto [share, speedup] : {std::pair{0.02, 10.0}, {0.02, 1e9}, {0.5, 2.0}, {0.9, 10.0}}) {
        const double whole = ch07::amdahl(share, speedup);
        table.row({Value::exact_as("share", share, fmt::format("{:.0f} %", 100 * share)),
                   Value::exact_as("speedup", speedup, speedup > 1e6 ? "infinitely" : fmt::format("{:.0f}x", speedup)),
                   Value::exact_as("whole", fmt::format("{:.3f}", whole), fmt::format("{:.3f}x", whole))},
                  {{"percent", fmt::format("{:.1f}", 100 * (whole - 1))}});
    }
    table.print();
}

void checklist_section(Report& report) {
    report.section("Checklist for an optimisation someone hands you");
    for (const char* item :
         {"row-major or column-major? work out the inner loop's stride yourself",
          "check the claimed misses per iteration by hand or with a small LRU model (note N, line, cache)",
          "check a tile size against 3 T^2 S <= 3/4 of the cache, and test the edges when T does not divide N",
          "compare the new result with the old one",
          "time at -O2, with the result used, the minimum of several runs; state the machine and the size",
          "measure prefetch or padding on its own; if it gains nothing, take it out"})
        report.line("  [ ] {}", item);
}

namespace {
// What the audit's verdict tells the person who proposed the change.
std::string audit_advice(const std::string& verdict) {
    if (verdict == "holds") return "the claim holds here: keep it, and state the machine";
    if (verdict == "smaller") return "a gain beyond the noise, smaller than claimed: keep it with the measured figure";
    if (verdict == "slower") return "slower with the prefetch, by more than the noise: take it out";
    if (verdict == "none") return "no gain beyond this run's noise: take it out";
    return "this run cannot decide: measure again on a quieter machine";
}
}  // namespace

void audit_section(Report& report, const Options& options) {
    const auto audit = ch07::audit_prefetch(options.size(), 5 * options.run_count(), options.quick);
    const auto& model = audit.model;
    report.section("Auditing one claim: \"a prefetch makes the row sum {} % faster\"",
                   Value::exact("audit.claimed_percent", std::lround(100 * (ch07::kClaimedSpeedup - 1))));
    report.line("  1. stride: the inner index is the right one of a row-major array: {} bytes per step",
                Value::exact("audit.stride_bytes", model.stride_bytes));
    report.line("  2. model, cache {}:", Value::measured("audit.cache", ch07::l1_geometry().describe()));
    report.line("     lines fetched per element {} without, {} with a prefetch {} elements ahead",
                Value::exact_as("audit.model_plain", model.model_plain, fmt::format("{:.4f}", model.model_plain)),
                Value::exact_as("audit.model_prefetched", model.model_prefetched,
                                fmt::format("{:.4f}", model.model_prefetched)),
                Value::exact("audit.distance", model.distance));
    report.line("  3. tile: none in this change, nothing to check");
    report.line("  4. same sums: {}",
                Value::exact_as("audit.same_sums", audit.same_sums, audit.same_sums ? "yes" : "NO"));
    report.line("  5. -O2, best of {0} interleaved runs, {1} x {1} ints: {2} ms without, {3} ms with",
                Value::exact("audit.runs", static_cast<int>(audit.timed.slow_runs.size())),
                Value::exact("audit.n", model.n), milliseconds("audit.plain_ms", audit.plain_s()),
                milliseconds("audit.prefetched_ms", audit.prefetched_s()));
    const auto claims = ch07::audit_claims(audit.timed);
    const std::string verdict = ch07::audit_verdict(claims);
    report.line("  6. measured on its own: {}x; {}",
                ratio("audit.speedup", audit.plain_s() / audit.prefetched_s()).quoted(),
                Value::measured_as("audit.verdict", verdict, audit_advice(verdict)));
    cachebook::report_experiment(report, audit.timed);
    cachebook::report_claim(report, "audit_gain", "plain / prefetched (any gain)", claims.any_gain);
}

}  // namespace ch07
