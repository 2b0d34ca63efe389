#pragma once
// How chapter 9's program shows its figures: Values for cells that may be missing ("-") or printed
// with significant digits, each recorded as printed; and the rows of the tables of sections 3 and 5.
// Used by sections.cpp, which prints one section per function.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "cachebook/report.hpp"
#include "lab.hpp"

namespace ch09::cells {

using cachebook::Report;
using cachebook::Value;

// A measured figure printed with `format` (significant digits: "{:.3g}") and recorded as the
// number the text shows, as Value::measured(key, x, decimals) does for decimals.
inline Value measured_shown(std::string key, double x, fmt::format_string<double> format) {
    std::string text = fmt::format(format, double(x));
    const double shown = std::stod(text);
    return Value::measured_as(std::move(key), shown, std::move(text));
}

// A measured cell that says "-": not run here.
inline Value dash() {
    return Value::measured("", std::string("-"));
}

// A measured figure printed with `digits` decimals, or "-" and null when it was not measured (0).
inline Value figure_or_dash(std::string key, double x, int digits = 1) {
    if (!(x > 0) || !std::isfinite(x)) return Value::unknown(std::move(key), "-");
    return Value::measured(std::move(key), x, digits);
}

// A ratio as a percentage ("90.6%"), or "-" and null when either side was not measured. One decimal, as
// the "% of peak" column prints it, so that the output, the JSON and the page (the `_text` key) agree.
inline Value percent_or_dash(std::string key, double ratio) {
    if (!(ratio > 0) || !std::isfinite(ratio)) return Value::unknown(std::move(key), "-");
    const Value percent = Value::measured(key, 100 * ratio, 1);
    return Value::measured_as(std::move(key), percent.json(), percent.text() + "%").quoted("{:.1f}");
}

inline std::string threads_text(int threads) {
    return threads > 1 ? fmt::format("{}", threads) : "-";
}

// A GFLOPS figure of the sweeps, with one decimal.
inline Value gflops_cell(std::string key, double gflops) {
    return Value::measured(std::move(key), gflops, 1);
}

// ---- The rows of the tables of sections 3 and 5 ----

struct TableContext {
    std::size_t n = 0;
    double flops = 0, naive_gflops = 0;
    ch09::Peak peak;
};

// A step's label as the table shows it: its machine-dependent part masked in golden mode.
inline Value shown_label(const ch09::StepResult& r) {
    return r.part.empty() ? Value(r.label) : Value::partly_measured(r.before, r.part, r.after);
}

inline void step_row(cachebook::ResultTable& table, Report& report, const ch09::StepResult& r, const TableContext& t) {
    const std::string k = "steps." + r.key + ".";
    // A row that runs only with several threads shows its check masked, run or not, so that the
    // output has one shape whatever the number of CPUs.
    if (r.seconds <= 0) {  // not run: --threads 1
        table.row({shown_label(r), "all", dash(), dash(), dash(), dash(), dash(), dash()});
        return;
    }
    const std::string matches = r.check.matches ? "yes" : "NO";
    const double gflops = t.flops / r.seconds / 1e9;
    const double peak = r.threads == 1 ? t.peak.core : t.peak.all;
    const std::string rows = r.rows_timed == t.n ? "all" : fmt::format("{}", r.rows_timed);
    table.row({shown_label(r),
               r.sampled ? Value::measured_as(k + "rows_timed", r.rows_timed, rows)
                         : Value::exact_as(k + "rows_timed", r.rows_timed, "all"),
               measured_shown(k + "seconds", r.seconds, "{:.3g}"), Value::measured(k + "gflops", gflops, 2),
               Value::measured(k + "pct_peak", 100 * gflops / peak, 1),
               Value::measured(k + "speedup", gflops / t.naive_gflops, 1),
               r.check.elements > 0 ? Value::measured(k + "worst_ratio", r.check.worst_ratio, 3)
                                    : Value::exact_as(k + "worst_ratio", 0, "-"),
               r.needs_threads ? Value::measured_as(k + "matches", r.check.matches, matches)
                               : Value::exact_as(k + "matches", r.check.matches, matches)});
    report.record(k + "label", r.label);
    report.record(k + "threads", r.threads);
}

// Step 7's four rows (OpenBLAS and BLIS, one thread and all), "-" where not measured.
inline void library_rows(cachebook::ResultTable& table, Report& report, const ch09::Libraries& libs, int threads,
                         const TableContext& t) {
    const ch09::LibraryRun* best = libs.best();
    for (int lib = 0; lib < 2; ++lib)
        for (std::size_t slot = 0; slot < 2; ++slot) {
            const double sec = best ? (lib == 0 ? best->openblas : best->blis)[slot] : 0;
            const std::string kind = lib == 0 ? "OpenBLAS" : "BLIS";
            const std::string who = lib == 0 ? (best ? best->openblas_core : "") : (best ? best->blis_name : "");
            const std::string thr = slot == 0 ? "1 thread" : fmt::format("{} threads", threads);
            const Value shown = slot == 0
                                    ? Value("7 " + kind + ", 1 thread")
                                    : Value::partly_measured("7 " + kind + ", threads: ", threads_text(threads), "");
            if (!(sec > 0)) {
                table.row({shown, "all", dash(), dash(), dash(), dash(), "-", dash()});
                continue;
            }
            const std::string k = "steps." + std::string(lib == 0 ? "blas" : "blis_lib") + (slot == 0 ? "1." : "T.");
            const double gflops = t.flops / sec / 1e9;
            const bool matches = lib == 0 ? best->openblas_matches : best->blis_matches;
            const double x_naive = gflops / t.naive_gflops;
            table.row({shown, "all", measured_shown(k + "seconds", sec, "{:.3g}"),
                       Value::measured(k + "gflops", gflops, 2),
                       Value::measured(k + "pct_peak", 100 * gflops / (slot == 0 ? t.peak.core : t.peak.all), 1),
                       Value::measured(k + "speedup", x_naive, 1), "-",
                       Value::measured_as(k + "matches", matches, matches ? "yes" : "NO")});
            report.record(k + "label", fmt::format("7 {} ({}), {}", kind, who, thr));
            report.record(k + "threads", slot == 0 ? 1 : threads);
        }
}

// A cache as the two columns of section 5 show it: reported by the machine, measured by chapter 8.
inline void cache_row(cachebook::ResultTable& table, const ch09::Settings& o, const ch09::MachineFacts& m, int level) {
    const auto& reported = m.caches[level - 1];
    const std::string key = fmt::format("caches_measured.l{}_bytes", level);
    const auto found = o.measured_caches ? o.measured_caches->bytes[level - 1] : std::nullopt;
    // Every key is recorded, null where nothing was measured, so the book's page builds either way.
    Value measured_cell = !o.measured_caches ? Value::unknown(key, "-")
                          : found            ? Value::measured_as(key, *found, cachebook::size_text(*found))
                                             : Value::unknown(key, "not found, reported used");
    table.row({ch09::level_name(level),
               reported ? Value::measured("", cachebook::size_text(reported->size_bytes))
                        : Value::measured("", std::string("unknown, a common size")),
               measured_cell});
}

inline void block_rows(cachebook::ResultTable& table, const ch09::Blocks& b) {
    const char* names[] = {"KC (sliver of B in L1)", "MC (block of A in L2)", "NC (panel of B in L3)"};
    const char* keys[] = {"kc", "mc", "nc"};
    for (int i = 0; i < 3; ++i) {
        auto pick = [&](const ch09::Blocking& x) { return i == 0 ? x.kc : i == 1 ? x.mc : x.nc; };
        table.row({names[i], Value::measured(fmt::format("blocking_rule.{}", keys[i]), pick(b.reported)),
                   b.measured ? Value::measured(fmt::format("blocking_rule_measured.{}", keys[i]), pick(*b.measured))
                              : Value::unknown(fmt::format("blocking_rule_measured.{}", keys[i]), "-")});
    }
}

}  // namespace ch09::cells
