// ch08_cliff: prints what chapter 8 shows, one function per numbered section.
// The lesson is cliff.cpp, the experiment lab.cpp; each result is written once, through cachebook::Report.
#include <fmt/format.h>

#include <optional>

#include "cachebook/claim.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"

namespace {

using cachebook::Report;
using cachebook::size_text;
using cachebook::Value;
using ch08::Options;

std::optional<int> parse(cachebook::Cli& cli, Options& options, int argc, char** argv) {
    cli.add_int("--seed", options.seed, "Seed of the random cycles and chunk orders", 0, INT64_MAX);
    cli.add_int("--runs", options.runs, "Timed runs per size, best kept (0: 15, or 7 with --quick)", 0, 100);
    cli.add_int("--steps", options.steps, "Sizes per octave (0: 8, or 4 with --quick)", 0, 16);
    cli.add_int("--max-mib", options.max_mib, "Largest working set in MiB (0: from the reported last-level cache)", 0,
                4096);
    cli.add_string("--csv", options.csv_path, "Write the curve (size, ns per access of each method) to this CSV file");
    if (auto status = cli.parse(argc, argv)) return status;
    if (options.steps != 0 && options.steps < 4)
        throw cachebook::UsageError("--steps: at least 4 sizes per octave (or 0)");
    if (!options.csv_path.empty()) cachebook::check_writable(options.csv_path);
    options.quick = cli.quick();
    return std::nullopt;
}

// A block of machine-dependent lines (its row count varies too), printed as one
// measured value, without its last newline.
Value block(std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return Value::measured("", text);
}

// null when absent ("not found" in the JSON, never a made-up number).
template <class T>
nlohmann::json opt_json(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

void experiment_section(Report& report, const Options& options, const ch08::Setup& setup) {
    report.section("The experiment");
    const auto cpu_model = Value::measured("cpu", cachebook::cpu_model());
    if (setup.pinned)
        report.line("  CPU: {}; pinned to cpu {}", cpu_model, Value::measured("", setup.cpu));
    else
        report.line("  CPU: {}; not pinned (refused)", cpu_model);
    report.record("pinned", setup.pinned);
    report.line("  seed {}: a random single cycle through {}-byte nodes, one node per line",
                Value::exact("seed", options.seed), ch08::kNodeBytes);
    report.line("  sizes: {} to {} at {} per octave ({} sizes); upper bound: {}", size_text(setup.sizes.front()),
                Value::measured("", size_text(setup.sizes.back())),
                Value::exact("steps_per_octave", options.per_octave()), Value::measured("", setup.sizes.size()),
                Value::measured("upper_bound.why", setup.upper.why));
    report.record("upper_bound.bytes", setup.upper.bytes);
    const bool thp = setup.huge_pages_available;
    report.line("  best of {} runs per size; transparent huge pages: {}", Value::exact("runs", options.run_count()),
                Value::measured_as("huge_pages_available", thp,
                                   thp ? "available (madvise)" : "not available: the huge-page sweep is skipped"));
}

void clock_section(Report& report, std::optional<double> ghz) {
    report.section("The clock");
    if (ghz)
        report.line("  a chain of dependent adds runs at {} GHz (one add per cycle)",
                    Value::measured("clock_ghz", *ghz, "{:.2f}"));
    else
        report.line("  no clock estimate on this architecture: latencies are given in ns only{}",
                    Value::unknown("clock_ghz", "", false));
}

void curve_section(Report& report, const Options& options, const ch08::Curves& curves, std::optional<double> ghz) {
    const bool every_second = options.per_octave() > 4;
    report.section("The curve: ns per access by working-set size{}",
                   every_second ? " (every second size; --csv has all)" : "");
    const auto& small = curves.small_pages;
    const auto& huge = curves.huge_pages;
    cachebook::Table table({"size", "chase 4K", "cycles", "strided sum", "chase huge"});
    for (std::size_t k = 0; k < small.size(); ++k) {
        if (every_second && k % 2 != 0 && k + 1 != small.size()) continue;
        const auto& p = small[k];
        table.row({size_text(p.bytes), fmt::format("{:.2f}", p.chase_ns),
                   ghz ? fmt::format("{:.1f}", p.chase_ns * *ghz) : "-", fmt::format("{:.2f}", p.strided_ns),
                   huge.empty() ? "-" : fmt::format("{:.2f}", huge[k].chase_ns)});
    }
    report.line("{}", block(table.render()));
    report.record("curve", ch08::curve_json(curves));
}

std::string cliffs_text(const std::vector<ch08::Cliff>& cliffs, const std::vector<ch08::Point>& curve) {
    if (cliffs.empty()) return "  no step of 50 % or more found\n";
    std::string s;
    for (const auto& c : cliffs)
        s += fmt::format("  rise from {:>9}, halfway at {:>9}: {:7.2f} ns -> {:7.2f} ns (x{:.1f})\n",
                         size_text(curve[c.last_flat].bytes), size_text(c.capacity_bytes), c.below_ns, c.above_ns,
                         c.above_ns / c.below_ns);
    return s;
}

void cliffs_section(Report& report, const ch08::Curves& curves, const ch08::CliffSets& cliffs) {
    report.section("Steps in the curves (running median of 3; a step is a rise of 50 % or more)");
    report.line("  pointer chase, 4 KiB pages:");
    report.line("{}", block(cliffs_text(cliffs.small_pages, curves.small_pages)));
    report.line("  pointer chase, huge pages:");
    const auto& huge = curves.huge_pages;
    report.line("{}", block(huge.empty() ? std::string("  not measured: no transparent huge pages here\n")
                                         : fmt::format("  ({:.0f} % of the largest buffer in huge pages)\n{}",
                                                       100.0 * static_cast<double>(huge.back().huge_bytes) /
                                                           static_cast<double>(huge.back().bytes),
                                                       cliffs_text(cliffs.huge_pages, huge))));
    report.line("  strided sum (the wrong method), 4 KiB pages:");
    report.line("{}", block(cliffs_text(cliffs.strided, curves.small_pages)));
    report.record("cliffs.small_pages", ch08::cliffs_json(cliffs.small_pages));
    report.record("cliffs.huge_pages", ch08::cliffs_json(cliffs.huge_pages));
    report.record("cliffs.strided", ch08::cliffs_json(cliffs.strided));
}

// A latency in ns and in cycles (where the clock is known), as the levels table prints them,
// recorded at `key` (ns) and `cycles_key`.
std::vector<Value> latency_cells(const std::string& key, const std::string& cycles_key, std::optional<double> ns,
                                 std::optional<double> ghz) {
    const auto cycles = ns && ghz ? std::optional<double>(*ns * *ghz) : std::nullopt;
    return {Value::measured_as(key, opt_json(ns), ns ? fmt::format("{:.2f} ns", *ns) : "-"),
            Value::measured_as(cycles_key, opt_json(cycles), cycles ? fmt::format("{:.1f}", *cycles) : "-")};
}

// One row of the levels table; each cell is recorded under levels.<name>.
std::vector<Value> level_row(const ch08::Level& l, bool from_huge_pages, std::optional<double> ghz) {
    const std::string key = "levels." + l.name + ".";
    const auto latency = latency_cells(key + "latency_ns", key + "cycles", l.latency_ns, ghz);
    return {Value::exact(key + "name", l.name),
            Value::measured_as(key + "detected_bytes", opt_json(l.detected),
                               l.detected ? size_text(*l.detected) : "not found"),
            Value::measured_as(key + "reported_bytes", opt_json(l.reported),
                               l.reported ? size_text(*l.reported) : "unknown"),
            Value::measured_as(key + "difference_pct", opt_json(l.difference_pct),
                               l.difference_pct ? fmt::format("{:+.1f} %", *l.difference_pct) : "-"),
            latency[0],
            latency[1],
            Value::measured("", ch08::explain(l, from_huge_pages))};
}

void levels_section(Report& report, const ch08::Setup& setup, const ch08::LevelsFound& found, std::optional<double> ghz,
                    const cachebook::ClaimResult& first_cliff) {
    const bool huge = found.from_huge_pages;
    report.section(
        "The levels found (from the {} sweep) next to the sizes the machine reports",
        Value::measured_as("levels_from", huge ? "huge_pages" : "small_pages", huge ? "huge-page" : "4 KiB-page"));
    auto table = report.table({"level", "detected", "reported", "difference", "latency", "cycles", "why they differ"});
    for (const auto& l : found.levels) {
        table.row(level_row(l, huge, ghz));
        report.record(
            "levels." + l.name + ".within_15pct",
            opt_json(l.detected && l.reported ? std::optional<bool>(ch08::within(*l.detected, *l.reported, 0.15))
                                              : std::nullopt));
    }
    const auto beyond = latency_cells("beyond_ns", "", found.beyond_ns, ghz);
    table.row({"beyond", "-", "-", "-", beyond[0], beyond[1], "the plateau after the last step"});
    table.print();
    report.line("  where the reported sizes come from: {}",
                Value::measured("", ch08::reported_sources(cachebook::machine())));
    report.record(
        "reported_sources",
        {{"L1d", ch08::source_of(setup.l1)}, {"L2", ch08::source_of(setup.l2)}, {"L3", ch08::source_of(setup.l3)}});
    report.line("  two more sweeps from 4 KiB to 4 x L1d, with other cycles, each the other's control:");
    cachebook::report_claim(report, "first_cliff", "first step at 75 % to 115 % of the reported L1d, its rise",
                            first_cliff);
}

void wrong_method_section(Report& report, const ch08::Setup& setup, const ch08::Curves& curves,
                          const ch08::CliffSets& cliffs) {
    report.section("The wrong method: a strided sum over the same buffers");
    auto table = report.table_of_rows("wrong_method", {"size", "chase ns", "strided sum ns", "chase / strided"});
    double last_ratio = 0;
    for (const auto& p : ch08::wrong_method_points(setup, curves)) {
        last_ratio = p.chase_ns / p.strided_ns;
        table.row({Value::measured_as("bytes", p.bytes, size_text(p.bytes)),
                   Value::measured("chase_ns", p.chase_ns, "{:.2f}"),
                   Value::measured("strided_ns", p.strided_ns, "{:.2f}"),
                   Value::measured("ratio", last_ratio, "{:.1f}x")});
    }
    table.print();
    report.record("wrong_method_largest_ratio", last_ratio);
    report.line("  the strided sum finds {} step(s), the chase {}", Value::measured("", cliffs.strided.size()),
                Value::measured("", cliffs.small_pages.size()));
}

std::string line_text(const std::optional<std::size_t>& bytes) {
    return bytes ? fmt::format("{} bytes", *bytes) : std::string("not found");
}

void line_size_section(Report& report, const ch08::LineSizes& line) {
    report.section("The line size: chunks 4 MiB apart, in random order, on lines flushed from every cache");
    if (!line.touches.measured) {
        report.line("{}", block("  not measured: flushing a line needs clflush (x86-64) or dc civac (64-bit ARM)"));
        report.record("line", nullptr);
        return;
    }
    auto table = report.table_of_rows(
        "line.points", {"stride S", "4 touches at 0,S,2S,3S: ns per touch", "probe of base+S after flushing base: ns"});
    for (std::size_t i = 0; i < line.strides.size(); ++i)
        table.row({Value::exact_as("stride", line.strides[i], fmt::format("{} B", line.strides[i])),
                   Value::measured("touch_ns", line.touches.points[i].ns, "{:.1f}"),
                   Value::measured("probe_ns", line.probe.points[i].ns, "{:.1f}")});
    table.print();
    const auto& touches = line.touches.line_bytes;
    const auto& probe = line.probe.line_bytes;
    report.line("  line size from the touches (where the cost stops growing): {}",
                Value::measured_as("line.touches_bytes", opt_json(touches), line_text(touches)));
    report.line("  line size from the flush probe (first stride that survives the flush): {}",
                Value::measured_as("line.detected_bytes", opt_json(probe), line_text(probe)));
    const auto& machine = cachebook::machine();
    const auto reported = machine.line_bytes();
    const std::string source = cachebook::source_name(machine.line_source());
    report.line("  the line size the machine reports: {}",
                reported ? Value::measured_as("line.reported_bytes", *reported,
                                              fmt::format("{} bytes (from {})", *reported, source))
                         : Value::unknown("line.reported_bytes", machine.why_unknown("the line size")));
    report.record("line.reported_source", source);
    report.record("line.exact", probe && reported && *probe == *reported);
}

void pages_section(Report& report, const Options& options, const ch08::Setup& setup, const ch08::Curves& curves) {
    report.section("Pages: 4 KiB pages against huge pages");
    report.record("huge_pages_granted", curves.huge_granted());
    if (curves.huge_pages.empty()) {
        report.line("{}", block("  transparent huge pages are not available here; no comparison"));
        return;
    }
    const auto& small = curves.small_pages;
    const auto& huge = curves.huge_pages;
    cachebook::Table table({"size", "4 KiB pages ns", "huge pages ns", "4K / huge"});
    for (std::size_t k = 0; k < setup.sizes.size(); k += static_cast<std::size_t>(options.per_octave()))
        table.row({size_text(setup.sizes[k]), fmt::format("{:.2f}", small[k].chase_ns),
                   fmt::format("{:.2f}", huge[k].chase_ns),
                   fmt::format("{:.2f}", small[k].chase_ns / huge[k].chase_ns)});
    std::string text = table.render();
    if (!curves.huge_granted()) text += "  the kernel granted no huge pages: the two curves measure the same thing\n";
    report.line("{}", block(text));
    const auto ratios = ch08::page_ratios(setup, curves);
    report.record("pages_largest_ratio", ratios.back()["ratio"]);
    report.record("pages", ratios);
}

// ---- The second page: loads in flight, read bandwidth, the memory mountain ----------------

Value ns_cell(const ch08::ChaseCurve& c, std::size_t k, double divisor = 1) {
    return c.ns.empty() ? Value::unknown("", "-") : Value::measured("", c.ns[k - 1] / divisor, 2);
}

void chases_table(Report& report, const std::vector<ch08::ChaseCurve>& curves) {
    auto table = report.table({"k", "L2 ns", "L3 ns", "memory ns", "memory: one chase / k"});
    const auto& memory = curves.back();
    for (std::size_t k = 1; k <= ch08::kMaxChases; ++k)
        table.row({fmt::format("{}", k), ns_cell(curves[0], k), ns_cell(curves[1], k), ns_cell(memory, k),
                   ns_cell(memory, 1, static_cast<double>(k))});
    table.print();
}

void chases_section(Report& report, const std::vector<ch08::ChaseCurve>& curves,
                    const cachebook::ExperimentResult& claim, const std::string& memory_where) {
    report.section("Loads in flight: k independent chases at once, ns per access (best of runs)");
    for (const auto& c : curves)
        report.line("  {}: {}", c.level,
                    c.bytes != 0 ? Value::measured("", "working set " + size_text(c.bytes))
                                 : Value::measured("", "not measured: " + cachebook::machine().why_unknown(c.level)));
    report.line("  the memory working set lies {}", Value::measured("mlp.memory_where", memory_where));
    chases_table(report, curves);
    for (const auto& c : curves) {
        report.record("mlp." + c.level, ch08::to_json(c));
        const bool timed = !c.ns.empty();
        report.line("  {}: the knee at k = {} (within 10 % of the best, {} ns); one chase / best = {} loads in flight",
                    c.level, timed ? Value::measured("", c.knee.k) : Value::unknown("", "-"),
                    timed ? Value::measured("", c.knee.best_ns, 2) : Value::unknown("", "-"),
                    timed ? Value::measured("", c.knee.in_flight, 1) : Value::unknown("", "-"));
    }
    cachebook::report_experiment(report, claim);
}

void levels_bandwidth_section(Report& report, const std::vector<cachebook::LevelBandwidth>& levels,
                              const std::vector<ch08::ChaseCurve>& chases) {
    report.section("Read bandwidth by level: a sequential sum on one core");
    auto table = report.table({"level", "working set", "GB/s"});
    for (const auto& l : levels) {
        const std::string key = "bandwidth.read_gbs." + l.name;
        table.row({l.name,
                   l.bytes ? Value::measured_as("bandwidth.bytes." + l.name, l.bytes, size_text(l.bytes))
                           : Value::unknown("bandwidth.bytes." + l.name, "unknown"),
                   l.gbs ? Value::measured(key, *l.gbs, 1) : Value::unknown(key, "-")});
    }
    table.print();
    const auto& memory = chases.back();
    report.line("  demand misses alone (chases at their best, a line each): {} GB/s in memory",
                memory.ns.empty() ? Value::unknown("bandwidth.demand_gbs", "-")
                                  : Value::measured("bandwidth.demand_gbs", 64.0 / memory.knee.best_ns, 1));
}

void mountain_table(Report& report, const ch08::Mountain& m) {
    std::vector<std::string> header = {"size \\ stride"};
    for (std::size_t s : m.strides) header.push_back(fmt::format("{} B", 8 * s));
    cachebook::Table table(header);
    for (std::size_t i = 0; i < m.sizes.size(); ++i) {
        std::vector<std::string> row = {size_text(m.sizes[i])};
        for (double g : m.gbs[i]) row.push_back(fmt::format("{:.1f}", g));
        table.row(row);
    }
    report.line("{}", block(table.render()));
}

void mountain_section(Report& report, const ch08::Mountain& m) {
    report.section("The memory mountain: GB/s read by working set and stride");
    mountain_table(report, m);
    report.record("bandwidth.mountain", ch08::to_json(m));
    const auto peak = ch08::mountain_peak(m);
    report.line(
        "  the peak: {} GB/s, at {} and a stride of {}", Value::measured("bandwidth.peak.gbs", peak.gbs, 1),
        Value::measured_as("bandwidth.peak.bytes", peak.bytes, size_text(peak.bytes)),
        Value::measured_as("bandwidth.peak.stride_bytes", 8 * peak.stride, fmt::format("{} B", 8 * peak.stride)));
    const std::size_t reach = ch08::prefetch_reach(m.strides, m.gbs.back());
    report.line("  at {}, lines arrive at 80 % or more of the stride-8 B rate up to a stride of {}",
                Value::measured("", size_text(m.sizes.back())),
                Value::measured_as("bandwidth.prefetch_reach_bytes", 8 * reach, fmt::format("{} B", 8 * reach)));
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch08_cliff", [&] {
        cachebook::Cli cli("ch08_cliff",
                           "Chapter 8: find the cache levels, their latencies and the line size by timing alone");
        Options options;
        if (auto status = parse(cli, options, argc, argv)) return *status;
        const ch08::RunTime run_time;
        const ch08::Setup setup = ch08::set_up(options);
        Report report("Chapter 8 · Finding the cache cliffs by timing alone");
        experiment_section(report, options, setup);
        const auto ghz = ch08::clock_ghz(options);
        clock_section(report, ghz);
        const ch08::Curves curves = ch08::sweep(options, setup);
        curve_section(report, options, curves, ghz);
        const ch08::CliffSets cliffs = ch08::find_cliffs(setup, curves);
        cliffs_section(report, curves, cliffs);
        const ch08::LevelsFound found = ch08::find_levels(setup, curves, cliffs);
        levels_section(report, setup, found, ghz, ch08::first_cliff_of(setup));
        wrong_method_section(report, setup, curves, cliffs);
        line_size_section(report, ch08::measure_line_sizes(options));
        pages_section(report, options, setup, curves);
        const auto sizes = ch08::level_sizes(setup);
        const auto chases = ch08::measure_chases(sizes, options);
        chases_section(report, chases, ch08::ChasesExperiment(sizes.memory).run(options.quick),
                       ch08::where_memory_set(setup));
        levels_bandwidth_section(report, ch08::measure_levels(sizes, options), chases);
        mountain_section(report, ch08::measure_mountain(sizes.memory, options));
        ch08::amat_section(report, ch08::price_a_miss(options, setup, curves, found), ch08::amat_matrix_side(options));
        if (!options.csv_path.empty()) ch08::write_csv(options.csv_path, setup, curves);
        run_time.record(report);
        report.save(cli.json_path());
        return 0;
    });
}
