// ch08_cliff: prints what chapter 8 shows, one function per numbered section.
// Logic lives in cliff.cpp; each result is written once, through cachebook::Report.
#include <fmt/format.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>

#include "cachebook/chase.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "cliff.hpp"

namespace {

using cachebook::Report;
using cachebook::size_text;
using cachebook::Value;
constexpr std::size_t kMiB = std::size_t{1} << 20;

struct Options {
    std::int64_t seed = 2026;  // of the random cycles and chunk orders
    std::int64_t runs = 0;
    std::int64_t steps = 0;
    std::int64_t max_mib = 0;
    std::string csv_path;
    bool quick = false;
    [[nodiscard]] int run_count() const { return runs != 0 ? static_cast<int>(runs) : (quick ? 7 : 15); }
    [[nodiscard]] int per_octave() const { return steps != 0 ? static_cast<int>(steps) : (quick ? 4 : 8); }
};

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

// What the run compares against and where it runs: the machine's caches, the sweep's sizes, the cpu.
struct Setup {
    std::optional<cachebook::CacheInfo> l1, l2, l3;
    ch08::UpperBound upper;
    std::vector<std::size_t> sizes;
    int cpu = 0;
    bool pinned = false;
    bool huge_pages_available = false;
};

Setup set_up(const Options& options) {
    Setup setup;
    const auto& machine = cachebook::machine();
    setup.l1 = machine.data_cache(1), setup.l2 = machine.data_cache(2), setup.l3 = machine.data_cache(3);
    std::optional<std::size_t> llc;
    for (const auto& c : {setup.l3, setup.l2, setup.l1})
        if (c && !llc) llc = c->size_bytes;
    const auto l2_bytes = setup.l2 ? std::optional<std::size_t>(setup.l2->size_bytes) : llc;
    setup.upper = options.max_mib != 0
                      ? ch08::UpperBound{static_cast<std::size_t>(options.max_mib) * kMiB, "set by --max-mib"}
                  : options.quick ? ch08::sweep_upper_bound(l2_bytes, kMiB, 8 * kMiB)
                                  : ch08::sweep_upper_bound(llc, 16 * kMiB, 128 * kMiB);
    setup.sizes = ch08::sweep_sizes(4096, setup.upper.bytes, options.per_octave());
    setup.cpu = cachebook::nth_usable_cpu(0);
    setup.pinned = cachebook::pin_to_cpu(setup.cpu);
    setup.huge_pages_available = cachebook::huge_pages_available();
    return setup;
}

// A block of machine-dependent lines (its row count varies too), printed as one
// measured value, without its last newline.
Value block(std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return Value::measured("", text);
}

std::string or_not_found(const std::optional<std::size_t>& v) {
    return v ? size_text(*v) : "not found";
}

// null when absent ("not found" in the JSON, never a made-up number).
template <class T>
nlohmann::json opt_json(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

void experiment_section(Report& report, const Options& options, const Setup& setup) {
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

std::optional<double> clock_section(Report& report, const Options& options) {
    const auto ghz = cachebook::estimate_clock_ghz(options.quick ? 0.005 : 0.02);
    report.section("The clock");
    if (ghz) {
        report.line("  a chain of dependent adds runs at {} GHz (one add per cycle)",
                    Value::measured("clock_ghz", *ghz, "{:.2f}"));
    } else {
        report.line("  no clock estimate on this architecture: latencies are given in ns only");
        report.record("clock_ghz", nullptr);
    }
    return ghz;
}

// The two sweeps: 4 KiB pages (chase and strided sum), and huge pages (chase) where available.
struct Curves {
    std::vector<ch08::Point> small_pages, huge_pages;
    [[nodiscard]] bool huge_granted() const { return !huge_pages.empty() && huge_pages.back().huge_bytes > 0; }
};

Curves sweep(const Options& options, const Setup& setup) {
    // Short timed runs (a few milliseconds at most) fit between the interruptions
    // of a shared core; the warm-up before each refills the caches: a full lap
    // up to 4 MiB, and past that enough that the runs together go round the cycle.
    const std::size_t timed = options.quick ? std::size_t{1} << 13 : std::size_t{1} << 14;
    const std::size_t warm = options.quick ? std::size_t{1} << 15 : std::size_t{1} << 16;
    ch08::SweepConfig small{setup.sizes, cachebook::PageSize::Small, timed,
                            warm,        options.run_count(),        static_cast<std::uint64_t>(options.seed),
                            true};
    cachebook::require_memory(ch08::sweep_peak_bytes(small) + 64 * kMiB, "the sweep's buffers");
    Curves curves;
    {
        cachebook::Progress progress("4 KiB pages: chase and strided sum", ch08::sweep_steps(small));
        curves.small_pages = ch08::run_sweep(small, [&](const std::string& what) { progress.step(what); });
    }
    if (setup.huge_pages_available) {
        ch08::SweepConfig huge = small;
        huge.pages = cachebook::PageSize::Huge;
        huge.strided = false;
        cachebook::Progress progress("huge pages: chase", ch08::sweep_steps(huge));
        curves.huge_pages = ch08::run_sweep(huge, [&](const std::string& what) { progress.step(what); });
    }
    return curves;
}

void curve_section(Report& report, const Options& options, const Curves& curves, std::optional<double> ghz) {
    const bool every_second = options.per_octave() > 4;
    report.section("The curve: ns per access by working-set size{}",
                   every_second ? " (every second size; --csv has all)" : "");
    const auto& small = curves.small_pages;
    const auto& huge = curves.huge_pages;
    cachebook::Table table({"size", "chase 4K", "cycles", "strided sum", "chase huge"});
    nlohmann::json curve = nlohmann::json::array();
    for (std::size_t k = 0; k < small.size(); ++k) {
        nlohmann::json point = ch08::to_json(small[k]);
        if (!huge.empty()) {
            point["chase_huge_ns"] = huge[k].chase_ns;
            point["huge_bytes"] = huge[k].huge_bytes;
        }
        curve.push_back(point);
        if (every_second && k % 2 != 0 && k + 1 != small.size()) continue;
        const auto& p = small[k];
        table.row({size_text(p.bytes), fmt::format("{:.2f}", p.chase_ns),
                   ghz ? fmt::format("{:.1f}", p.chase_ns * *ghz) : "-", fmt::format("{:.2f}", p.strided_ns),
                   huge.empty() ? "-" : fmt::format("{:.2f}", huge[k].chase_ns)});
    }
    report.line("{}", block(table.render()));
    report.record("curve", curve);
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

nlohmann::json cliffs_json(const std::vector<ch08::Cliff>& cliffs) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& c : cliffs) array.push_back(ch08::to_json(c));
    return array;
}

std::vector<double> ns_of(const std::vector<ch08::Point>& curve, bool strided) {
    std::vector<double> ns;
    for (const auto& p : curve) ns.push_back(strided ? p.strided_ns : p.chase_ns);
    return ns;
}

struct CliffSets {
    std::vector<ch08::Cliff> small_pages, huge_pages, strided;
};

CliffSets cliffs_section(Report& report, const Setup& setup, const Curves& curves) {
    CliffSets cliffs;
    cliffs.small_pages = ch08::detect_cliffs(setup.sizes, ns_of(curves.small_pages, false));
    if (!curves.huge_pages.empty())
        cliffs.huge_pages = ch08::detect_cliffs(setup.sizes, ns_of(curves.huge_pages, false));
    cliffs.strided = ch08::detect_cliffs(setup.sizes, ns_of(curves.small_pages, true));
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
    report.record("cliffs.small_pages", cliffs_json(cliffs.small_pages));
    report.record("cliffs.huge_pages", cliffs_json(cliffs.huge_pages));
    report.record("cliffs.strided", cliffs_json(cliffs.strided));
    return cliffs;
}

// Why a detected size may differ from the reported one, for the reader.
std::string explain(const ch08::Level& l, bool huge_pages_used) {
    if (!l.reported) return "the system reports no such cache";
    if (!l.detected)
        return l.name == "L3" ? "no plateau: DRAM latency, page walks and a shared L3 blur it"
                              : "no step found in the curve";
    const double d = *l.difference_pct;
    if (std::abs(d) <= 15) return "agrees within 15 %";
    if (l.name == "L3") return "a shared L3: other cores (and, in a VM, other guests) hold part of it";
    if (d < 0)
        return huge_pages_used ? "less than reported: something else uses it too (see the text)"
                               : "less than reported: TLB misses and uneven set use start early";
    return "more than reported: the next level's first misses are cheap; the step is gradual";
}

// "hwloc" or "unknown": where one reported cache size came from.
std::string source_of(const std::optional<cachebook::CacheInfo>& c) {
    return cachebook::source_name(c ? c->source : cachebook::Source::unknown);
}

// One line: the source of each reported level, and why any is unknown.
std::string reported_sources(const cachebook::Machine& machine) {
    std::string s, missing;
    for (int level = 1; level <= 3; ++level) {
        const auto c = machine.data_cache(level);
        const std::string name = level == 1 ? "L1d" : fmt::format("L{}", level);
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", name, source_of(c));
        if (!c) missing += (missing.empty() ? "" : ", ") + name;
    }
    return missing.empty() ? s : s + "; " + machine.why_unknown(missing);
}

// A latency in ns and in cycles (where the clock is known), as the levels table prints them.
std::vector<Value> latency_cells(std::optional<double> ns, std::optional<double> ghz) {
    return {Value::measured("", ns ? fmt::format("{:.2f} ns", *ns) : "-"),
            Value::measured("", ns && ghz ? fmt::format("{:.1f}", *ns * *ghz) : "-")};
}

void record_level(Report& report, const ch08::Level& l, std::optional<double> ghz) {
    nlohmann::json level = ch08::to_json(l);
    level["cycles"] = opt_json(l.latency_ns && ghz ? std::optional<double>(*l.latency_ns * *ghz) : std::nullopt);
    level["within_15pct"] = opt_json(
        l.detected && l.reported ? std::optional<bool>(ch08::within(*l.detected, *l.reported, 0.15)) : std::nullopt);
    report.record("levels." + l.name, level);
}

void levels_section(Report& report, const Setup& setup, const Curves& curves, const CliffSets& cliffs,
                    std::optional<double> ghz) {
    const bool use_huge = curves.huge_granted();
    const auto& main_cliffs = use_huge ? cliffs.huge_pages : cliffs.small_pages;
    auto size_of = [](const std::optional<cachebook::CacheInfo>& c) {
        return c ? std::optional<std::size_t>(c->size_bytes) : std::nullopt;
    };
    const auto levels = ch08::levels_from(main_cliffs, use_huge ? curves.huge_pages : curves.small_pages,
                                          {size_of(setup.l1), size_of(setup.l2), size_of(setup.l3)});
    report.section("The levels found (from the {} sweep) next to the sizes the machine reports",
                   Value::measured_as("levels_from", use_huge ? "huge_pages" : "small_pages",
                                      use_huge ? "huge-page" : "4 KiB-page"));
    auto table = report.table({"level", "detected", "reported", "difference", "latency", "cycles", "why they differ"});
    for (const auto& l : levels) {
        const auto latency = latency_cells(l.latency_ns, ghz);
        table.row({l.name, Value::measured("", or_not_found(l.detected)),
                   Value::measured("", l.reported ? size_text(*l.reported) : "unknown"),
                   Value::measured("", l.difference_pct ? fmt::format("{:+.1f} %", *l.difference_pct) : "-"),
                   latency[0], latency[1], Value::measured("", explain(l, use_huge))});
        record_level(report, l, ghz);
    }
    const auto memory =
        main_cliffs.empty() ? latency_cells(std::nullopt, ghz) : latency_cells(main_cliffs.back().above_ns, ghz);
    table.row({"beyond", "-", "-", "-", memory[0], memory[1], "the plateau after the last step"});
    table.print();
    report.record("beyond_ns", main_cliffs.empty() ? nlohmann::json() : nlohmann::json(main_cliffs.back().above_ns));
    report.line("  where the reported sizes come from: {}",
                Value::measured("", reported_sources(cachebook::machine())));
    report.record("reported_sources",
                  {{"L1d", source_of(setup.l1)}, {"L2", source_of(setup.l2)}, {"L3", source_of(setup.l3)}});
}

void wrong_method_section(Report& report, const Setup& setup, const Curves& curves, const CliffSets& cliffs) {
    report.section("The wrong method: a strided sum over the same buffers");
    auto table = report.table_of_rows("wrong_method", {"size", "chase ns", "strided sum ns", "chase / strided"});
    double last_ratio = 0;
    for (std::size_t want : {std::size_t{16} << 10, std::size_t{256} << 10, std::size_t{4} << 20, setup.upper.bytes}) {
        const auto& p = curves.small_pages[ch08::nearest_size(setup.sizes, want)];
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

void line_size_section(Report& report, const Options& options) {
    report.section("The line size: chunks 4 MiB apart, in random order, on lines flushed from every cache");
    const std::vector<std::size_t> strides = {8, 16, 32, 64, 128, 256, 512, 1024};
    const std::size_t chunks = options.quick ? 128 : 256;
    const int line_runs = options.quick ? 5 : 9;
    const auto seed = static_cast<std::uint64_t>(options.seed);
    const auto touches =
        ch08::measure_line_size(ch08::LineMethod::Touches, strides, chunks, std::size_t{4} << 20, line_runs, seed);
    const auto probe = ch08::measure_line_size(ch08::LineMethod::FlushProbe, strides, chunks / 2, std::size_t{4} << 20,
                                               line_runs, seed + 1);
    if (!touches.measured) {
        report.line("{}", block("  not measured: flushing a line needs clflush (x86-64) or dc civac (64-bit ARM)"));
        report.record("line", nullptr);
        return;
    }
    auto table = report.table_of_rows(
        "line.points", {"stride S", "4 touches at 0,S,2S,3S: ns per touch", "probe of base+S after flushing base: ns"});
    for (std::size_t i = 0; i < strides.size(); ++i)
        table.row({Value::exact_as("stride", strides[i], fmt::format("{} B", strides[i])),
                   Value::measured("touch_ns", touches.points[i].ns, "{:.1f}"),
                   Value::measured("probe_ns", probe.points[i].ns, "{:.1f}")});
    table.print();
    report.line("  line size from the touches (where the cost stops growing): {}",
                Value::measured_as("line.touches_bytes", opt_json(touches.line_bytes), line_text(touches.line_bytes)));
    report.line("  line size from the flush probe (first stride that survives the flush): {}",
                Value::measured_as("line.detected_bytes", opt_json(probe.line_bytes), line_text(probe.line_bytes)));
    const auto& machine = cachebook::machine();
    const auto reported = machine.line_bytes();
    const std::string source = cachebook::source_name(machine.line_source());
    report.line("  the line size the machine reports: {}",
                reported ? Value::measured_as("line.reported_bytes", *reported,
                                              fmt::format("{} bytes (from {})", *reported, source))
                         : Value::unknown("line.reported_bytes", machine.why_unknown("the line size")));
    report.record("line.reported_source", source);
    report.record("line.exact", probe.line_bytes && reported && *probe.line_bytes == *reported);
}

void pages_section(Report& report, const Options& options, const Setup& setup, const Curves& curves) {
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
    nlohmann::json ratios = nlohmann::json::array();
    for (std::size_t k = 0; k < setup.sizes.size(); ++k)
        ratios.push_back({{"bytes", setup.sizes[k]}, {"ratio", small[k].chase_ns / huge[k].chase_ns}});
    std::string text = table.render();
    if (!curves.huge_granted()) text += "  the kernel granted no huge pages: the two curves measure the same thing\n";
    report.line("{}", block(text));
    report.record("pages_largest_ratio", ratios.back()["ratio"]);
    report.record("pages", ratios);
}

void write_csv(const std::string& path, const Setup& setup, const Curves& curves) {
    std::ofstream csv(path);
    csv << "bytes,chase_4k_ns,strided_ns,chase_huge_ns\n";
    for (std::size_t k = 0; k < setup.sizes.size(); ++k)
        csv << fmt::format(
            "{},{:.4f},{:.4f},{}\n", setup.sizes[k], curves.small_pages[k].chase_ns, curves.small_pages[k].strided_ns,
            curves.huge_pages.empty() ? std::string() : fmt::format("{:.4f}", curves.huge_pages[k].chase_ns));
    if (!csv) throw std::runtime_error(fmt::format("could not write {}", path));
}

// How long the run took: wall time, and the processor time this program itself used
// (on a shared core the two differ by whatever else ran).
void record_run_time(Report& report, cachebook::Clock::time_point started) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    report.record("seconds", cachebook::seconds_since(started));
    report.record("cpu_seconds", static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch08_cliff", [&] {
        cachebook::Cli cli("ch08_cliff",
                           "Chapter 8: find the cache levels, their latencies and the line size by timing alone");
        Options options;
        if (auto status = parse(cli, options, argc, argv)) return *status;
        const auto started = cachebook::Clock::now();
        const Setup setup = set_up(options);
        Report report("Chapter 8 · Finding the cache cliffs by timing alone");
        experiment_section(report, options, setup);
        const auto ghz = clock_section(report, options);
        const Curves curves = sweep(options, setup);
        curve_section(report, options, curves, ghz);
        const CliffSets cliffs = cliffs_section(report, setup, curves);
        levels_section(report, setup, curves, cliffs, ghz);
        wrong_method_section(report, setup, curves, cliffs);
        line_size_section(report, options);
        pages_section(report, options, setup, curves);
        if (!options.csv_path.empty()) write_csv(options.csv_path, setup, curves);
        record_run_time(report, started);
        report.save(cli.json_path());
        return 0;
    });
}
