// ch08_cliff: prints what chapter 8 shows. Logic lives in cliff.cpp.
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "cachebook/chase.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "cliff.hpp"

namespace {

using cachebook::measured;
using ch08::human_bytes;

// A block of machine-dependent lines (its row count varies too), printed as one
// measured value: without its last newline, which the caller prints.
std::string block(std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return measured("{}", text);
}

std::string or_not_found(const std::optional<std::size_t>& v) { return v ? human_bytes(*v) : "not found"; }

// null when absent ("not found" in the JSON, never a made-up number).
template <class T>
nlohmann::json opt_json(const std::optional<T>& v) {
    nlohmann::json j;
    if (v.has_value()) j = v.value();
    return j;
}

// Why a detected size may differ from the reported one, for the reader.
std::string explain(const ch08::Level& l, bool huge_pages_used) {
    if (!l.reported) return "the system reports no such cache";
    if (!l.detected) return l.name == "L3" ? "no plateau: DRAM latency, page walks and a shared L3 blur it"
                                           : "no step found in the curve";
    const double d = *l.difference_pct;
    if (std::abs(d) <= 15) return "agrees within 15 %";
    if (l.name == "L3") return "a shared L3: other cores (and, in a VM, other guests) hold part of it";
    if (d < 0)
        return huge_pages_used ? "less than reported: something else uses it too (see the text)"
                               : "less than reported: TLB misses and uneven set use start early";
    return "more than reported: the next level's first misses are cheap; the step is gradual";
}

std::string cliffs_text(const std::vector<ch08::Cliff>& cliffs, const std::vector<ch08::Point>& curve) {
    if (cliffs.empty()) return "  no step of 50 % or more found\n";
    std::string s;
    for (const auto& c : cliffs)
        s += fmt::format("  rise from {:>9}, halfway at {:>9}: {:7.2f} ns -> {:7.2f} ns (x{:.1f})\n",
                         human_bytes(curve[c.last_flat].bytes), human_bytes(c.capacity_bytes), c.below_ns, c.above_ns,
                         c.above_ns / c.below_ns);
    return s;
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

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch08_cliff", [&] {
        cachebook::Cli cli("ch08_cliff", "Chapter 8: find the cache levels, their latencies and the line size by timing alone");
        std::int64_t seed = 2026;
        std::int64_t runs = 0;
        std::int64_t steps = 0;
        std::int64_t max_mib = 0;
        std::string csv_path;
        cli.add_int("--seed", seed, "Seed of the random cycles and chunk orders", 0, INT64_MAX);
        cli.add_int("--runs", runs, "Timed runs per size, best kept (0: 15, or 7 with --quick)", 0, 100);
        cli.add_int("--steps", steps, "Sizes per octave (0: 8, or 4 with --quick)", 0, 16);
        cli.add_int("--max-mib", max_mib, "Largest working set in MiB (0: from the reported last-level cache)", 0, 4096);
        cli.add_string("--csv", csv_path, "Write the curve (size, ns per access of each method) to this CSV file");
        if (auto status = cli.parse(argc, argv)) return *status;
        if (steps != 0 && steps < 4) throw cachebook::UsageError("--steps: at least 4 sizes per octave (or 0)");
        if (!csv_path.empty()) cachebook::check_writable(csv_path);
        const auto started = cachebook::Clock::now();
        const bool quick = cli.quick();
        const int run_count = runs != 0 ? static_cast<int>(runs) : (quick ? 7 : 15);
        const int per_octave = steps != 0 ? static_cast<int>(steps) : (quick ? 4 : 8);

        // Everything about the machine that the program compares against.
        const auto& machine = cachebook::machine();
        const auto l1 = machine.data_cache(1), l2 = machine.data_cache(2), l3 = machine.data_cache(3);
        std::optional<std::size_t> llc;
        for (const auto& c : {l3, l2, l1})
            if (c && !llc) llc = c->size_bytes;
        const std::size_t mib = std::size_t{1} << 20;
        const ch08::UpperBound upper =
            max_mib != 0 ? ch08::UpperBound{static_cast<std::size_t>(max_mib) * mib, "set by --max-mib"}
            : quick      ? ch08::sweep_upper_bound(l2 ? std::optional<std::size_t>(l2->size_bytes) : llc, mib, 8 * mib)
                         : ch08::sweep_upper_bound(llc, 16 * mib, 128 * mib);
        const auto sizes = ch08::sweep_sizes(4096, upper.bytes, per_octave);

        const int cpu = cachebook::nth_usable_cpu(0);
        const bool pinned = cachebook::pin_to_cpu(cpu);
        const bool thp = cachebook::huge_pages_available();

        nlohmann::json out;
        fmt::print("Chapter 8 · Finding the cache cliffs by timing alone\n\n");
        fmt::print("1. The experiment\n");
        fmt::print("  CPU: {}; {}\n", measured("{}", cachebook::cpu_model()),
                   pinned ? fmt::format("pinned to cpu {}", measured("{}", cpu)) : std::string("not pinned (refused)"));
        fmt::print("  seed {}: a random single cycle through {}-byte nodes, one node per line\n", seed, ch08::kNodeBytes);
        fmt::print("  sizes: {} to {} at {} per octave ({} sizes); upper bound: {}\n", human_bytes(sizes.front()),
                   measured("{}", human_bytes(sizes.back())), per_octave, measured("{}", sizes.size()),
                   measured("{}", upper.why));
        fmt::print("  best of {} runs per size; transparent huge pages: {}\n\n", run_count,
                   measured("{}", thp ? "available (madvise)" : "not available: the huge-page sweep is skipped"));
        out["seed"] = seed;
        out["runs"] = run_count;
        out["steps_per_octave"] = per_octave;
        out["upper_bound"] = {{"bytes", upper.bytes}, {"why", upper.why}};
        out["cpu"] = cachebook::cpu_model();
        out["pinned"] = pinned;
        out["huge_pages_available"] = thp;

        // 2. The clock, so latencies can be read in cycles.
        const auto ghz = ch08::estimate_ghz(3 * run_count);
        fmt::print("2. The clock\n");
        if (ghz)
            fmt::print("  a chain of dependent adds runs at {} GHz (one add per cycle)\n\n", measured("{:.2f}", *ghz));
        else
            fmt::print("  no clock estimate on this architecture: latencies are given in ns only\n\n");
        out["clock_ghz"] = opt_json(ghz);

        // 3. The sweeps.
        // Short timed runs (a few milliseconds at most) fit between the interruptions
        // of a shared core; the warm-up before each refills the caches: a full lap
        // up to 4 MiB, and past that enough that the runs together go round the cycle.
        const std::size_t timed = quick ? std::size_t{1} << 13 : std::size_t{1} << 14;
        const std::size_t warm = quick ? std::size_t{1} << 15 : std::size_t{1} << 16;
        ch08::SweepConfig small{sizes, cachebook::PageSize::Small, timed, warm, run_count,
                                static_cast<std::uint64_t>(seed), true};
        cachebook::require_memory(ch08::sweep_peak_bytes(small) + 64 * mib, "the sweep's buffers");
        std::vector<ch08::Point> curve4k, curve2m;
        {
            cachebook::Progress progress("4 KiB pages: chase and strided sum", ch08::sweep_steps(small));
            curve4k = ch08::run_sweep(small, [&](const std::string& what) { progress.step(what); });
        }
        if (thp) {
            ch08::SweepConfig huge = small;
            huge.pages = cachebook::PageSize::Huge;
            huge.strided = false;
            cachebook::Progress progress("huge pages: chase", ch08::sweep_steps(huge));
            curve2m = ch08::run_sweep(huge, [&](const std::string& what) { progress.step(what); });
        }
        const bool huge_granted = !curve2m.empty() && curve2m.back().huge_bytes > 0;

        fmt::print("3. The curve: ns per access by working-set size{}\n", per_octave > 4 ? " (every second size; --csv has all)" : "");
        {
            cachebook::Table t({"size", "chase 4K", "cycles", "strided sum", "chase huge"});
            for (std::size_t k = 0; k < sizes.size(); ++k) {
                if (per_octave > 4 && k % 2 != 0 && k + 1 != sizes.size()) continue;
                const auto& p = curve4k[k];
                t.row({human_bytes(p.bytes), fmt::format("{:.2f}", p.chase_ns),
                       ghz ? fmt::format("{:.1f}", p.chase_ns * *ghz) : "-", fmt::format("{:.2f}", p.strided_ns),
                       curve2m.empty() ? "-" : fmt::format("{:.2f}", curve2m[k].chase_ns)});
            }
            fmt::print("{}\n\n", block(t.render()));
        }
        nlohmann::json jcurve = nlohmann::json::array();
        for (std::size_t k = 0; k < sizes.size(); ++k) {
            nlohmann::json j = ch08::to_json(curve4k[k]);
            if (!curve2m.empty()) {
                j["chase_huge_ns"] = curve2m[k].chase_ns;
                j["huge_bytes"] = curve2m[k].huge_bytes;
            }
            jcurve.push_back(j);
        }
        out["curve"] = jcurve;

        // 4. The cliffs.
        auto ns_of = [](const std::vector<ch08::Point>& c, bool strided) {
            std::vector<double> v;
            for (const auto& p : c) v.push_back(strided ? p.strided_ns : p.chase_ns);
            return v;
        };
        const auto cliffs4k = ch08::detect_cliffs(sizes, ns_of(curve4k, false));
        const auto cliffs2m = curve2m.empty() ? std::vector<ch08::Cliff>{} : ch08::detect_cliffs(sizes, ns_of(curve2m, false));
        const auto cliffs_strided = ch08::detect_cliffs(sizes, ns_of(curve4k, true));
        const bool use_huge = huge_granted;
        const auto& main_cliffs = use_huge ? cliffs2m : cliffs4k;
        const auto& main_curve = use_huge ? curve2m : curve4k;
        fmt::print("4. Steps in the curves (running median of 3; a step is a rise of 50 % or more)\n");
        fmt::print("  pointer chase, 4 KiB pages:\n{}\n", block(cliffs_text(cliffs4k, curve4k)));
        fmt::print("  pointer chase, huge pages:\n{}\n",
                   block(curve2m.empty()
                                      ? std::string("  not measured: no transparent huge pages here\n")
                                      : fmt::format("  ({:.0f} % of the largest buffer in huge pages)\n{}",
                                                    100.0 * static_cast<double>(curve2m.back().huge_bytes) /
                                                        static_cast<double>(curve2m.back().bytes),
                                                    cliffs_text(cliffs2m, curve2m))));
        fmt::print("  strided sum (the wrong method), 4 KiB pages:\n{}\n\n", block(cliffs_text(cliffs_strided, curve4k)));
        auto cliffs_json = [](const std::vector<ch08::Cliff>& cs) {
            nlohmann::json a = nlohmann::json::array();
            for (const auto& c : cs) a.push_back(ch08::to_json(c));
            return a;
        };
        out["cliffs"] = {{"small_pages", cliffs_json(cliffs4k)},
                         {"huge_pages", cliffs_json(cliffs2m)},
                         {"strided", cliffs_json(cliffs_strided)}};

        // 5. The levels, next to what the system reports.
        const std::vector<std::optional<std::size_t>> reported = {
            l1 ? std::optional<std::size_t>(l1->size_bytes) : std::nullopt,
            l2 ? std::optional<std::size_t>(l2->size_bytes) : std::nullopt,
            l3 ? std::optional<std::size_t>(l3->size_bytes) : std::nullopt};
        const auto levels = ch08::levels_from(main_cliffs, main_curve, reported);
        fmt::print("5. The levels found (from the {} sweep) next to the sizes the machine reports\n",
                   measured("{}", use_huge ? "huge-page" : "4 KiB-page"));
        {
            cachebook::Table t({"level", "detected", "reported", "difference", "latency", "cycles", "why they differ"});
            nlohmann::json jl = nlohmann::json::object();
            for (const auto& l : levels) {
                t.row({l.name, measured("{}", or_not_found(l.detected)),
                       measured("{}", l.reported ? human_bytes(*l.reported) : "unknown"),
                       measured("{}", l.difference_pct ? fmt::format("{:+.1f} %", *l.difference_pct) : "-"),
                       measured("{}", l.latency_ns ? fmt::format("{:.2f} ns", *l.latency_ns) : "-"),
                       measured("{}", l.latency_ns && ghz ? fmt::format("{:.1f}", *l.latency_ns * *ghz) : "-"),
                       measured("{}", explain(l, use_huge))});
                nlohmann::json j = ch08::to_json(l);
                j["cycles"] = opt_json(l.latency_ns && ghz ? std::optional<double>(*l.latency_ns * *ghz) : std::nullopt);
                j["within_15pct"] = opt_json(l.detected && l.reported
                                                 ? std::optional<bool>(ch08::within(*l.detected, *l.reported, 0.15))
                                                 : std::nullopt);
                jl[l.name] = j;
            }
            const std::optional<double> memory_ns =
                main_cliffs.empty() ? std::nullopt : std::optional<double>(main_cliffs.back().above_ns);
            t.row({"beyond", "-", "-", "-", measured("{}", memory_ns ? fmt::format("{:.2f} ns", *memory_ns) : "-"),
                   measured("{}", memory_ns && ghz ? fmt::format("{:.1f}", *memory_ns * *ghz) : "-"),
                   "the plateau after the last step"});
            fmt::print("{}", t.render());
            fmt::print("  where the reported sizes come from: {}\n\n", measured("{}", reported_sources(machine)));
            out["levels"] = jl;
            out["reported_sources"] = {{"L1d", source_of(l1)}, {"L2", source_of(l2)}, {"L3", source_of(l3)}};
            out["beyond_ns"] = opt_json(memory_ns);
            out["levels_from"] = use_huge ? "huge_pages" : "small_pages";
        }

        // 6. The wrong method next to the right one.
        fmt::print("6. The wrong method: a strided sum over the same buffers\n");
        {
            cachebook::Table t({"size", "chase ns", "strided sum ns", "chase / strided"});
            nlohmann::json jw = nlohmann::json::array();
            for (std::size_t want : {std::size_t{16} << 10, std::size_t{256} << 10, std::size_t{4} << 20, upper.bytes}) {
                std::size_t k = 0;  // the sweep size nearest `want` (log scale)
                for (std::size_t m = 0; m < sizes.size(); ++m)
                    if (std::abs(std::log(static_cast<double>(sizes[m]) / want)) <
                        std::abs(std::log(static_cast<double>(sizes[k]) / want)))
                        k = m;
                const auto& p = curve4k[k];
                t.row({measured("{}", human_bytes(p.bytes)), measured("{:.2f}", p.chase_ns),
                       measured("{:.2f}", p.strided_ns), measured("{:.1f}x", p.chase_ns / p.strided_ns)});
                jw.push_back({{"bytes", p.bytes}, {"chase_ns", p.chase_ns}, {"strided_ns", p.strided_ns},
                              {"ratio", p.chase_ns / p.strided_ns}});
            }
            fmt::print("{}", t.render());
            fmt::print("  the strided sum finds {} step(s), the chase {}\n\n", measured("{}", cliffs_strided.size()),
                       measured("{}", cliffs4k.size()));
            out["wrong_method"] = jw;
            out["wrong_method_largest_ratio"] = jw.back()["ratio"];
        }

        // 7. The line size.
        fmt::print("7. The line size: chunks 4 MiB apart, in random order, on lines flushed from every cache\n");
        const std::vector<std::size_t> strides = {8, 16, 32, 64, 128, 256, 512, 1024};
        const std::size_t chunks = quick ? 128 : 256;
        const int line_runs = quick ? 5 : 9;
        const auto touches = ch08::measure_line_size(ch08::LineMethod::Touches, strides, chunks, std::size_t{4} << 20,
                                                     line_runs, static_cast<std::uint64_t>(seed));
        const auto probe = ch08::measure_line_size(ch08::LineMethod::FlushProbe, strides, chunks / 2,
                                                   std::size_t{4} << 20, line_runs, static_cast<std::uint64_t>(seed) + 1);
        const auto sys_line = machine.line_bytes();
        auto line_text = [](const std::optional<std::size_t>& v) {
            return v ? fmt::format("{} bytes", *v) : std::string("not found");
        };
        if (!touches.measured) {
            fmt::print("{}\n\n", block("  not measured: flushing a line needs clflush (x86-64)"));
            out["line"] = nullptr;
        } else {
            cachebook::Table t({"stride S", "4 touches at 0,S,2S,3S: ns per touch", "probe of base+S after flushing base: ns"});
            nlohmann::json pts = nlohmann::json::array();
            for (std::size_t i = 0; i < strides.size(); ++i) {
                t.row({fmt::format("{} B", strides[i]), measured("{:.1f}", touches.points[i].ns),
                       measured("{:.1f}", probe.points[i].ns)});
                pts.push_back({{"stride", strides[i]}, {"touch_ns", touches.points[i].ns}, {"probe_ns", probe.points[i].ns}});
            }
            fmt::print("{}", t.render());
            fmt::print("  line size from the touches (where the cost stops growing): {}\n", measured("{}", line_text(touches.line_bytes)));
            fmt::print("  line size from the flush probe (first stride that survives the flush): {}\n",
                       measured("{}", line_text(probe.line_bytes)));
            fmt::print("  the line size the machine reports: {}\n\n",
                       measured("{}", sys_line ? fmt::format("{} bytes (from {})", *sys_line,
                                                             cachebook::source_name(machine.line_source()))
                                               : machine.why_unknown("the line size")));
            out["line"] = {{"points", pts},
                           {"touches_bytes", opt_json(touches.line_bytes)},
                           {"detected_bytes", opt_json(probe.line_bytes)},
                           {"reported_bytes", opt_json(sys_line)},
                           {"reported_source", cachebook::source_name(machine.line_source())},
                           {"exact", probe.line_bytes && sys_line && *probe.line_bytes == *sys_line}};
        }

        // 8. Pages.
        fmt::print("8. Pages: 4 KiB pages against huge pages\n");
        if (curve2m.empty()) {
            fmt::print("{}\n", block("  transparent huge pages are not available here; no comparison"));
        } else {
            cachebook::Table t({"size", "4 KiB pages ns", "huge pages ns", "4K / huge"});
            nlohmann::json jt = nlohmann::json::array();
            for (std::size_t k = 0; k < sizes.size(); k += static_cast<std::size_t>(per_octave)) {
                t.row({human_bytes(sizes[k]), fmt::format("{:.2f}", curve4k[k].chase_ns),
                       fmt::format("{:.2f}", curve2m[k].chase_ns),
                       fmt::format("{:.2f}", curve4k[k].chase_ns / curve2m[k].chase_ns)});
            }
            for (std::size_t k = 0; k < sizes.size(); ++k)
                jt.push_back({{"bytes", sizes[k]}, {"ratio", curve4k[k].chase_ns / curve2m[k].chase_ns}});
            std::string note = t.render();
            if (!huge_granted) note += "  the kernel granted no huge pages: the two curves measure the same thing\n";
            fmt::print("{}\n", block(note));
            out["pages"] = jt;
            out["pages_largest_ratio"] = jt.back()["ratio"];
        }
        out["huge_pages_granted"] = huge_granted;

        if (!csv_path.empty()) {
            std::ofstream csv(csv_path);
            csv << "bytes,chase_4k_ns,strided_ns,chase_huge_ns\n";
            for (std::size_t k = 0; k < sizes.size(); ++k)
                csv << fmt::format("{},{:.4f},{:.4f},{}\n", sizes[k], curve4k[k].chase_ns, curve4k[k].strided_ns,
                                   curve2m.empty() ? std::string() : fmt::format("{:.4f}", curve2m[k].chase_ns));
            if (!csv) throw std::runtime_error(fmt::format("could not write {}", csv_path));
        }
        // How long the run took: wall time, and the processor time this program itself used
        // (on a shared core the two differ by whatever else ran).
        rusage usage{};
        getrusage(RUSAGE_SELF, &usage);
        out["seconds"] = cachebook::seconds_since(started);
        out["cpu_seconds"] = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                             static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
