// Chapter 8's output, sections 1 to 11: each figure a Value made once, with its JSON key; a block
// whose rows vary by machine (the curve, the steps, the mountain) is one measured Value, its text
// the block and its JSON the figures. Section 12 follows in sections_amat.cpp.
#include "sections.hpp"

#include <fmt/format.h>

#include "cachebook/claim.hpp"
#include "cachebook/machine.hpp"

namespace ch08 {
namespace {

using cachebook::Report;
using cachebook::size_text;
using cachebook::Value;

// A block of machine-dependent lines recorded at `key` as `json`, printed without its last newline.
Value measured_block(std::string key, nlohmann::json json, std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return Value::measured_as(std::move(key), std::move(json), std::move(text));
}

// null when absent ("not found" in the JSON, never a made-up number).
template <class T>
nlohmann::json opt_json(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

void experiment_section(Report& report, const Options& options, const Setup& setup) {
    report.section("The experiment");
    const auto cpu_model = Value::measured("cpu", cachebook::cpu_model());
    if (setup.pinned)
        report.line("  CPU: {}; pinned to cpu {}", cpu_model, Value::measured("pinned_cpu", setup.cpu));
    else
        report.line("  CPU: {}; not pinned (refused)", cpu_model);
    report.record("pinned", setup.pinned);
    report.line("  seed {}: a random single cycle through {}-byte nodes, one node per line",
                Value::exact("seed", options.seed), kNodeBytes);
    report.line("  sizes: {} to {} at {} per octave ({} sizes); upper bound: {}", size_text(setup.sizes.front()),
                Value::measured_as("sweep.largest_bytes", setup.sizes.back(), size_text(setup.sizes.back())),
                Value::exact("steps_per_octave", options.per_octave()),
                Value::measured("sweep.sizes", setup.sizes.size()),
                Value::measured("upper_bound.why", setup.upper.why));
    report.record("upper_bound.bytes", setup.upper.bytes);
    const bool thp = setup.huge_pages_available;
    // The rule is recorded as its words: its small counts would otherwise match every "4 KiB" of the prose.
    const std::string settled =
        fmt::format("at least {}, the last {} lowering it by less than 1 %", kMinSettledRuns, kHeldRuns);
    report.line("  best of {} runs per size, a size past {} fewer once its best has settled ({})",
                Value::exact("runs", options.run_count()), size_text(SweepConfig{}.interleave_max_bytes),
                Value::exact("settled_rule", settled));
    report.line("  transparent huge pages: {}",
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

void curve_section(Report& report, const Options& options, const Curves& curves, std::optional<double> ghz) {
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
    report.line("{}", measured_block("curve", curve_json(curves), table.render()));
}

namespace {

std::string cliffs_text(const std::vector<Cliff>& cliffs, const std::vector<Point>& curve) {
    if (cliffs.empty()) return "  no step of 50 % or more found\n";
    std::string s;
    for (const auto& c : cliffs)
        s += fmt::format("  rise from {:>9}, halfway at {:>9}: {:7.2f} ns -> {:7.2f} ns (x{:.1f})\n",
                         size_text(curve[c.last_flat].bytes), size_text(c.capacity_bytes), c.below_ns, c.above_ns,
                         c.above_ns / c.below_ns);
    return s;
}

std::string huge_cliffs_text(const std::vector<Cliff>& cliffs, const std::vector<Point>& huge) {
    if (huge.empty()) return "  not measured: no transparent huge pages here\n";
    const double share = static_cast<double>(huge.back().huge_bytes) / static_cast<double>(huge.back().bytes);
    return fmt::format("  ({:.0f} % of the largest buffer in huge pages)\n{}", 100.0 * share,
                       cliffs_text(cliffs, huge));
}

}  // namespace

void cliffs_section(Report& report, const Curves& curves, const CliffSets& cliffs) {
    report.section("Steps in the curves (running median of 3; a step is a rise of 50 % or more)");
    report.line("  pointer chase, 4 KiB pages:");
    report.line("{}", measured_block("cliffs.small_pages", cliffs_json(cliffs.small_pages),
                                     cliffs_text(cliffs.small_pages, curves.small_pages)));
    report.line("  pointer chase, huge pages:");
    report.line("{}", measured_block("cliffs.huge_pages", cliffs_json(cliffs.huge_pages),
                                     huge_cliffs_text(cliffs.huge_pages, curves.huge_pages)));
    report.line("  strided sum (the wrong method), 4 KiB pages:");
    report.line("{}", measured_block("cliffs.strided", cliffs_json(cliffs.strided),
                                     cliffs_text(cliffs.strided, curves.small_pages)));
}

namespace {

// A latency in ns and in cycles (where the clock is known), as the levels table prints them,
// recorded at `key` (ns) and `cycles_key`.
std::vector<Value> latency_cells(const std::string& key, const std::string& cycles_key, std::optional<double> ns,
                                 std::optional<double> ghz) {
    const auto cycles = ns && ghz ? std::optional<double>(*ns * *ghz) : std::nullopt;
    return {Value::measured_as(key, opt_json(ns), ns ? fmt::format("{:.2f} ns", *ns) : "-"),
            Value::measured_as(cycles_key, opt_json(cycles), cycles ? fmt::format("{:.1f}", *cycles) : "-")};
}

// One row of the levels table; each cell is recorded under levels.<name>.
std::vector<Value> level_row(const Level& l, bool from_huge_pages, std::optional<double> ghz) {
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
            Value::measured(key + "why", explain(l, from_huge_pages))};
}

}  // namespace

void levels_section(Report& report, const Setup& setup, const LevelsFound& found, std::optional<double> ghz,
                    const cachebook::ExperimentResult& first_cliff) {
    const bool huge = found.from_huge_pages;
    report.section(
        "The levels found (from the {} sweep) next to the sizes the machine reports",
        Value::measured_as("levels_from", huge ? "huge_pages" : "small_pages", huge ? "huge-page" : "4 KiB-page"));
    auto table = report.table({"level", "detected", "reported", "difference", "latency", "cycles", "why they differ"});
    for (const auto& l : found.levels) {
        table.row(level_row(l, huge, ghz));
        report.record("levels." + l.name + ".within_15pct",
                      opt_json(l.detected && l.reported ? std::optional<bool>(within(*l.detected, *l.reported, 0.15))
                                                        : std::nullopt));
    }
    const auto beyond = latency_cells("beyond_ns", "beyond_cycles", found.beyond_ns, ghz);
    table.row({"beyond", "-", "-", "-", beyond[0], beyond[1], "the plateau after the last step"});
    table.print();
    const nlohmann::json sources = {
        {"L1d", source_of(setup.l1)}, {"L2", source_of(setup.l2)}, {"L3", source_of(setup.l3)}};
    report.line("  where the reported sizes come from: {}",
                Value::measured_as("reported_sources", sources, reported_sources(cachebook::machine())));
    report.line("  the first step, timed on its own: a chase over each edge of the band, in turn:");
    cachebook::report_experiment(report, first_cliff);
}

void wrong_method_section(Report& report, const Setup& setup, const Curves& curves, const CliffSets& cliffs) {
    report.section("The wrong method: a strided sum over the same buffers");
    auto table = report.table_of_rows("wrong_method", {"size", "chase ns", "strided sum ns", "chase / strided"});
    double last_ratio = 0;
    for (const auto& p : wrong_method_points(setup, curves)) {
        last_ratio = p.chase_ns / p.strided_ns;
        table.row({Value::measured_as("bytes", p.bytes, size_text(p.bytes)),
                   Value::measured("chase_ns", p.chase_ns, "{:.2f}"),
                   Value::measured("strided_ns", p.strided_ns, "{:.2f}"),
                   Value::measured("ratio", last_ratio, "{:.1f}x")});
    }
    table.print();
    report.record("wrong_method_largest_ratio", last_ratio);
    // Counts found by a measurement, recorded as fractions as the knee is: whole by chance, not numbers the prose
    // types.
    const auto steps = [](const std::string& key, std::size_t n) {
        return Value::measured_as(key, static_cast<double>(n), fmt::format("{}", n));
    };
    report.line("  the strided sum finds {} step(s), the chase {}",
                steps("wrong_method_steps.strided", cliffs.strided.size()),
                steps("wrong_method_steps.chase", cliffs.small_pages.size()));
}

namespace {

std::string line_text(const std::optional<std::size_t>& bytes) {
    return bytes ? fmt::format("{} bytes", *bytes) : std::string("not found");
}

}  // namespace

void line_size_section(Report& report, const LineSizes& line) {
    report.section("The line size: chunks 4 MiB apart, in random order, on lines flushed from every cache");
    if (!line.touches.measured) {
        const std::string why = "  not measured: flushing a line needs clflush (x86-64) or dc civac (64-bit ARM)";
        report.line("{}", measured_block("line", nullptr, why));
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

void pages_section(Report& report, const Options& options, const Setup& setup, const Curves& curves) {
    report.section("Pages: 4 KiB pages against huge pages");
    report.record("huge_pages_granted", curves.huge_granted());
    if (curves.huge_pages.empty()) {
        report.line("{}",
                    measured_block("pages", nullptr, "  transparent huge pages are not available here; no comparison"));
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
    const auto ratios = page_ratios(setup, curves);
    report.line("{}", measured_block("pages", ratios, text));
    report.record("pages_largest_ratio", ratios.back()["ratio"]);
}

// ---- The second page: loads in flight, read bandwidth, the memory mountain ----------------

namespace {

Value ns_cell(const ChaseCurve& c, std::size_t i, const std::string& key, double divisor = 1) {
    return c.ns.empty() ? Value::unknown(key, "-") : Value::measured(key, c.ns[i] / divisor, 2);
}

void chases_table(Report& report, const std::vector<ChaseCurve>& curves) {
    auto table = report.table_of_rows("mlp.rows", {"k", "L2 ns", "L3 ns", "memory ns", "memory: one chase / k"});
    const auto& memory = curves.back();
    for (std::size_t i = 0; i < memory.counts.size(); ++i) {
        const std::size_t k = memory.counts[i];
        table.row({Value::exact("k", k), ns_cell(curves[0], i, "L2_ns"), ns_cell(curves[1], i, "L3_ns"),
                   ns_cell(memory, i, "memory_ns"), ns_cell(memory, 0, "memory_one_over_k", static_cast<double>(k))});
    }
    table.print();
}

// The level's line: its working set, or why it was not measured.
Value working_set_cell(const ChaseCurve& c) {
    const std::string key = "mlp." + c.level + ".bytes";
    if (c.bytes == 0) return Value::unknown(key, "not measured: " + cachebook::machine().why_unknown(c.level));
    return Value::measured_as(key, c.ns.empty() ? nlohmann::json() : nlohmann::json(c.bytes),
                              "working set " + size_text(c.bytes));
}

// The figures of a level's curve the lines do not print.
void record_curve(Report& report, const ChaseCurve& c) {
    nlohmann::json rest = to_json(c);
    for (const char* printed : {"bytes", "knee", "best_ns", "in_flight"}) rest.erase(printed);
    for (const auto& field : rest.items()) report.record("mlp." + c.level + "." + field.key(), field.value());
}

}  // namespace

void chases_section(Report& report, const std::vector<ChaseCurve>& curves, const cachebook::ExperimentResult& claim,
                    const std::string& memory_where) {
    report.section("Loads in flight: k independent chases at once, ns per access (best of runs)");
    for (const auto& c : curves) report.line("  {}: {}", c.level, working_set_cell(c));
    report.line("  the memory working set lies {}", Value::measured("mlp.memory_where", memory_where));
    chases_table(report, curves);
    for (const auto& c : curves) {
        record_curve(report, c);
        const std::string key = "mlp." + c.level + ".";
        const bool timed = !c.ns.empty();
        // The knee is a measurement, whole by chance: recorded as a fraction, not a count the prose may type.
        report.line(
            "  {}: the knee at k = {} (within 10 % of the best, {} ns); one chase / best = {} loads in flight", c.level,
            timed ? Value::measured_as(key + "knee", static_cast<double>(c.knee.k), fmt::format("{}", c.knee.k))
                  : Value::unknown(key + "knee", "-"),
            timed ? Value::measured(key + "best_ns", c.knee.best_ns, 2) : Value::unknown(key + "best_ns", "-"),
            timed ? Value::measured(key + "in_flight", c.knee.in_flight, 1) : Value::unknown(key + "in_flight", "-"));
    }
    cachebook::report_experiment(report, claim);
}

void levels_bandwidth_section(Report& report, const std::vector<cachebook::LevelBandwidth>& levels,
                              const std::vector<ChaseCurve>& chases) {
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

namespace {

std::string mountain_text(const Mountain& m) {
    std::vector<std::string> header = {"size \\ stride"};
    for (std::size_t s : m.strides) header.push_back(fmt::format("{} B", 8 * s));
    cachebook::Table table(header);
    for (std::size_t i = 0; i < m.sizes.size(); ++i) {
        std::vector<std::string> row = {size_text(m.sizes[i])};
        for (double g : m.gbs[i]) row.push_back(fmt::format("{:.1f}", g));
        table.row(row);
    }
    return table.render();
}

}  // namespace

void mountain_section(Report& report, const Mountain& m) {
    report.section("The memory mountain: GB/s read by working set and stride");
    report.line("{}", measured_block("bandwidth.mountain", to_json(m), mountain_text(m)));
    const auto peak = mountain_peak(m);
    report.line(
        "  the peak: {} GB/s, at {} and a stride of {}", Value::measured("bandwidth.peak.gbs", peak.gbs, 1),
        Value::measured_as("bandwidth.peak.bytes", peak.bytes, size_text(peak.bytes)),
        Value::measured_as("bandwidth.peak.stride_bytes", 8 * peak.stride, fmt::format("{} B", 8 * peak.stride)));
    const std::size_t reach = prefetch_reach(m.strides, m.gbs.back());
    report.line("  at {}, lines arrive at 80 % or more of the stride-8 B rate up to a stride of {}",
                Value::measured_as("bandwidth.reach_at_bytes", m.sizes.back(), size_text(m.sizes.back())),
                Value::measured_as("bandwidth.prefetch_reach_bytes", 8 * reach, fmt::format("{} B", 8 * reach)));
}

}  // namespace ch08
