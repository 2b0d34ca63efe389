// Chapter 9's output, one function per numbered section, in the order printed (main.cpp calls
// them); the optional sweeps last. Each figure is a Value made once, with its JSON key.
#include "sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cachebook/machine.hpp"
#include "cells.hpp"
#include "roofs_cells.hpp"

namespace ch09 {

using cachebook::Report;
using cachebook::Value;
using namespace ch09::cells;

// ---- 1. The machine ---------------------------------------------------------------------

namespace {

Value cache_value(const std::string& key, const std::optional<cachebook::CacheInfo>& c) {
    if (!c) return Value::unknown(key, "unknown");
    return Value::measured_as(key, c->size_bytes / 1024, cachebook::size_text(c->size_bytes));
}

void record_features(Report& report, const MachineFacts& m, const cachebook::Machine& machine) {
    report.record("machine.cpu_source", cachebook::source_name(machine.cpu_model_source));
    report.record("machine.line_bytes_used", m.line);
    report.record("machine.avx2", m.features.avx2);
    report.record("machine.fma", m.features.fma);
    report.record("machine.avx512", m.features.avx512f);
    report.record("machine.neon", m.features.neon);
}

}  // namespace

void machine_section(Report& report, const Settings& o, const MachineFacts& m) {
    const auto& machine = cachebook::machine();
    report.section("The machine");
    const std::string& cpu = machine.cpu_model;
    report.line("  CPU: {}",
                Value::measured_as(
                    "machine.cpu", cpu.empty() ? nlohmann::json() : nlohmann::json(cpu),
                    cpu.empty() ? "unknown"
                                : fmt::format("{} (from {})", cpu, cachebook::source_name(machine.cpu_model_source))));
    report.line("  usable cores: {}; threads for steps 5 to 7: {}", Value::measured("machine.cores", m.cpus),
                Value::measured("machine.threads", o.threads));
    report.line("  caches: L1d {}, L2 {}, L3 {}; line size {}", cache_value("machine.l1_kib", m.caches[0]),
                cache_value("machine.l2_kib", m.caches[1]), cache_value("machine.l3_kib", m.caches[2]),
                m.reported_line ? Value::measured_as("machine.line_bytes", *m.reported_line,
                                                     fmt::format("{} bytes", *m.reported_line))
                                : Value::unknown("machine.line_bytes", "unknown"));
    report.line("  where they come from: {}", Value::measured("machine.cache_sources", ch09::cache_sources(machine)));
    report.line("  instruction sets: {}", Value::measured("", ch09::instruction_sets(m.features)));
    // The scalar fallback says why: the CPU lacks the instructions, or the build left the kernels out.
    report.line("  kernels that run here: {} (step 4 and 5: {}; step 6: {})",
                Value::measured("machine.isa", ch09::isa_name(o.isa)), Value::measured("", ch09::steps45_kernel(o.isa)),
                Value::measured("", o.kernel.name));
    const Value nominal = Value::measured("machine.ghz_nominal", m.ghz_nominal, 2);
    report.line("  clock: {} GHz measured (dependent adds, one per cycle); {} nominal (/proc/cpuinfo)",
                Value::measured("machine.ghz_measured", m.ghz, 2),
                m.ghz_nominal > 0 ? Value::measured_as("machine.ghz_nominal", nominal.json(), nominal.text() + " GHz")
                                  : Value::unknown("machine.ghz_nominal", "unknown"));
    record_features(report, m, machine);
}

// ---- 2. The peak and the two ceilings -----------------------------------------------------

void peak_section(Report& report, const Settings& o, const MachineFacts& m, const Peak& peak) {
    const int width = ch09::simd_width(o.isa);
    const int per_cycle = 2 * width * ch09::kFmaPorts;
    report.section("Peak: cores x GHz x FLOPs per cycle");
    report.line("  FLOPs per cycle and core = 2 (an FMA is a multiply and an add) x {} floats x {} FMA units = {}",
                Value::measured("peak.width", width), Value::exact("peak.fma_ports", ch09::kFmaPorts),
                Value::measured("peak.flops_per_cycle", per_cycle));
    const double formula_core = ch09::formula_peak_gflops(1, m.ghz, width, ch09::kFmaPorts);
    const double formula_all = ch09::formula_peak_gflops(m.cpus, m.ghz, width, ch09::kFmaPorts);
    report.line("  formula: {} cores x {} GHz x {} = {} GFLOPS ({} on one core)", Value::measured("", m.cpus),
                Value::measured("", m.ghz, 2), Value::measured("", per_cycle),
                Value::measured("peak.formula_all", formula_all, 1),
                Value::measured("peak.formula_core", formula_core, 1));
    report.line("  measured, 12 independent FMA chains: {} GFLOPS on one core, {} on {} threads",
                Value::measured("peak.measured_core", peak.core, 1), Value::measured("peak.measured_all", peak.all, 1),
                Value::measured("", o.threads));
    report.line("  so one core retires {} FMA instructions per cycle",
                Value::measured("peak.fma_per_cycle", peak.core / (m.ghz * 2.0 * width), 2));
    report.line("  memory bandwidth, triad over 3 arrays of {} MiB on {} threads: {} GB/s",
                Value::measured("peak.triad_mib", peak.triad_floats * sizeof(float) >> 20),
                Value::measured("", o.threads), Value::measured("peak.bandwidth_gbs", peak.bandwidth, 1));
    report.line("  ridge point: {} FLOPs per byte (below it memory limits a loop, above it arithmetic)",
                Value::measured("peak.ridge", peak.all / peak.bandwidth, 1));
}

// ---- 3. The table of steps ---------------------------------------------------------------

void steps_section(Report& report, const Settings& o, const std::vector<StepResult>& steps, const Libraries& libs,
                   const Peak& peak, const ch09::Claims& claims) {
    const double flops = 2.0 * double(o.n) * double(o.n) * double(o.n);
    report.section("C = A x B, N = {}, float, row-major: seconds (minimum of {} runs), GFLOPS = 2 N^3 / seconds",
                   Value::exact("n", o.n), Value::measured("", ch09::table_runs_text(o)));
    report.line("  % of peak: of the measured FMA peak for the threads used; 'matches': every checked element");
    report.line("  within gamma_N x (|A||B|)ij of a double-precision reference, gamma_N = N u / (1 - N u), u = 2^-24");
    report.line("  (the worst case of float rounding for any order of summation; 'err/bound' is the largest");
    report.line("  error found as a fraction of it). Slow steps time only some rows of C and scale up.");
    auto table = report.table({"step", "rows timed", "seconds", "GFLOPS", "% peak", "x naive", "err/bound", "matches"});
    TableContext t{o.n, flops, flops / steps.front().seconds / 1e9, peak};
    for (const auto& r : steps) step_row(table, report, r, t);
    // Step 7 always has its four rows, so the output has one shape with or without the libraries.
    library_rows(table, report, libs, o.threads, t);
    table.print();
    report.line("  several threads: {}",
                Value::measured("", o.threads > 1
                                        ? fmt::format("{} threads in the rows that say so", o.threads)
                                        : std::string("not run, --threads 1 (the rows for several threads need two)")));
    report.line(
        "  step 6: {}",
        Value::measured("", libs.best() ? std::string("timed in turn with the libraries, in their process (section 6)")
                                        : std::string("timed in this process")));
    report.line("  step 7: {}", Value::measured("", ch09::openblas_note(o, libs)));
    report.line("  step 7: {}", Value::measured("", ch09::blis_note(o, libs)));
    report.line("  measured claims, each side timed interleaved with the other on N = {}:",
                Value::measured("claims.n", claims.n));
    cachebook::report_claim(report, "ikj", "step 1 / step 2 (32 rows)", claims.ikj);
    cachebook::report_claim(report, "simd", "step 3 / step 4 (64 rows, T = 32)", claims.simd);
    cachebook::report_claim(report, "blis", "step 4 / step 6 on 1 thread", claims.blis);
}

// ---- 4. The roofline ------------------------------------------------------------------------

// Each step's intensity and roof are recorded here, where the table prints them.
void roofline_section(Report& report, const Settings& o, const std::vector<StepResult>& steps, const Peak& peak,
                      const ch09::Roofs& roofs) {
    const double flops = 2.0 * double(o.n) * double(o.n) * double(o.n);
    report.section("Roofline: FLOPs per byte of memory traffic (a model for matrices larger than the caches)");
    auto roof = report.table({"step", "FLOPs/byte", "roof GFLOPS", "measured", "% of roof"});
    for (const auto& r : steps) {
        if (r.intensity <= 0) continue;
        const std::string intensity_text = fmt::format("{:.3g}", r.intensity);
        if (r.seconds <= 0) {  // not run: --threads 1
            roof.row({shown_label(r), Value::measured("", intensity_text), dash(), dash(), dash()});
            continue;
        }
        const std::string k = "steps." + r.key + ".";
        const double gflops = flops / r.seconds / 1e9;
        const double bound = std::min(r.threads == 1 ? peak.core : peak.all, r.intensity * peak.bandwidth);
        roof.row({shown_label(r), measured_shown(k + "intensity", r.intensity, "{:.3g}"),
                  Value::measured(k + "roof_gflops", bound, 1), Value::measured("", gflops, 2),
                  Value::measured("", 100 * gflops / bound, 0)});
    }
    roof.print();
    report.line("  roof = min(peak, FLOPs/byte x {} GB/s)", Value::measured("", peak.bandwidth, 1));
    ch09::cells::measured_roofs(report, o, steps, peak, roofs);
}

// ---- 5. Step 6's blocks -------------------------------------------------------------------

namespace {

void search_table(Report& report, const ch09::Blocks& b, double flops) {
    const double rule_seconds = ch09::rule_seconds(b.trials, b.rule);
    report.line("  search: step 6 on one thread at this N, GFLOPS (each candidate's fastest run)");
    auto table = report.table_of_rows("block_search", {"KC", "MC", "GFLOPS", "vs rule", "used"});
    for (const auto& t : b.trials) {
        const bool chosen = t.blocks.mc == b.used.mc && t.blocks.kc == b.used.kc;
        table.row({Value::measured("kc", t.blocks.kc), Value::measured("mc", t.blocks.mc),
                   Value::measured("gflops", flops / t.seconds / 1e9, 1),
                   Value::measured("", fmt::format("{:+.1f}%", 100 * (rule_seconds / t.seconds - 1))),
                   Value::measured("", std::string(chosen ? "*" : ""))});
    }
    table.print();
    report.record(
        Value::measured("block_search_gain_pct", 100 * (rule_seconds / ch09::fastest_seconds(b.trials) - 1), 1));
}

}  // namespace

void blocks_section(Report& report, const Settings& o, const MachineFacts& m, const ch09::Blocks& b) {
    report.section("Step 6's blocks: a rule from the caches, reported and measured, then a short search");
    report.line("  micro-kernel {}: a block of {} x {} elements of C stays in registers",
                Value::measured("blocking.kernel", o.kernel.name), Value::measured("blocking.mr", o.kernel.mr),
                Value::measured("blocking.nr", o.kernel.nr));
    report.line("  rule: a KC x NR sliver of B fills 3/4 of L1, an MC x KC block of A 3/4 of L2,");
    report.line("        a KC x NC panel of B half of L3 (NC at most 4096 columns)");
    auto table = report.table({"", "reported caches", "measured (chapter 8)"});
    for (int level = 1; level <= 3; ++level) cache_row(table, o, m, level);
    block_rows(table, b);
    table.print();
    report.line(
        "  measured caches: {}",
        Value::measured("", o.measured_caches ? "from " + o.caches_path : std::string("none given (--caches FILE)")));
    report.line(
        "  the search starts from the blocks of the {} caches",
        Value::measured_as("blocks_from", b.measured ? "measured" : "reported", b.measured ? "measured" : "reported"));
    if (b.trials.empty())
        report.line("  search: skipped, blocks given with --mc, --kc or --nc");
    else
        search_table(report, b, 2.0 * double(o.n) * double(o.n) * double(o.n));
    report.line("  used: KC = {}, MC = {}, NC = {}", Value::measured("blocking.kc", b.used.kc),
                Value::measured("blocking.mc", b.used.mc), Value::measured("blocking.nc", b.used.nc));
}

// ---- 6. Step 6 beside the libraries ----------------------------------------------------------

namespace {

void record_cores(Report& report, const Libraries& libs, double flops) {
    auto g = [&](double sec) { return sec > 0 ? Value::measured("", flops / sec / 1e9, 1).json() : nlohmann::json(); };
    nlohmann::json cores = nlohmann::json::array();
    for (const auto& c : libs.cores)
        if (!c.run.openblas_core.empty())
            cores.push_back({{"coretype", c.coretype},
                             {"core", c.run.openblas_core},
                             {"gflops1", g(c.run.openblas[0])},
                             {"gflopsT", g(c.run.openblas[1])}});
    report.record("blas.cores", cores);
    report.record("blas.available", ch09::blas_available());
    for (std::size_t slot = 0; slot < 2; ++slot)  // OpenBLAS alone in its process, one call (the page quotes it)
        report.record(std::string(slot == 0 ? "versus.one_thread" : "versus.all_threads") + ".openblas_alone_gflops",
                      libs.alone ? g(libs.alone->openblas[slot]) : nlohmann::json());
}

// One line of the comparison: step 6, OpenBLAS and BLIS on one thread (slot 0) or all (slot 1).
void versus_line(Report& report, const ch09::LibraryRun* best, std::size_t slot, double flops, int threads) {
    const std::string k = slot == 0 ? "versus.one_thread." : "versus.all_threads.";
    auto gf = [&](const std::string& key, double sec) {
        return figure_or_dash(k + key, sec > 0 ? flops / sec / 1e9 : 0);
    };
    const double s6 = best ? best->step6[slot] : 0, ob = best ? best->openblas[slot] : 0,
                 bl = best ? best->blis[slot] : 0;
    const Value head =
        slot == 0 ? Value("1 thread: ") : Value::partly_measured("threads ", cells::threads_text(threads), ":");
    report.line("    {} step 6 {} GFLOPS, OpenBLAS {}, BLIS {}: step 6 = {} of OpenBLAS, {} of BLIS", head,
                gf("step6_gflops", s6), gf("openblas_gflops", ob), gf("blis_gflops", bl),
                percent_or_dash(k + "pct_openblas", ch09::ratio(ob, s6)),
                percent_or_dash(k + "pct_blis", ch09::ratio(bl, s6)));
}

// The speed-up from one thread to all, the parallel share Amdahl's law reads from it, and the
// share Gustafson's law needs to pass through the same point (recorded for the page and plot).
void speedup_line(Report& report, const ch09::LibraryRun* best, int threads, const ch09::Claims& claims) {
    auto up = [&](const std::array<double, 2>& sec) { return threads > 1 ? ch09::ratio(sec[0], sec[1]) : 0.0; };
    const double s6 = best ? up(best->step6) : 0, ob = best ? up(best->openblas) : 0;
    auto share = [&](const std::string& key, double s) {
        const double p = s > 0 ? ch09::parallel_share(s, threads) : 0;
        if (!(s > 0)) {
            report.record(key + "gustafson_share", nullptr);
            return Value::unknown(key + "parallel_share", "-");
        }
        report.record(Value::measured(key + "gustafson_share", ch09::gustafson_share(p, threads), 3));
        return Value::measured(key + "parallel_share", p, 3);
    };
    report.line("    speed-up, 1 to {} threads: step 6 {}x, OpenBLAS {}x (Amdahl: parallel shares {} and {})",
                Value::measured_as("speedup.threads", threads, cells::threads_text(threads)),
                figure_or_dash("speedup.step6", s6, 2), figure_or_dash("speedup.openblas", ob, 2),
                share("speedup.step6_", s6), share("speedup.openblas_", ob));
    cachebook::report_claim(report, "threads", "step 6 on 1 thread / on 2", claims.threads, 2);
}

}  // namespace

void libraries_section(Report& report, const Settings& o, const Libraries& libs, const Peak& peak,
                       const ch09::Claims& claims) {
    const double flops = 2.0 * double(o.n) * double(o.n) * double(o.n);
    const ch09::LibraryRun* best = libs.best();
    report.section("Step 6 beside the libraries (each OpenBLAS kernel in its own process)");
    report.line("  OpenBLAS kernels tried, GFLOPS on 1 and {} threads: {}",
                Value::measured("", cells::threads_text(o.threads)),
                Value::measured("", ch09::cores_tried(libs, flops)));
    record_cores(report, libs, flops);
    const std::string coretype = libs.have_openblas() ? libs.cores[*libs.fastest].coretype : "";
    report.line(
        "  OpenBLAS's own choice: {}; the fastest here: {} (OPENBLAS_CORETYPE={})",
        Value::measured_as("blas.default_core", libs.default_core, libs.default_core.empty() ? "-" : libs.default_core),
        Value::measured_as("blas.best_core", libs.have_openblas() ? best->openblas_core : "",
                           libs.have_openblas() ? best->openblas_core : "-"),
        Value::measured("", !libs.have_openblas() ? std::string("-")
                            : coretype.empty()    ? std::string("not set")
                                                  : coretype));
    report.line("  BLIS: {}", Value::measured_as("blas.blis_lib", best ? best->blis_name : "",
                                                 best && !best->blis_name.empty() ? best->blis_name : "-"));
    report.line("  step 6 and the libraries timed in turn in one process, N = {}", o.n);
    for (std::size_t slot = 0; slot < 2; ++slot) versus_line(report, best, slot, flops, o.threads);
    const double step6 = best && best->step6[0] > 0 ? flops / best->step6[0] / 1e9 : 0;
    const double openblas = libs.have_openblas() && best->openblas[0] > 0 ? flops / best->openblas[0] / 1e9 : 0;
    report.line("    1 thread:  step 6 reaches {} of the measured FMA peak, OpenBLAS {}",
                percent_or_dash("versus.one_thread.pct_of_peak", step6 / peak.core),
                percent_or_dash("versus.one_thread.openblas_pct_of_peak", openblas / peak.core));
    const double plain = best ? best->step6_plain : 0;
    report.line(
        "    1 thread, the same kernel without the prefetch of C: {} GFLOPS, {} of OpenBLAS",
        figure_or_dash("versus.one_thread.plain_gflops", plain > 0 ? flops / plain / 1e9 : 0),
        percent_or_dash("versus.one_thread.plain_pct_openblas", ch09::ratio(best ? best->openblas[0] : 0, plain)));
    speedup_line(report, best, o.threads, claims);
}

// ---- The optional sweeps: the challenges at the end of the course notes --------------------------

void tile_sweep(Report& report, ch09::Problem& p, const Settings& o, cachebook::Progress& progress) {
    const auto rows = ch09::time_tiles(p, o.isa, ch09::sweep_tiles(p.shape.n), ch09::all_runs(o), 0.6e9 * o.scale(),
                                       3e9 * o.scale(), progress);
    report.blank_line();
    report.line("Tile sweep (steps 3 and 4, GFLOPS)");
    auto table = report.table_of_rows("tile_sweep", {"T", "3 tiled", "4 tiled + SIMD"});
    for (const auto& r : rows)
        table.row({Value::exact("tile", r.tile), Value::measured("tiled", r.scalar_gflops, 2),
                   Value::measured("simd", r.vector_gflops, 2)});
    table.print();
}

void thread_sweep(Report& report, ch09::Problem& p, const Settings& o, const MachineFacts& m, Blocking blocks,
                  cachebook::Progress& progress) {
    const auto rows = ch09::time_threads(p, o, m.tile, blocks, progress);
    report.blank_line();
    report.line("Thread sweep (steps 5 and 6, GFLOPS)");
    auto table = report.table_of_rows("thread_sweep", {"threads", "5 threaded", "6 packed"});
    for (const auto& r : rows)
        table.row({Value::exact("threads", r.threads), gflops_cell("threaded", r.threaded_gflops),
                   gflops_cell("blis", r.blis_gflops)});
    table.print();
}

void kernel_sweep(Report& report, ch09::Problem& p, const ch09::Reference& ref, const Settings& o, const Peak& peak,
                  cachebook::Progress& progress) {
    const auto rows = ch09::time_kernels(p, ref, o.runs, progress);
    report.blank_line();
    report.line("Micro-kernel sweep (step 6 on 1 thread; blocks derived for each kernel)");
    auto table = report.table_of_rows("kernel_sweep", {"kernel", "MC", "KC", "NC", "GFLOPS", "% peak"});
    for (const auto& r : rows)
        table.row({Value::exact_as("kernel", r.name, r.name + (r.matches ? "" : " (WRONG)")),
                   Value::measured("", r.blocks.mc), Value::measured("", r.blocks.kc), Value::measured("", r.blocks.nc),
                   gflops_cell("gflops", r.gflops), Value::measured("", 100 * r.gflops / peak.core, 0)},
                  {{"matches", r.matches}});
    table.print();
}

}  // namespace ch09
