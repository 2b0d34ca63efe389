// Chapter 8, the lab: the run of ch08_cliff, section by section: its setup, its sweeps, what it
// reads off them, and what it records beside the output.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "cachebook/chase.hpp"
#include "cachebook/cli.hpp"
#include "lab.hpp"

namespace ch08 {

constexpr std::size_t kMiB = std::size_t{1} << 20;

Setup set_up(const Options& options) {
    Setup setup;
    setup.started = cachebook::Clock::now();
    const auto& machine = cachebook::machine();
    setup.l1 = machine.data_cache(1), setup.l2 = machine.data_cache(2), setup.l3 = machine.data_cache(3);
    std::optional<std::size_t> llc;
    for (const auto& c : {setup.l3, setup.l2, setup.l1})
        if (c && !llc) llc = c->size_bytes;
    const auto l2_bytes = setup.l2 ? std::optional<std::size_t>(setup.l2->size_bytes) : llc;
    setup.upper = options.max_mib != 0
                      ? UpperBound{static_cast<std::size_t>(options.max_mib) * kMiB, "set by --max-mib"}
                  : options.quick ? sweep_upper_bound(l2_bytes, kMiB, 8 * kMiB)
                                  : sweep_upper_bound(llc, 16 * kMiB, 128 * kMiB);
    setup.sizes = sweep_sizes(4096, setup.upper.bytes, options.per_octave());
    setup.cpu = cachebook::nth_usable_cpu(0);
    setup.pinned = cachebook::pin_to_cpu(setup.cpu);
    setup.huge_pages_available = cachebook::huge_pages_available();
    return setup;
}

std::optional<double> clock_ghz(const Options& options) {
    return cachebook::estimate_clock_ghz(options.quick ? 0.005 : 0.02);
}

Curves sweep(const Options& options, const Setup& setup) {
    // Short timed runs (a few milliseconds at most) fit between the interruptions
    // of a shared core; the warm-up before each refills the caches: a full lap
    // up to 4 MiB, and past that enough that the runs together go round the cycle.
    const std::size_t timed = options.quick ? std::size_t{1} << 13 : std::size_t{1} << 14;
    const std::size_t warm = options.quick ? std::size_t{1} << 15 : std::size_t{1} << 16;
    SweepConfig small{
        setup.sizes, PageSize::Small, timed, warm, options.run_count(), static_cast<std::uint64_t>(options.seed), true};
    cachebook::require_memory(sweep_peak_bytes(small) + 64 * kMiB, "the sweep's buffers");
    Curves curves;
    {
        cachebook::Progress progress("4 KiB pages: chase and strided sum", sweep_steps(small));
        curves.small_pages = run_sweep(small, [&](const std::string& what) { progress.step(what); });
    }
    if (setup.huge_pages_available) {
        SweepConfig huge = small;
        huge.pages = PageSize::Huge;
        huge.strided = false;
        cachebook::Progress progress("huge pages: chase", sweep_steps(huge));
        curves.huge_pages = run_sweep(huge, [&](const std::string& what) { progress.step(what); });
    }
    return curves;
}

nlohmann::json curve_json(const Curves& curves) {
    nlohmann::json curve = nlohmann::json::array();
    for (std::size_t k = 0; k < curves.small_pages.size(); ++k) {
        nlohmann::json point = to_json(curves.small_pages[k]);
        if (!curves.huge_pages.empty()) {
            point["chase_huge_ns"] = curves.huge_pages[k].chase_ns;
            point["huge_bytes"] = curves.huge_pages[k].huge_bytes;
        }
        curve.push_back(point);
    }
    return curve;
}

namespace {

std::vector<double> ns_of(const std::vector<Point>& curve, bool strided) {
    std::vector<double> ns;
    for (const auto& p : curve) ns.push_back(strided ? p.strided_ns : p.chase_ns);
    return ns;
}

std::optional<std::size_t> size_of(const std::optional<cachebook::CacheInfo>& c) {
    return c ? std::optional<std::size_t>(c->size_bytes) : std::nullopt;
}

}  // namespace

CliffSets find_cliffs(const Setup& setup, const Curves& curves) {
    CliffSets cliffs;
    cliffs.small_pages = detect_cliffs(setup.sizes, ns_of(curves.small_pages, false));
    if (!curves.huge_pages.empty()) cliffs.huge_pages = detect_cliffs(setup.sizes, ns_of(curves.huge_pages, false));
    cliffs.strided = detect_cliffs(setup.sizes, ns_of(curves.small_pages, true));
    return cliffs;
}

nlohmann::json cliffs_json(const std::vector<Cliff>& cliffs) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& c : cliffs) array.push_back(to_json(c));
    return array;
}

LevelsFound find_levels(const Setup& setup, const Curves& curves, const CliffSets& cliffs) {
    LevelsFound found;
    found.from_huge_pages = curves.huge_granted();
    const auto& main_cliffs = found.from_huge_pages ? cliffs.huge_pages : cliffs.small_pages;
    found.levels = levels_from(main_cliffs, {size_of(setup.l1), size_of(setup.l2), size_of(setup.l3)});
    if (!main_cliffs.empty()) found.beyond_ns = main_cliffs.back().above_ns;
    return found;
}

std::string explain(const Level& l, bool huge_pages_used) {
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

std::string source_of(const std::optional<cachebook::CacheInfo>& c) {
    return cachebook::source_name(c ? c->source : cachebook::Source::unknown);
}

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

std::vector<Point> wrong_method_points(const Setup& setup, const Curves& curves) {
    std::vector<Point> points;
    for (std::size_t want : {std::size_t{16} << 10, std::size_t{256} << 10, std::size_t{4} << 20, setup.upper.bytes})
        points.push_back(curves.small_pages[nearest_size(setup.sizes, want)]);
    return points;
}

LineSizes measure_line_sizes(const Options& options) {
    LineSizes sizes;
    sizes.strides = {8, 16, 32, 64, 128, 256, 512, 1024};
    const std::size_t chunks = options.quick ? 128 : 256;
    const int line_runs = options.quick ? 5 : 9;
    const auto seed = static_cast<std::uint64_t>(options.seed);
    sizes.touches = measure_line_size(LineMethod::Touches, sizes.strides, chunks, 4 * kMiB, line_runs, seed);
    sizes.probe = measure_line_size(LineMethod::FlushProbe, sizes.strides, chunks / 2, 4 * kMiB, line_runs, seed + 1);
    return sizes;
}

nlohmann::json page_ratios(const Setup& setup, const Curves& curves) {
    nlohmann::json ratios = nlohmann::json::array();
    for (std::size_t k = 0; k < setup.sizes.size(); ++k)
        ratios.push_back(
            {{"bytes", setup.sizes[k]}, {"ratio", curves.small_pages[k].chase_ns / curves.huge_pages[k].chase_ns}});
    return ratios;
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

void record_run_time(cachebook::Report& report, const Setup& setup) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    report.record("seconds", cachebook::seconds_since(setup.started));
    report.record("cpu_seconds", static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                                     static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6);
}

std::size_t band_edge_bytes(std::size_t l1_bytes, double fraction) {
    const auto nodes = std::llround(fraction * static_cast<double>(l1_bytes) / static_cast<double>(kNodeBytes));
    return static_cast<std::size_t>(std::max<long long>(2, nodes)) * kNodeBytes;
}

namespace {
constexpr std::size_t kFirstCliffHops = 4096;  // a call: a few microseconds in L1 or L2

std::string first_cliff_text() {
    return fmt::format("a chase over {:.0f} % / over {:.0f} % of the reported L1d, a hop", 100 * (1 + kBandAbove),
                       100 * (1 - kBandBelow));
}
}  // namespace

FirstCliffExperiment::FirstCliffExperiment(std::size_t l1_bytes, PageSize pages)
    : under_buf_(band_edge_bytes(l1_bytes, 1 - kBandBelow), pages),
      over_buf_(band_edge_bytes(l1_bytes, 1 + kBandAbove), pages),
      under_at_(cachebook::link_chase(under_buf_, under_buf_.size() / kNodeBytes, kNodeBytes, 1)),
      over_at_(cachebook::link_chase(over_buf_, over_buf_.size() / kNodeBytes, kNodeBytes, 2)),
      declared_{
          "first_cliff",
          first_cliff_text(),
          [this] { over_at_ = cachebook::chase(over_at_, kFirstCliffHops), cachebook::do_not_optimize(over_at_); },
          [this] { under_at_ = cachebook::chase(under_at_, kFirstCliffHops), cachebook::do_not_optimize(under_at_); },
          {.budget_seconds = 0.001, .runs = 8, .quick_budget_seconds = 0.0005},
          {.threshold = kFirstCliffRise}} {}

cachebook::ExperimentResult FirstCliffExperiment::run(bool quick) const {
    return cachebook::run_experiment(declared_, quick);
}

cachebook::ExperimentResult first_cliff_of(const Setup& setup, bool quick) {
    if (setup.l1) {
        const auto pages = setup.huge_pages_available ? PageSize::Huge : PageSize::Small;
        return FirstCliffExperiment(setup.l1->size_bytes, pages).run(quick);
    }
    cachebook::ExperimentResult none;
    none.key = "first_cliff";
    none.text = first_cliff_text();
    none.result.threshold = kFirstCliffRise;
    none.result.reason = "not decided: " + cachebook::machine().why_unknown("the L1d");
    return none;
}

}  // namespace ch08
