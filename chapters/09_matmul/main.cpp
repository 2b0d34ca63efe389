// ch09_matmul: prints what chapter 9 shows, one function per numbered section. The steps are in
// matmul*.cpp, the measuring in timing.cpp; each result is written once, through cachebook::Report.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "matmul.hpp"
#include "timing.hpp"

namespace {

using cachebook::measured;
using cachebook::Report;
using cachebook::Value;
using ch09::Blocking;
using ch09::Isa;
using ch09::RowRange;
using ch09::Shape;

double round_to(double x, int digits) {
    const double f = std::pow(10.0, digits);
    return std::round(x * f) / f;
}

// A measured cell that says "-": not run here.
Value dash() {
    return Value::measured("", std::string("-"));
}

// A measured figure printed with one decimal, or "-" and null when it was not measured (0).
Value figure_or_dash(std::string key, double x, int digits = 1) {
    if (!(x > 0) || !std::isfinite(x)) return Value::unknown(std::move(key), "-");
    return Value::measured_as(std::move(key), round_to(x, digits), fmt::format("{:.{}f}", x, digits));
}

// A ratio as a percentage ("91%"), or "-" and null when either side was not measured.
Value percent_or_dash(std::string key, double ratio) {
    if (!(ratio > 0) || !std::isfinite(ratio)) return Value::unknown(std::move(key), "-");
    return Value::measured_as(std::move(key), round_to(100 * ratio, 1), fmt::format("{:.0f}%", 100 * ratio));
}

// ---- Options --------------------------------------------------------------------------

struct Options {
    std::size_t n = 2048;
    int threads = 1, runs = 3;
    bool quick = false;
    Isa isa = Isa::Scalar;
    ch09::MicroKernel kernel;
    std::optional<std::size_t> tile, mc, kc, nc;  // given on the command line
    std::optional<ch09::MeasuredCaches> measured_caches;
    std::string caches_path;
    bool sweep_tiles = false, sweep_threads = false, sweep_kernels = false, child = false, no_blas = false;
    [[nodiscard]] double scale() const { return quick ? 0.25 : 1.0; }  // of the FLOPs each sample times
    [[nodiscard]] bool blocks_given() const { return mc || kc || nc; }
    // Blocks given on the command line replace the rule's, one by one.
    [[nodiscard]] Blocking with_given(Blocking rule) const {
        return {mc.value_or(rule.mc), kc.value_or(rule.kc), nc.value_or(rule.nc)};
    }
};

Isa parse_isa(const std::string& name) {
    if (name.empty()) return ch09::best_isa();
    for (Isa isa : ch09::kAllIsas)
        if (ch09::isa_name(isa) == name) {
            if (!ch09::isa_supported(isa))
                throw cachebook::UsageError(fmt::format("--isa {}: {}", name, ch09::isa_unavailable_reason(isa)));
            return isa;
        }
    throw cachebook::UsageError(fmt::format("--isa: expected scalar, avx2, avx512 or neon, got '{}'", name));
}

ch09::MicroKernel parse_kernel(const std::string& name, Isa isa) {
    if (name.empty()) return ch09::default_micro_kernel(isa);
    std::string known;
    for (Isa i : ch09::kAllIsas)
        for (const auto& k : ch09::micro_kernels(i)) {
            if (k.name == name && !ch09::isa_supported(i))
                throw cachebook::UsageError(fmt::format("--kernel '{}': this CPU cannot run it", name));
            if (k.name == name) return k;
            if (ch09::isa_supported(i)) known += (known.empty() ? "" : ", ") + k.name;
        }
    throw cachebook::UsageError(fmt::format("--kernel: expected one of {}; got '{}'", known, name));
}

ch09::MeasuredCaches parse_caches(const std::string& path) {
    try {
        return ch09::read_measured_caches(path);
    } catch (const std::invalid_argument& e) {
        throw cachebook::UsageError(fmt::format("--caches {}: {}", path, e.what()));
    }
}

std::optional<std::size_t> given(const CLI::Option* flag, std::int64_t value) {
    return flag->count() ? std::optional<std::size_t>(static_cast<std::size_t>(value)) : std::nullopt;
}

// Parses and checks the options; an exit status when the program should stop now.
std::optional<int> parse(cachebook::Cli& cli, Options& o, int argc, char** argv) {
    std::int64_t n = 2048, threads = cachebook::usable_cpus(), tile = 32, runs = 3, mc = 0, kc = 0, nc = 0;
    std::string isa, kernel;
    auto* n_flag = cli.add_int("--n", n, "Order N of the N x N matrices (--quick: 512)", 1, 8192);
    cli.add_int("--threads", threads, "Threads for steps 5 to 7 (default: every usable CPU)", 1, 256);
    auto* tile_flag = cli.add_int("--tile", tile, "Tile of steps 3 to 5 (default: from the L1 size)", 1, 4096);
    auto* runs_flag =
        cli.add_int("--runs", runs, "Timed runs per measurement; the minimum is reported (--quick: 2)", 1, 100);
    cli.add_string("--isa", isa, "Kernels to use: scalar, avx2, avx512 or neon (default: the widest this CPU has)");
    cli.add_string("--kernel", kernel, "Micro-kernel of step 6, e.g. 'avx2 6x16' (default: the isa's first)");
    auto* mc_flag = cli.add_int("--mc", mc, "Step 6's MC (default: the rule, then a short search)", 1, 1 << 16);
    auto* kc_flag = cli.add_int("--kc", kc, "Step 6's KC (default: the rule, then a short search)", 1, 1 << 16);
    auto* nc_flag = cli.add_int("--nc", nc, "Step 6's NC (default: the rule, then a short search)", 1, 1 << 16);
    cli.add_string("--caches", o.caches_path,
                   "Results of ch08_cliff --json: step 6's blocks from the caches chapter 8 measured");
    cli.app().add_flag("--sweep-tiles", o.sweep_tiles, "Also time steps 3 and 4 for tiles 8 to 256");
    cli.app().add_flag("--sweep-threads", o.sweep_threads, "Also time steps 5 and 6 for 1 to --threads threads");
    cli.app().add_flag("--sweep-kernels", o.sweep_kernels, "Also time step 6 with every micro-kernel (register block)");
    cli.app().add_flag("--no-blas", o.no_blas, "Skip step 7 (OpenBLAS and BLIS)");
    cli.app().add_flag("--blas-child", o.child,
                       "Internal: time step 6, OpenBLAS and BLIS side by side, print one JSON line");
    if (auto status = cli.parse(argc, argv)) return status;
    o.quick = cli.quick();
    o.n = static_cast<std::size_t>(o.quick && n_flag->count() == 0 ? 512 : n);
    o.threads = static_cast<int>(threads);
    o.runs = static_cast<int>(o.quick && runs_flag->count() == 0 ? 2 : runs);
    o.isa = parse_isa(isa);
    o.kernel = parse_kernel(kernel, o.isa);
    o.tile = given(tile_flag, tile);
    o.mc = given(mc_flag, mc), o.kc = given(kc_flag, kc), o.nc = given(nc_flag, nc);
    if (o.tile && *o.tile > o.n)
        throw cachebook::UsageError(fmt::format("--tile {} is larger than --n {}", *o.tile, o.n));
    if (!o.caches_path.empty()) o.measured_caches = parse_caches(o.caches_path);
    cachebook::require_memory(3 * o.n * o.n * sizeof(float) * 2, fmt::format("--n {}", o.n));
    return std::nullopt;
}

// ---- 1. The machine ---------------------------------------------------------------------

struct MachineFacts {
    int cpus = 1;
    std::array<std::optional<cachebook::CacheInfo>, 3> caches;  // L1d, L2, L3
    std::optional<std::size_t> reported_line;
    std::size_t line = 64;  // the models assume 64 bytes when the machine does not say
    cachebook::CpuFeatures features;
    double ghz = 0, ghz_nominal = 0;
    std::size_t tile = 32;  // of steps 3 to 5
    [[nodiscard]] std::array<std::size_t, 3> cache_bytes() const {
        std::array<std::size_t, 3> out{};
        for (int i = 0; i < 3; ++i) out[i] = caches[i] ? caches[i]->size_bytes : 0;
        return out;
    }
};

std::string level_name(int level) {
    return level == 1 ? "L1d" : fmt::format("L{}", level);
}

// "L1d hwloc, L2 hwloc, L3 hwloc", and why any level is unknown.
std::string cache_sources(const cachebook::Machine& machine) {
    std::string s, missing;
    for (int level = 1; level <= 3; ++level) {
        const auto c = machine.data_cache(level);
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", level_name(level),
                         cachebook::source_name(c ? c->source : cachebook::Source::unknown));
        if (!c) missing += (missing.empty() ? "" : ", ") + level_name(level);
    }
    return missing.empty() ? s : s + "; " + machine.why_unknown(missing);
}

// The vector instructions the kernels choose between, as this architecture names them.
std::string instruction_sets(const cachebook::CpuFeatures& f) {
    auto yes = [](bool b) { return b ? "yes" : "no"; };
#if defined(__aarch64__)
    return fmt::format("NEON {} (with FMA)", yes(f.neon));
#else
    return fmt::format("AVX2 {}, FMA {}, AVX-512 {}", yes(f.avx2), yes(f.fma), yes(f.avx512f));
#endif
}

// What steps 4 and 5 run: the vector kernel, or the scalar fallback and why.
std::string steps45_kernel(Isa isa) {
    if (isa == Isa::Avx2 || isa == Isa::Avx512) return "avx2 + fma";
    if (isa == Isa::Neon) return "neon fma";
#if defined(__aarch64__)
    constexpr Isa vector = Isa::Neon;
#else
    constexpr Isa vector = Isa::Avx2;
#endif
    return ch09::isa_supported(vector) ? "scalar, as --isa asks"
                                       : "scalar fallback, " + ch09::isa_unavailable_reason(vector);
}

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

MachineFacts machine_section(Report& report, const Options& o, cachebook::Progress& progress) {
    const auto& machine = cachebook::machine();
    MachineFacts m;
    m.cpus = cachebook::usable_cpus();
    for (int i = 0; i < 3; ++i) m.caches[i] = machine.data_cache(i + 1);
    m.reported_line = machine.line_bytes();
    m.line = m.reported_line.value_or(64);
    m.features = cachebook::cpu_features();
    m.tile = o.tile.value_or(std::min(o.n, ch09::tile_from_l1(m.caches[0] ? m.caches[0]->size_bytes : 32768)));
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
    report.line("  where they come from: {}", Value::measured("machine.cache_sources", cache_sources(machine)));
    report.line("  instruction sets: {}", Value::measured("", instruction_sets(m.features)));
    // The scalar fallback says why: the CPU lacks the instructions, or the build left the kernels out.
    report.line("  kernels that run here: {} (step 4 and 5: {}; step 6: {})",
                Value::measured("machine.isa", ch09::isa_name(o.isa)), Value::measured("", steps45_kernel(o.isa)),
                Value::measured("", o.kernel.name));
    progress.step("clock");
    m.ghz_nominal = ch09::nominal_clock_ghz();
    m.ghz = cachebook::estimate_clock_ghz(o.quick ? 0.05 : 0.2).value_or(0.0);
    report.line("  clock: {} GHz measured (dependent adds, one per cycle); {} nominal (/proc/cpuinfo)",
                Value::measured("machine.ghz_measured", round_to(m.ghz, 2), "{:.2f}"),
                m.ghz_nominal > 0 ? Value::measured_as("machine.ghz_nominal", round_to(m.ghz_nominal, 2),
                                                       fmt::format("{:.2f} GHz", m.ghz_nominal))
                                  : Value::unknown("machine.ghz_nominal", "unknown"));
    record_features(report, m, machine);
    return m;
}

// ---- 2. The peak and the two ceilings -----------------------------------------------------

struct Peak {
    double core = 0, all = 0;  // measured GFLOPS: one core, all threads
    double bandwidth = 0;      // GB/s, triad
};

Peak peak_section(Report& report, const Options& o, const MachineFacts& m, cachebook::Progress& progress) {
    progress.step("peak");
    const int width = ch09::simd_width(o.isa);
    // Two FMA units per core: Intel since Haswell, AMD since Zen 2, ARM's Cortex-A76 and Neoverse N1
    // (128-bit each); some cores have one 512-bit unit or four 128-bit ones: the measured line shows it.
    constexpr int kFmaPorts = 2;
    const double fma_seconds = o.quick ? 0.15 : 0.4;
    Peak peak{ch09::measure_fma_gflops(o.isa, 1, fma_seconds), ch09::measure_fma_gflops(o.isa, o.threads, fma_seconds)};
    progress.step("bandwidth");
    const std::size_t l3_bytes = m.caches[2] ? m.caches[2]->size_bytes : 8u << 20;
    const std::size_t triad_floats =
        o.quick ? (8u << 20) : std::clamp<std::size_t>(2 * l3_bytes / sizeof(float), 16u << 20, 64u << 20);
    peak.bandwidth = ch09::measure_triad_gbs(triad_floats, o.threads, o.quick ? 3 : 5);
    const int per_cycle = 2 * width * kFmaPorts;
    report.section("Peak: cores x GHz x FLOPs per cycle");
    report.line("  FLOPs per cycle and core = 2 (an FMA is a multiply and an add) x {} floats x {} FMA units = {}",
                Value::measured("peak.width", width), Value::exact("peak.fma_ports", kFmaPorts),
                Value::measured("peak.flops_per_cycle", per_cycle));
    const double formula_core = ch09::formula_peak_gflops(1, m.ghz, width, kFmaPorts);
    const double formula_all = ch09::formula_peak_gflops(m.cpus, m.ghz, width, kFmaPorts);
    report.line("  formula: {} cores x {} GHz x {} = {} GFLOPS ({} on one core)", Value::measured("", m.cpus),
                Value::measured("", m.ghz, "{:.2f}"), Value::measured("", per_cycle),
                Value::measured("peak.formula_all", round_to(formula_all, 1), "{:.1f}"),
                Value::measured("peak.formula_core", round_to(formula_core, 1), "{:.1f}"));
    report.line("  measured, 12 independent FMA chains: {} GFLOPS on one core, {} on {} threads",
                Value::measured("peak.measured_core", round_to(peak.core, 1), "{:.1f}"),
                Value::measured("peak.measured_all", round_to(peak.all, 1), "{:.1f}"), Value::measured("", o.threads));
    report.line("  so one core retires {} FMA instructions per cycle",
                Value::measured("peak.fma_per_cycle", round_to(peak.core / (m.ghz * 2.0 * width), 2), "{:.2f}"));
    report.line("  memory bandwidth, triad over 3 arrays of {} MiB on {} threads: {} GB/s",
                Value::measured("peak.triad_mib", triad_floats * sizeof(float) >> 20), Value::measured("", o.threads),
                Value::measured("peak.bandwidth_gbs", round_to(peak.bandwidth, 1), "{:.1f}"));
    report.line("  ridge point: {} FLOPs per byte (below it memory limits a loop, above it arithmetic)",
                Value::measured("peak.ridge", round_to(peak.all / peak.bandwidth, 1), "{:.1f}"));
    return peak;
}

// ---- Measuring the steps ------------------------------------------------------------------

/// One row of the table of steps.
struct StepResult {
    std::string key, label, shown_label;  // shown_label: the label with its machine-dependent parts masked
    double seconds = 0;                   // for the whole product (extrapolated from the rows timed); 0: not run
    std::size_t rows_timed = 0;           // rows of C computed per timed run
    int threads = 1;
    ch09::Check check;
    double intensity = 0;  // FLOPs per byte, by the model; 0: no model
    bool sampled = false;  // rows_timed chosen by sample_rows: it depends on the tile, so on the L1
};

/// Step 6's blocks: the rules from the reported and the measured caches, and the search.
struct Blocks {
    Blocking reported, rule, used;
    std::optional<Blocking> measured;
    std::vector<ch09::BlockTrial> trials;  // empty: blocks given on the command line
};

Blocks choose_blocks(ch09::Problem& p, const Options& o, const MachineFacts& m, cachebook::Progress& progress) {
    Blocks b;
    b.reported =
        ch09::derive_blocking(m.cache_bytes()[0], m.cache_bytes()[1], m.cache_bytes()[2], o.kernel.mr, o.kernel.nr);
    if (o.measured_caches) b.measured = ch09::measured_blocking(*o.measured_caches, m.cache_bytes(), o.kernel);
    b.rule = b.measured.value_or(b.reported);
    b.used = o.with_given(b.rule);
    if (!o.blocks_given()) {
        progress.step("block search");
        b.trials = ch09::search_blocks(p, o.kernel, b.rule, o.runs);
        b.used = ch09::fastest_blocks(b.trials);
    }
    return b;
}

/// Step 7: each OpenBLAS kernel worth trying in a child process of its own, with step 6 and BLIS.
struct Libraries {
    std::string default_core;  // OpenBLAS's own choice ("" without OpenBLAS)
    std::vector<ch09::CoreRun> cores;
    std::optional<std::size_t> fastest;
    [[nodiscard]] const ch09::LibraryRun* best() const { return fastest ? &cores[*fastest].run : nullptr; }
    [[nodiscard]] bool have_openblas() const { return best() && !best()->openblas_core.empty(); }
};

Libraries run_libraries(const Options& o, const MachineFacts& m, Blocking blocks, cachebook::Progress& progress) {
    Libraries libs;
    const bool blas = ch09::blas_available() && !o.no_blas;
    libs.default_core = blas ? ch09::blas_corename() : "";
    if (o.no_blas || !(blas || ch09::blis_lib_available())) return libs;
    std::vector<std::string> coretypes = {""};
    if (blas && m.features.avx2 && m.features.fma) coretypes.push_back("Haswell");
    if (blas && m.features.avx512f) coretypes.push_back("SkylakeX");
    const ch09::ChildRequest request{ch09::self_path(), "",    o.n, o.threads, std::max(o.runs, o.quick ? 2 : 4),
                                     o.kernel.name,     blocks};
    for (const auto& coretype : coretypes) {
        if (!coretype.empty() && coretype == libs.default_core) continue;
        progress.step("libraries " + (coretype.empty() ? libs.default_core : coretype));
        auto child = request;
        child.coretype = coretype;
        if (auto run = ch09::run_child(child)) libs.cores.push_back({coretype, *run});
    }
    libs.fastest = ch09::fastest_openblas(libs.cores);
    return libs;
}

struct StepRunner {
    ch09::Problem& p;
    const ch09::Reference& ref;
    const Options& o;
    cachebook::Progress& progress;
    std::vector<StepResult> steps;

    // C is cleared before each step, so that no step is checked on rows another step wrote.
    void clear_c() { std::fill(p.c.get(), p.c.get() + p.shape.m * p.shape.n, 0.0f); }
    StepResult& sampled(StepResult r, double flops, std::size_t multiple, int warmup,
                        const std::function<void(RowRange)>& run) {
        progress.step(r.key);
        clear_c();
        r.rows_timed = ch09::sample_rows(p.shape, flops * o.scale(), multiple);
        r.seconds = ch09::time_rows(p, r.rows_timed, o.runs, warmup, run);
        r.check = ref.check(p, r.rows_timed == p.shape.m);
        r.sampled = true;
        return steps.emplace_back(std::move(r));
    }
    StepResult& whole(StepResult r, int runs, const std::function<void()>& run) {
        progress.step(r.key);
        clear_c();
        r.seconds = cachebook::time_runs(runs, run, 1).min();
        r.rows_timed = p.shape.m;
        r.check = ref.check(p, true);
        return steps.emplace_back(std::move(r));
    }
};

StepResult step(std::string key, std::string label, double intensity, int threads = 1) {
    StepResult r;
    r.key = std::move(key);
    r.label = label;
    r.shown_label = std::move(label);
    r.intensity = intensity;
    r.threads = threads;
    return r;
}

// A label with one machine-dependent part: recorded as it is, shown masked in golden mode.
StepResult step(std::string key, const std::string& before, const std::string& part, const std::string& after,
                double intensity, int threads = 1) {
    StepResult r = step(std::move(key), before + part + after, intensity, threads);
    r.shown_label = before + measured("{}", part) + after;
    return r;
}

std::string threads_text(int threads) {
    return threads > 1 ? fmt::format("{}", threads) : "-";
}

void run_scalar_steps(StepRunner& run, const MachineFacts& m, Report& report) {
    const Shape s = run.p.shape;
    const float *a = run.p.a.get(), *b = run.p.b.get();
    float* c = run.p.c.get();
    run.sampled(step("naive", "1 naive i-j-k", ch09::intensity_naive(m.line)), 0.05e9, 1, 0,
                [&](RowRange r) { ch09::matmul_naive(a, b, c, s, r); });
    ch09::Buffer bt = ch09::make_buffer(s.n * s.k);
    const double transpose = cachebook::time_runs(
                                 run.o.runs, [&] { ch09::transpose(b, bt.get(), s.k, s.n); }, 1)
                                 .min();
    run.sampled(step("naive_bt", "1t naive, B transposed first", ch09::intensity_ikj()), 0.1e9, 1, 0,
                [&](RowRange r) { ch09::matmul_naive_bt(a, bt.get(), c, s, r); })
        .seconds += transpose;
    report.record("transpose_seconds", transpose);
    run.sampled(step("ikj", "2 i-k-j", ch09::intensity_ikj()), 0.1e9, 1, 0,
                [&](RowRange r) { ch09::matmul_ikj(a, b, c, s, r); });
    run.sampled(step("tiled", "3 tiled, T = ", fmt::format("{}", m.tile), "", ch09::intensity_tiled(m.tile)), 0.2e9,
                m.tile, 0, [&](RowRange r) { ch09::matmul_tiled(a, b, c, s, r, m.tile); });
}

// Steps 1 to 6, measured in this process. Step 6 is timed here only where no library run
// timed it (each child times it beside the libraries, and the table shows those figures).
std::vector<StepResult> run_steps(StepRunner& run, const MachineFacts& m, Blocking blocks, const Libraries& libs,
                                  Report& report) {
    run_scalar_steps(run, m, report);
    const Shape s = run.p.shape;
    const float *a = run.p.a.get(), *b = run.p.b.get();
    float* c = run.p.c.get();
    const Options& o = run.o;
    const std::string vector_name = o.isa == Isa::Scalar ? "scalar fallback"
                                    : o.isa == Isa::Neon ? "NEON FMA"
                                                         : "AVX2 FMA";
    run.sampled(step("simd", "4 tiled + ", vector_name, "", ch09::intensity_tiled(m.tile)), 1e9, m.tile, 1,
                [&](RowRange r) { ch09::matmul_tiled_simd(a, b, c, s, r, m.tile, o.isa); });
    run.whole(step("threaded", "5 step 4, threads: ", fmt::format("{}", o.threads), "", ch09::intensity_tiled(m.tile),
                   o.threads),
              o.runs, [&] { ch09::matmul_threaded(a, b, c, s, m.tile, o.isa, o.threads); });
    const double ai = ch09::intensity_blis(s, blocks);
    const ch09::LibraryRun* beside = libs.best();
    const int runs6 = beside ? 1 : o.runs;  // with the libraries, this run only checks the result
    auto& one = run.whole(step("blis1", "6 packed + micro-kernel, 1 thread", ai), runs6,
                          [&] { ch09::matmul_blis(a, b, c, s, o.kernel, blocks, 1); });
    if (beside) one.seconds = beside->step6[0];
    StepResult all = step("blisT", "6 packed + micro-kernel, threads: ", threads_text(o.threads), "", ai, o.threads);
    if (o.threads > 1) {
        auto& many =
            run.whole(std::move(all), runs6, [&] { ch09::matmul_blis(a, b, c, s, o.kernel, blocks, o.threads); });
        if (beside) many.seconds = beside->step6[1];
    } else {  // the row stays, empty, so the output has one shape; the line under the table says why
        run.steps.push_back(std::move(all));
    }
    return run.steps;
}

// ---- 3. The table of steps ---------------------------------------------------------------

struct TableContext {
    std::size_t n = 0;
    double flops = 0, naive_gflops = 0;
    Peak peak;
};

void step_row(cachebook::ResultTable& table, Report& report, const StepResult& r, const TableContext& t) {
    const std::string k = "steps." + r.key + ".";
    if (r.seconds <= 0) {  // not run: --threads 1
        table.row({r.shown_label, "all", dash(), dash(), dash(), dash(), dash(), "-"});
        return;
    }
    const double gflops = t.flops / r.seconds / 1e9;
    const double peak = r.threads == 1 ? t.peak.core : t.peak.all;
    const std::string rows = r.rows_timed == t.n ? "all" : fmt::format("{}", r.rows_timed);
    table.row({r.shown_label,
               r.sampled ? Value::measured_as(k + "rows_timed", r.rows_timed, rows)
                         : Value::exact_as(k + "rows_timed", r.rows_timed, "all"),
               Value::measured_as(k + "seconds", round_to(r.seconds, 3), fmt::format("{:.3g}", r.seconds)),
               Value::measured(k + "gflops", round_to(gflops, 2), "{:.2f}"),
               Value::measured(k + "pct_peak", round_to(100 * gflops / peak, 1), "{:.1f}"),
               Value::measured(k + "speedup", round_to(gflops / t.naive_gflops, 1), "{:.0f}"),
               r.check.elements > 0 ? Value::measured(k + "worst_ratio", round_to(r.check.worst_ratio, 4), "{:.3f}")
                                    : Value::exact_as(k + "worst_ratio", 0, "-"),
               Value::exact_as(k + "matches", r.check.matches, r.check.matches ? "yes" : "NO")});
    const double roof = r.intensity > 0 ? std::min(peak, r.intensity * t.peak.bandwidth) : 0;
    report.record(k + "label", r.label);
    report.record(k + "threads", r.threads);
    report.record(k + "intensity", round_to(r.intensity, 3));
    report.record(k + "roof_gflops", round_to(roof, 2));
}

// Step 7's four rows (OpenBLAS and BLIS, one thread and all), "-" where not measured.
void library_rows(cachebook::ResultTable& table, Report& report, const Libraries& libs, int threads,
                  const TableContext& t) {
    const ch09::LibraryRun* best = libs.best();
    for (int lib = 0; lib < 2; ++lib)
        for (std::size_t slot = 0; slot < 2; ++slot) {
            const double sec = best ? (lib == 0 ? best->openblas : best->blis)[slot] : 0;
            const std::string kind = lib == 0 ? "OpenBLAS" : "BLIS";
            const std::string who = lib == 0 ? (best ? best->openblas_core : "") : (best ? best->blis_name : "");
            const std::string thr = slot == 0 ? "1 thread" : fmt::format("{} threads", threads);
            const std::string shown =
                "7 " + kind + ", " + (slot == 0 ? "1 thread" : "threads: " + measured("{}", threads_text(threads)));
            if (!(sec > 0)) {
                table.row({shown, "all", dash(), dash(), dash(), dash(), "-", dash()});
                continue;
            }
            const std::string k = "steps." + std::string(lib == 0 ? "blas" : "blis_lib") + (slot == 0 ? "1." : "T.");
            const double gflops = t.flops / sec / 1e9;
            const bool matches = lib == 0 ? best->openblas_matches : best->blis_matches;
            table.row({shown, "all", Value::measured_as(k + "seconds", round_to(sec, 3), fmt::format("{:.3g}", sec)),
                       Value::measured(k + "gflops", round_to(gflops, 2), "{:.2f}"),
                       Value::measured(k + "pct_peak",
                                       round_to(100 * gflops / (slot == 0 ? t.peak.core : t.peak.all), 1), "{:.1f}"),
                       Value::measured(k + "speedup", round_to(gflops / t.naive_gflops, 1), "{:.0f}"), "-",
                       Value::measured_as(k + "matches", matches, matches ? "yes" : "NO")});
            report.record(k + "label", fmt::format("7 {} ({}), {}", kind, who, thr));
            report.record(k + "threads", slot == 0 ? 1 : threads);
        }
}

std::string openblas_note(const Options& o, const Libraries& libs) {
    if (o.no_blas) return "OpenBLAS skipped (--no-blas)";
    if (!ch09::blas_available()) return "OpenBLAS skipped, this build has no OpenBLAS";
    if (!libs.best()) return "OpenBLAS skipped, its process failed";
    return "OpenBLAS at its fastest kernel here, " + libs.best()->openblas_core;
}

std::string blis_note(const Options& o, const Libraries& libs) {
    if (o.no_blas) return "BLIS skipped (--no-blas)";
    if (!ch09::blis_lib_available()) return "BLIS skipped, " + ch09::blis_lib_unavailable_reason();
    if (!libs.best()) return "BLIS skipped, its process failed";
    return libs.best()->blis_name;
}

void steps_section(Report& report, const Options& o, const std::vector<StepResult>& steps, const Libraries& libs,
                   const Peak& peak) {
    const double flops = 2.0 * double(o.n) * double(o.n) * double(o.n);
    report.section("C = A x B, N = {}, float, row-major: seconds (minimum of {} runs), GFLOPS = 2 N^3 / seconds",
                   Value::exact("n", o.n), Value::measured("", o.runs));
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
    report.line("  step 7: {}", Value::measured("", openblas_note(o, libs)));
    report.line("  step 7: {}", Value::measured("", blis_note(o, libs)));
}

// Steps 2 to 4 with tiles of several sizes: T = N is step 2's untiled i-k-j.
void tiling_study(Report& report, ch09::Problem& p, const Options& o, cachebook::Progress& progress) {
    std::vector<std::size_t> tiles = {p.shape.n};
    for (std::size_t t : {16, 32, 64, 128, 256})
        if (t < p.shape.n) tiles.push_back(t);
    const auto rows = ch09::time_tiles(p, o.isa, tiles, o.runs, 0.1e9 * o.scale(), 0.5e9 * o.scale(), progress);
    report.blank_line();
    report.line("  Tiling with one float per instruction and with {} (GFLOPS; T = N is step 2's i-k-j, untiled):",
                Value::measured("", std::string(o.isa == Isa::Scalar ? "the scalar fallback" : "eight")));
    auto table = report.table_of_rows("tiling.rows", {"T", "scalar (steps 2, 3)", "vector (step 4)"});
    double best[2] = {0, 0};
    std::size_t best_tile[2] = {0, 0};
    for (const auto& r : rows) {
        table.row({Value::exact_as("tile", r.tile,
                                   r.tile == p.shape.n ? fmt::format("N = {}", r.tile) : fmt::format("{}", r.tile)),
                   Value::measured("scalar", round_to(r.scalar_gflops, 2), "{:.2f}"),
                   Value::measured("simd", round_to(r.vector_gflops, 2), "{:.2f}")});
        if (r.tile == p.shape.n) continue;
        if (r.scalar_gflops > best[0]) best[0] = r.scalar_gflops, best_tile[0] = r.tile;
        if (r.vector_gflops > best[1]) best[1] = r.vector_gflops, best_tile[1] = r.tile;
    }
    table.print();
    auto gain = [](double x, double y) { return y > 0 ? round_to(x / y, 2) : 0.0; };
    report.line("  best tile over untiled: scalar {}x (T = {}), vector {}x (T = {})",
                Value::measured("tiling.scalar_gain", gain(best[0], rows.front().scalar_gflops), "{:.2f}"),
                Value::measured("tiling.scalar_best_tile", best_tile[0]),
                Value::measured("tiling.simd_gain", gain(best[1], rows.front().vector_gflops), "{:.2f}"),
                Value::measured("tiling.simd_best_tile", best_tile[1]));
}

// ---- 4. Step 6's blocks -------------------------------------------------------------------

// A cache as the two columns of section 4 show it: reported by the machine, measured by chapter 8.
void cache_row(cachebook::ResultTable& table, const Options& o, const MachineFacts& m, int level) {
    const auto& reported = m.caches[level - 1];
    const std::string key = fmt::format("caches_measured.l{}_bytes", level);
    const auto found = o.measured_caches ? o.measured_caches->bytes[level - 1] : std::nullopt;
    // Every key is recorded, null where nothing was measured, so the book's page builds either way.
    Value measured_cell = !o.measured_caches ? Value::unknown(key, "-")
                          : found            ? Value::measured_as(key, *found, cachebook::size_text(*found))
                                             : Value::unknown(key, "not found, reported used");
    table.row({level_name(level),
               reported ? Value::measured("", cachebook::size_text(reported->size_bytes))
                        : Value::measured("", std::string("unknown, a common size")),
               measured_cell});
}

void block_rows(cachebook::ResultTable& table, const Blocks& b) {
    const char* names[] = {"KC (sliver of B in L1)", "MC (block of A in L2)", "NC (panel of B in L3)"};
    const char* keys[] = {"kc", "mc", "nc"};
    for (int i = 0; i < 3; ++i) {
        auto pick = [&](const Blocking& x) { return i == 0 ? x.kc : i == 1 ? x.mc : x.nc; };
        table.row({names[i], Value::measured(fmt::format("blocking_rule.{}", keys[i]), pick(b.reported)),
                   b.measured ? Value::measured(fmt::format("blocking_rule_measured.{}", keys[i]), pick(*b.measured))
                              : Value::unknown(fmt::format("blocking_rule_measured.{}", keys[i]), "-")});
    }
}

void search_table(Report& report, const Blocks& b, double flops) {
    double rule_seconds = 0, best = HUGE_VAL;
    for (const auto& t : b.trials) {
        if (t.blocks.mc == b.rule.mc && t.blocks.kc == b.rule.kc) rule_seconds = t.seconds;
        best = std::min(best, t.seconds);
    }
    report.line("  search: step 6 on one thread at this N, GFLOPS (each candidate's fastest run)");
    auto table = report.table_of_rows("block_search", {"KC", "MC", "GFLOPS", "vs rule", "used"});
    for (const auto& t : b.trials) {
        const bool chosen = t.blocks.mc == b.used.mc && t.blocks.kc == b.used.kc;
        table.row({Value::measured("kc", t.blocks.kc), Value::measured("mc", t.blocks.mc),
                   Value::measured("gflops", round_to(flops / t.seconds / 1e9, 1), "{:.1f}"),
                   Value::measured("", fmt::format("{:+.1f}%", 100 * (rule_seconds / t.seconds - 1))),
                   Value::measured("", std::string(chosen ? "*" : ""))});
    }
    table.print();
    report.record("block_search_gain_pct", round_to(100 * (rule_seconds / best - 1), 1));
}

void blocks_section(Report& report, const Options& o, const MachineFacts& m, const Blocks& b) {
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

// ---- 5. The roofline ------------------------------------------------------------------------

void roofline_section(Report& report, const Options& o, const std::vector<StepResult>& steps, const Peak& peak) {
    const double flops = 2.0 * double(o.n) * double(o.n) * double(o.n);
    report.section("Roofline: FLOPs per byte of memory traffic (a model for matrices larger than the caches)");
    auto roof = report.table({"step", "FLOPs/byte", "roof GFLOPS", "measured", "% of roof"});
    for (const auto& r : steps) {
        if (r.intensity <= 0) continue;
        if (r.seconds <= 0) {  // not run: --threads 1
            roof.row({r.shown_label, Value::measured("", r.intensity, "{:.3g}"), dash(), dash(), dash()});
            continue;
        }
        const double gflops = flops / r.seconds / 1e9;
        const double bound = std::min(r.threads == 1 ? peak.core : peak.all, r.intensity * peak.bandwidth);
        roof.row({r.shown_label, Value::measured("", r.intensity, "{:.3g}"), Value::measured("", bound, "{:.1f}"),
                  Value::measured("", gflops, "{:.2f}"), Value::measured("", 100 * gflops / bound, "{:.0f}")});
    }
    roof.print();
    report.line("  roof = min(peak, FLOPs/byte x {} GB/s)", Value::measured("", peak.bandwidth, "{:.1f}"));
}

// ---- 6. Step 6 beside the libraries ----------------------------------------------------------

std::string cores_tried(const Libraries& libs, double flops) {
    auto g = [&](double sec) { return sec > 0 ? fmt::format("{:.1f}", flops / sec / 1e9) : std::string("-"); };
    std::string tried;
    for (const auto& c : libs.cores)
        if (!c.run.openblas_core.empty())
            tried += fmt::format("{}{} ({}, {})", tried.empty() ? "" : ", ", c.run.openblas_core, g(c.run.openblas[0]),
                                 g(c.run.openblas[1]));
    return tried.empty() ? "none" : tried;
}

void record_cores(Report& report, const Libraries& libs, double flops) {
    auto g = [&](double sec) { return sec > 0 ? nlohmann::json(round_to(flops / sec / 1e9, 1)) : nlohmann::json(); };
    nlohmann::json cores = nlohmann::json::array();
    for (const auto& c : libs.cores)
        if (!c.run.openblas_core.empty())
            cores.push_back({{"coretype", c.coretype},
                             {"core", c.run.openblas_core},
                             {"gflops1", g(c.run.openblas[0])},
                             {"gflopsT", g(c.run.openblas[1])}});
    report.record("blas.cores", cores);
    report.record("blas.available", ch09::blas_available());
}

double ratio(double sec_lib, double sec_6) {
    return sec_lib > 0 && sec_6 > 0 ? sec_lib / sec_6 : 0.0;
}

// One line of the comparison: step 6, OpenBLAS and BLIS on one thread (slot 0) or all (slot 1).
void versus_line(Report& report, const ch09::LibraryRun* best, std::size_t slot, double flops, int threads) {
    const std::string k = slot == 0 ? "versus.one_thread." : "versus.all_threads.";
    auto gf = [&](const std::string& key, double sec) {
        return figure_or_dash(k + key, sec > 0 ? flops / sec / 1e9 : 0);
    };
    const double s6 = best ? best->step6[slot] : 0, ob = best ? best->openblas[slot] : 0,
                 bl = best ? best->blis[slot] : 0;
    const std::string head = slot == 0 ? "1 thread: " : "threads " + measured("{}", threads_text(threads)) + ":";
    report.line("    {} step 6 {} GFLOPS, OpenBLAS {}, BLIS {}: step 6 = {} of OpenBLAS, {} of BLIS", head,
                gf("step6_gflops", s6), gf("openblas_gflops", ob), gf("blis_gflops", bl),
                percent_or_dash(k + "pct_openblas", ratio(ob, s6)), percent_or_dash(k + "pct_blis", ratio(bl, s6)));
}

// The speed-up from one thread to all, and the parallel share Amdahl's law reads from it.
void speedup_line(Report& report, const ch09::LibraryRun* best, int threads) {
    auto up = [&](const std::array<double, 2>& sec) { return threads > 1 ? ratio(sec[0], sec[1]) : 0.0; };
    const double s6 = best ? up(best->step6) : 0, ob = best ? up(best->openblas) : 0;
    auto share = [&](const std::string& key, double s) {
        return s > 0 ? Value::measured(key, round_to(ch09::parallel_share(s, threads), 3), "{:.2f}")
                     : Value::unknown(key, "-");
    };
    report.line("    speed-up, 1 to {} threads: step 6 {}x, OpenBLAS {}x (Amdahl: parallel shares {} and {})",
                Value::measured_as("speedup.threads", threads, threads_text(threads)),
                figure_or_dash("speedup.step6", s6, 2), figure_or_dash("speedup.openblas", ob, 2),
                share("speedup.step6_parallel_share", s6), share("speedup.openblas_parallel_share", ob));
}

void libraries_section(Report& report, const Options& o, const Libraries& libs, const Peak& peak) {
    const double flops = 2.0 * double(o.n) * double(o.n) * double(o.n);
    const ch09::LibraryRun* best = libs.best();
    report.section("Step 6 beside the libraries (each OpenBLAS kernel in its own process)");
    report.line("  OpenBLAS kernels tried, GFLOPS on 1 and {} threads: {}",
                Value::measured("", threads_text(o.threads)), Value::measured("", cores_tried(libs, flops)));
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
    report.line("    1 thread, the same kernel without the prefetch of C: {} GFLOPS, {} of OpenBLAS",
                figure_or_dash("versus.one_thread.plain_gflops", plain > 0 ? flops / plain / 1e9 : 0),
                percent_or_dash("versus.one_thread.plain_pct_openblas", ratio(best ? best->openblas[0] : 0, plain)));
    speedup_line(report, best, o.threads);
}

// ---- The optional sweeps: the challenges at the end of the course notes --------------------------

void tile_sweep(Report& report, ch09::Problem& p, const Options& o, cachebook::Progress& progress) {
    std::vector<std::size_t> tiles;
    for (std::size_t t : {8, 16, 32, 64, 128, 256})
        if (t <= p.shape.n) tiles.push_back(t);
    const auto rows = ch09::time_tiles(p, o.isa, tiles, o.runs, 0.6e9 * o.scale(), 3e9 * o.scale(), progress);
    report.blank_line();
    report.line("Tile sweep (steps 3 and 4, GFLOPS)");
    auto table = report.table_of_rows("tile_sweep", {"T", "3 tiled", "4 tiled + SIMD"});
    for (const auto& r : rows)
        table.row({Value::exact("tile", r.tile), Value::measured("tiled", round_to(r.scalar_gflops, 2), "{:.2f}"),
                   Value::measured("simd", round_to(r.vector_gflops, 2), "{:.2f}")});
    table.print();
}

void thread_sweep(Report& report, ch09::Problem& p, const Options& o, const MachineFacts& m, Blocking blocks,
                  cachebook::Progress& progress) {
    const float *a = p.a.get(), *b = p.b.get();
    float* c = p.c.get();
    report.blank_line();
    report.line("Thread sweep (steps 5 and 6, GFLOPS)");
    auto table = report.table_of_rows("thread_sweep", {"threads", "5 threaded", "6 packed"});
    for (int th = 1; th <= o.threads; ++th) {
        progress.step(fmt::format("{} threads", th));
        const double t5 =
            cachebook::time_runs(o.runs, [&] { ch09::matmul_threaded(a, b, c, p.shape, m.tile, o.isa, th); }).min();
        const double t6 =
            cachebook::time_runs(o.runs, [&] { ch09::matmul_blis(a, b, c, p.shape, o.kernel, blocks, th); }).min();
        table.row({Value::exact("threads", th),
                   Value::measured("threaded", round_to(p.shape.flops() / t5 / 1e9, 2), "{:.1f}"),
                   Value::measured("blis", round_to(p.shape.flops() / t6 / 1e9, 2), "{:.1f}")});
    }
    table.print();
}

void kernel_sweep(Report& report, ch09::Problem& p, const ch09::Reference& ref, const Options& o, const Peak& peak,
                  cachebook::Progress& progress) {
    report.blank_line();
    report.line("Micro-kernel sweep (step 6 on 1 thread; blocks derived for each kernel)");
    auto table = report.table_of_rows("kernel_sweep", {"kernel", "MC", "KC", "NC", "GFLOPS", "% peak"});
    for (Isa i : ch09::kAllIsas) {
        if (!ch09::isa_supported(i)) continue;
        for (const auto& k : ch09::micro_kernels(i)) {
            progress.step(k.name);
            const auto bk = ch09::machine_blocking(k);
            const double sec = cachebook::time_runs(o.runs, [&] {
                                   ch09::matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, k, bk, 1);
                               }).min();
            const double g = p.shape.flops() / sec / 1e9;
            const bool ok = ref.check(p, true).matches;
            table.row({Value::exact_as("kernel", k.name, k.name + (ok ? "" : " (WRONG)")), Value::measured("", bk.mc),
                       Value::measured("", bk.kc), Value::measured("", bk.nc),
                       Value::measured("gflops", round_to(g, 2), "{:.1f}"),
                       Value::measured("", 100 * g / peak.core, "{:.0f}")},
                      {{"matches", ok}});
        }
    }
    table.print();
}

// ---- The program ---------------------------------------------------------------------------

int run_child_mode(const Options& o, const MachineFacts& m) {
    if (!ch09::blas_available() && !ch09::blis_lib_available())
        throw cachebook::UsageError("--blas-child: this program has neither OpenBLAS nor BLIS");
    const Blocking rule =
        ch09::derive_blocking(m.cache_bytes()[0], m.cache_bytes()[1], m.cache_bytes()[2], o.kernel.mr, o.kernel.nr);
    fmt::print("{}\n",
               ch09::to_json(ch09::time_beside_libraries(o.n, o.threads, o.runs, o.kernel, o.with_given(rule))).dump());
    return 0;
}

int run(const Options& o, const std::string& json_path) {
    Report report("Chapter 9 · The matrix multiply project");
    report.record("quick", o.quick);
    cachebook::Progress progress("ch09_matmul", 26);
    const MachineFacts m = machine_section(report, o, progress);
    const Peak peak = peak_section(report, o, m, progress);
    ch09::Problem p({o.n, o.n, o.n});
    progress.step("reference");
    const ch09::Reference ref(p);
    const Blocks blocks = choose_blocks(p, o, m, progress);
    const Libraries libs = run_libraries(o, m, blocks.used, progress);
    StepRunner runner{p, ref, o, progress, {}};
    const auto steps = run_steps(runner, m, blocks.used, libs, report);
    steps_section(report, o, steps, libs, peak);
    tiling_study(report, p, o, progress);
    report.record("tile", m.tile);
    blocks_section(report, o, m, blocks);
    roofline_section(report, o, steps, peak);
    libraries_section(report, o, libs, peak);
    if (o.sweep_tiles) tile_sweep(report, p, o, progress);
    if (o.sweep_threads) thread_sweep(report, p, o, m, blocks.used, progress);
    if (o.sweep_kernels) kernel_sweep(report, p, ref, o, peak, progress);
    report.save(json_path);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch09_matmul", [&] {
        cachebook::Cli cli("ch09_matmul",
                           "Chapter 9: one matrix multiply, from the definition to within reach of BLAS");
        Options options;
        if (auto status = parse(cli, options, argc, argv)) return *status;
        if (options.child) {
            MachineFacts m;
            for (int i = 0; i < 3; ++i) m.caches[i] = cachebook::machine().data_cache(i + 1);
            return run_child_mode(options, m);
        }
        return run(options, cli.json_path());
    });
}
