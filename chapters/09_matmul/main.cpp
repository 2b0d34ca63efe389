// ch09_matmul: prints what chapter 9 shows. Logic lives in matmul*.cpp; this file measures and prints.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "matmul.hpp"

namespace {

using cachebook::measured;
using ch09::Isa;
using ch09::RowRange;
using ch09::Shape;

double round_to(double x, int digits) {
    const double f = std::pow(10.0, digits);
    return std::round(x * f) / f;
}

/// The three matrices of one problem, filled and first-touched before any timing.
struct Problem {
    Shape shape;
    ch09::Buffer a, b, c;
    explicit Problem(Shape s)
        : shape(s),
          a(ch09::make_buffer(s.m * s.k)),
          b(ch09::make_buffer(s.k * s.n)),
          c(ch09::make_buffer(s.m * s.n)) {
        ch09::fill_random(a.get(), s.m * s.k, 1);
        ch09::fill_random(b.get(), s.k * s.n, 2);
        std::fill(c.get(), c.get() + s.m * s.n, 0.0f);
    }
};

/// The rows every result is checked on: the first and the last (up to) 16 rows.
struct Reference {
    RowRange head, tail;
    std::vector<double> head_ref, head_abs, tail_ref, tail_abs;
    Reference(const Problem& p) {
        const std::size_t m = p.shape.m, rows = std::min<std::size_t>(m, 16);
        head = {0, rows};
        tail = {m - rows, m};
        head_ref = ch09::reference_rows(p.a.get(), p.b.get(), p.shape, head);
        head_abs = ch09::abs_product_rows(p.a.get(), p.b.get(), p.shape, head);
        tail_ref = ch09::reference_rows(p.a.get(), p.b.get(), p.shape, tail);
        tail_abs = ch09::abs_product_rows(p.a.get(), p.b.get(), p.shape, tail);
    }
    /// Checks the head rows, and the tail rows too when the step computed all of C.
    ch09::Check check(const Problem& p, bool all_rows) const {
        auto h = ch09::check_rows(p.c.get(), p.shape, head, head_ref, head_abs);
        if (!all_rows) return h;
        const auto t = ch09::check_rows(p.c.get(), p.shape, tail, tail_ref, tail_abs);
        return {h.matches && t.matches, std::max(h.worst_ratio, t.worst_ratio), h.elements + t.elements};
    }
};

/// One row of the table of steps.
struct StepResult {
    std::string key, label;
    double seconds = 0;           // for the whole product (extrapolated from the rows timed)
    std::size_t rows_timed = 0;   // rows of C computed per timed run
    int threads = 1;
    ch09::Check check;
    double intensity = 0;         // FLOPs per byte, by the model; 0: no model
    bool sampled = false;         // rows_timed chosen by sample_rows: it depends on the tile, so on the L1
};

/// Times `run(rows)` on rows [0, rows_timed) of C, minimum of `runs`; returns seconds for all of C.
double time_rows(const Problem& p, std::size_t rows_timed, int runs, int warmup,
                 const std::function<void(RowRange)>& run) {
    const auto t = cachebook::time_runs(runs, [&] { run({0, rows_timed}); }, warmup);
    cachebook::do_not_optimize(p.c[0]);
    return t.min() * double(p.shape.m) / double(rows_timed);
}

/// Rows to time so that one run does about `flops` FLOPs: at least 16, whole tiles, at most all.
std::size_t sample_rows(Shape s, double flops, std::size_t multiple) {
    const double per_row = 2.0 * double(s.n) * double(s.k);
    auto rows = static_cast<std::size_t>(std::max(16.0, flops / std::max(per_row, 1.0)));
    rows = (rows + multiple - 1) / multiple * multiple;
    return std::min(rows, s.m);
}

struct BlasSide {
    std::string core;
    double blis1 = 0, blas1 = 0, blisT = 0, blasT = 0;  // seconds, minimum of the runs
    double blis1_plain = 0;  // step 6's kernel without the prefetch of C, 1 thread (0: no such twin)
    bool matches = false;
};

nlohmann::json to_json(const BlasSide& s) {
    return {{"core", s.core},   {"blis1", s.blis1}, {"blas1", s.blas1},     {"blisT", s.blisT},
            {"blasT", s.blasT}, {"blis1_plain", s.blis1_plain}, {"matches", s.matches}};
}

void pause_for_idle_blas_threads() {
    // OpenBLAS's worker threads keep spinning for a while after a call; give them time to
    // sleep so they do not take cycles from the next measurement.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

/// Step 6 and cblas_sgemm side by side in one process, runs interleaved: 1 thread, then `threads`.
BlasSide side_by_side(std::size_t n, int threads, int runs, const ch09::MicroKernel& kernel) {
    Problem p({n, n, n});
    const Reference ref(p);
    const auto blocks = ch09::machine_blocking(kernel);
    BlasSide out;
    out.core = ch09::blas_corename();
    auto time_once = [&](auto&& f) {
        const auto start = cachebook::Clock::now();
        f();
        return cachebook::seconds_since(start);
    };
    auto blis = [&](int t) { ch09::matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, blocks, t); };
    auto blas = [&](int t) { ch09::matmul_blas(p.a.get(), p.b.get(), p.c.get(), p.shape, t); };
    const auto plain = ch09::without_c_prefetch(kernel);
    auto blis_plain = [&] { ch09::matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, *plain, blocks, 1); };
    blas(1);
    out.matches = ref.check(p, true).matches;
    for (int t : {1, threads}) {
        double best_blis = HUGE_VAL, best_blas = HUGE_VAL;
        blis(t);  // warm-up
        for (int r = 0; r < runs; ++r) {  // the same pause before each, so neither starts from a busier core
            pause_for_idle_blas_threads();
            best_blis = std::min(best_blis, time_once([&] { blis(t); }));
            pause_for_idle_blas_threads();
            best_blas = std::min(best_blas, time_once([&] { blas(t); }));
            if (t == 1 && plain) {
                pause_for_idle_blas_threads();
                const double sec = time_once(blis_plain);
                out.blis1_plain = out.blis1_plain > 0 ? std::min(out.blis1_plain, sec) : sec;
            }
        }
        (t == 1 ? out.blis1 : out.blisT) = best_blis;
        (t == 1 ? out.blas1 : out.blasT) = best_blas;
    }
    pause_for_idle_blas_threads();
    return out;
}

std::string self_path() {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string{} : p.string();
}

/// Runs this program again with OPENBLAS_CORETYPE=`core` (empty: the environment as it is),
/// so that OpenBLAS picks its kernel at load time; returns what the child measured.
std::optional<BlasSide> blas_child(const std::string& core, std::size_t n, int threads, int runs,
                                   const std::string& kernel) {
    const std::string self = self_path();
    if (self.empty()) return std::nullopt;
    std::string cmd;
    if (!core.empty()) cmd += "OPENBLAS_CORETYPE=" + core + " ";
    cmd += fmt::format("'{}' --blas-child --n {} --threads {} --runs {} --kernel '{}' 2>/dev/null", self, n, threads,
                       runs, kernel);
    std::FILE* pipe = ::popen(cmd.c_str(), "r");
    if (pipe == nullptr) return std::nullopt;
    std::string text;
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) text += buf.data();
    if (::pclose(pipe) != 0) return std::nullopt;
    try {
        const auto j = nlohmann::json::parse(text);
        return BlasSide{j.at("core"),  j.at("blis1"),       j.at("blas1"),  j.at("blisT"),
                        j.at("blasT"), j.at("blis1_plain"), j.at("matches")};
    } catch (...) {
        return std::nullopt;
    }
}

Isa parse_isa(const std::string& name) {
    if (name.empty()) return ch09::best_isa();
    for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
        if (ch09::isa_name(isa) == name) {
            if (!ch09::isa_supported(isa))
                throw cachebook::UsageError(fmt::format("--isa {}: {}", name, ch09::isa_unavailable_reason(isa)));
            return isa;
        }
    throw cachebook::UsageError(fmt::format("--isa: expected scalar, avx2 or avx512, got '{}'", name));
}

ch09::MicroKernel parse_kernel(const std::string& name, Isa isa) {
    if (name.empty()) return ch09::default_micro_kernel(isa);
    for (Isa i : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
        for (const auto& k : ch09::micro_kernels(i))
            if (k.name == name) {
                if (!ch09::isa_supported(i))
                    throw cachebook::UsageError(fmt::format("--kernel '{}': this CPU cannot run it", name));
                return k;
            }
    std::string known;
    for (Isa i : {Isa::Scalar, Isa::Avx2, Isa::Avx512})
        for (const auto& k : ch09::micro_kernels(i))
            if (ch09::isa_supported(i)) known += (known.empty() ? "" : ", ") + k.name;
    throw cachebook::UsageError(fmt::format("--kernel: expected one of {}; got '{}'", known, name));
}

std::string kib(std::size_t bytes) { return fmt::format("{} KiB", bytes / 1024); }

std::string size_or_unknown(const std::optional<cachebook::CacheInfo>& c) { return c ? kib(c->size_bytes) : "unknown"; }

// "L1d hwloc, L2 hwloc, L3 hwloc", and why any level is unknown.
std::string cache_sources(const cachebook::Machine& machine) {
    std::string s, missing;
    for (int level = 1; level <= 3; ++level) {
        const auto c = machine.data_cache(level);
        const std::string name = level == 1 ? "L1d" : fmt::format("L{}", level);
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", name,
                         cachebook::source_name(c ? c->source : cachebook::Source::unknown));
        if (!c) missing += (missing.empty() ? "" : ", ") + name;
    }
    return missing.empty() ? s : s + "; " + machine.why_unknown(missing);
}

// The cache sizes step 6's blocks were derived from: the machine's, or the common size in place
// of one it does not report (derive_blocking's 32 KiB, 256 KiB, 8 MiB).
std::string blocking_caches(const cachebook::Machine& machine) {
    const char* assumed[] = {"32 KiB", "256 KiB", "8192 KiB"};
    std::string s;
    for (int level = 1; level <= 3; ++level) {
        const auto c = machine.data_cache(level);
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", level == 1 ? "L1d" : fmt::format("L{}", level),
                         c ? kib(c->size_bytes) : fmt::format("{} (unknown here: a common size)", assumed[level - 1]));
    }
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch09_matmul", [&] {
        cachebook::Cli cli("ch09_matmul", "Chapter 9: one matrix multiply, from the definition to within reach of BLAS");
        const int cpus = cachebook::usable_cpus();
        std::int64_t n_opt = 2048, threads_opt = cpus, tile_opt = 32, runs_opt = 3;
        std::string isa_opt, kernel_opt;
        bool sweep_tiles = false, sweep_threads = false, sweep_kernels = false, child = false, no_blas = false;
        auto* n_flag = cli.add_int("--n", n_opt, "Order N of the N x N matrices (--quick: 512)", 1, 8192);
        cli.add_int("--threads", threads_opt, "Threads for steps 5 to 7 (default: every usable CPU)", 1, 256);
        auto* tile_flag = cli.add_int("--tile", tile_opt, "Tile of steps 3 to 5 (default: from the L1 size)", 1, 4096);
        auto* runs_flag = cli.add_int("--runs", runs_opt, "Timed runs per measurement; the minimum is reported (--quick: 2)", 1, 100);
        cli.add_string("--isa", isa_opt, "Kernels to use: scalar, avx2 or avx512 (default: the widest this CPU has)");
        cli.add_string("--kernel", kernel_opt, "Micro-kernel of step 6, e.g. 'avx2 6x16' (default: the isa's first)");
        cli.app().add_flag("--sweep-tiles", sweep_tiles, "Also time steps 3 and 4 for tiles 8 to 256");
        cli.app().add_flag("--sweep-threads", sweep_threads, "Also time steps 5 and 6 for 1 to --threads threads");
        cli.app().add_flag("--sweep-kernels", sweep_kernels, "Also time step 6 with every micro-kernel (register block)");
        cli.app().add_flag("--no-blas", no_blas, "Skip step 7 (OpenBLAS)");
        cli.app().add_flag("--blas-child", child, "Internal: time step 6 and OpenBLAS side by side, print one JSON line");
        if (auto status = cli.parse(argc, argv)) return *status;

        const bool quick = cli.quick();
        const auto n = static_cast<std::size_t>(quick && n_flag->count() == 0 ? 512 : n_opt);
        const int threads = static_cast<int>(threads_opt);
        const int runs = static_cast<int>(quick && runs_flag->count() == 0 ? 2 : runs_opt);
        const Isa isa = parse_isa(isa_opt);
        const ch09::MicroKernel kernel = parse_kernel(kernel_opt, isa);
        cachebook::require_memory(3 * n * n * sizeof(float) * 2, fmt::format("--n {}", n));

        if (child) {
            if (!ch09::blas_available()) throw cachebook::UsageError("--blas-child: this build has no OpenBLAS");
            fmt::print("{}\n", to_json(side_by_side(n, threads, runs, kernel)).dump());
            return 0;
        }

        nlohmann::json out;
        out["n"] = n;
        out["quick"] = quick;
        const auto& machine = cachebook::machine();
        const auto l1 = machine.data_cache(1), l2 = machine.data_cache(2), l3 = machine.data_cache(3);
        const auto reported_line = machine.line_bytes();
        const std::size_t line = reported_line.value_or(64);  // the models below assume 64 when unknown
        const std::size_t tile = tile_flag->count() ? static_cast<std::size_t>(tile_opt)
                                                    : std::min(n, ch09::tile_from_l1(l1 ? l1->size_bytes : 32768));
        if (tile > n) throw cachebook::UsageError(fmt::format("--tile {} is larger than --n {}", tile, n));
        const auto features = cachebook::cpu_features();
        const bool blas = ch09::blas_available() && !no_blas;
        cachebook::Progress progress("ch09_matmul", 16);

        // 1. The machine.
        fmt::print("Chapter 9 · The matrix multiply project\n\n");
        fmt::print("1. The machine\n");
        fmt::print("  CPU: {}\n", measured("{}", machine.cpu_model.empty()
                                                      ? "unknown"
                                                      : fmt::format("{} (from {})", machine.cpu_model,
                                                                    cachebook::source_name(machine.cpu_model_source))));
        fmt::print("  usable cores: {}; threads for steps 5 to 7: {}\n", measured("{}", cpus), measured("{}", threads));
        fmt::print("  caches: L1d {}, L2 {}, L3 {}; line size {}\n", measured("{}", size_or_unknown(l1)),
                   measured("{}", size_or_unknown(l2)), measured("{}", size_or_unknown(l3)),
                   measured("{}", reported_line ? fmt::format("{} bytes", *reported_line) : "unknown"));
        fmt::print("  where they come from: {}\n", measured("{}", cache_sources(machine)));
        fmt::print("  instruction sets: AVX2 {}, FMA {}, AVX-512 {}\n", measured("{}", features.avx2 ? "yes" : "no"),
                   measured("{}", features.fma ? "yes" : "no"), measured("{}", features.avx512f ? "yes" : "no"));
        // The scalar fallback says why: the CPU lacks the instructions, or the build left the kernels out.
        const std::string steps45 = isa != Isa::Scalar ? "avx2 + fma"
                                    : ch09::isa_supported(Isa::Avx2)
                                        ? "scalar, as --isa asks"
                                        : "scalar fallback, " + ch09::isa_unavailable_reason(Isa::Avx2);
        fmt::print("  kernels that run here: {} (step 4 and 5: {}; step 6: {})\n", measured("{}", ch09::isa_name(isa)),
                   measured("{}", steps45), measured("{}", kernel.name));
        progress.step("clock");
        const double ghz_nominal = ch09::nominal_clock_ghz();
        const double ghz = ch09::measure_clock_ghz(quick ? 0.05 : 0.2);
        fmt::print("  clock: {} GHz measured (dependent adds, one per cycle); {} nominal (/proc/cpuinfo)\n\n",
                   measured("{:.2f}", ghz),
                   measured("{}", ghz_nominal > 0 ? fmt::format("{:.2f} GHz", ghz_nominal) : std::string("unknown")));
        auto kib_json = [](const std::optional<cachebook::CacheInfo>& c) {
            return c ? nlohmann::json(c->size_bytes / 1024) : nlohmann::json();
        };
        out["machine"] = {{"cpu", machine.cpu_model.empty() ? nlohmann::json() : nlohmann::json(machine.cpu_model)},
                          {"cpu_source", cachebook::source_name(machine.cpu_model_source)},
                          {"cores", cpus},
                          {"threads", threads},
                          {"l1_kib", kib_json(l1)},
                          {"l2_kib", kib_json(l2)},
                          {"l3_kib", kib_json(l3)},
                          {"line_bytes", reported_line ? nlohmann::json(*reported_line) : nlohmann::json()},
                          {"line_bytes_used", line},
                          {"cache_sources", cache_sources(machine)},
                          {"avx2", features.avx2},
                          {"fma", features.fma},
                          {"avx512", features.avx512f},
                          {"isa", ch09::isa_name(isa)},
                          {"ghz_measured", round_to(ghz, 2)},
                          {"ghz_nominal", ghz_nominal > 0 ? nlohmann::json(round_to(ghz_nominal, 2)) : nlohmann::json()}};

        // 2. The peak and the roofline's two ceilings.
        progress.step("peak");
        const int width = ch09::simd_width(isa);
        constexpr int kFmaPorts = 2;  // two FMA units per core: Intel since Haswell, AMD since Zen 2
        const double formula_core = ch09::formula_peak_gflops(1, ghz, width, kFmaPorts);
        const double formula_all = ch09::formula_peak_gflops(cpus, ghz, width, kFmaPorts);
        const double fma_seconds = quick ? 0.15 : 0.4;
        const double peak_core = ch09::measure_fma_gflops(isa, 1, fma_seconds);
        const double peak_all = ch09::measure_fma_gflops(isa, threads, fma_seconds);
        const double ports_seen = peak_core / (ghz * 2.0 * width);
        progress.step("bandwidth");
        const std::size_t l3_bytes = l3 ? l3->size_bytes : 8u << 20;
        const std::size_t triad_floats =
            quick ? (8u << 20) : std::clamp<std::size_t>(2 * l3_bytes / sizeof(float), 16u << 20, 64u << 20);
        const double bandwidth = ch09::measure_triad_gbs(triad_floats, threads, quick ? 3 : 5);
        const double ridge = peak_all / bandwidth;
        fmt::print("2. Peak: cores x GHz x FLOPs per cycle\n");
        fmt::print("  FLOPs per cycle and core = 2 (an FMA is a multiply and an add) x {} floats x {} FMA units = {}\n",
                   measured("{}", width), kFmaPorts, measured("{}", 2 * width * kFmaPorts));
        fmt::print("  formula: {} cores x {} GHz x {} = {} GFLOPS ({} on one core)\n", measured("{}", cpus),
                   measured("{:.2f}", ghz), measured("{}", 2 * width * kFmaPorts), measured("{:.1f}", formula_all),
                   measured("{:.1f}", formula_core));
        fmt::print("  measured, 12 independent FMA chains: {} GFLOPS on one core, {} on {} threads\n",
                   measured("{:.1f}", peak_core), measured("{:.1f}", peak_all), measured("{}", threads));
        fmt::print("  so one core retires {} FMA instructions per cycle\n", measured("{:.2f}", ports_seen));
        fmt::print("  memory bandwidth, triad over 3 arrays of {} MiB on {} threads: {} GB/s\n",
                   measured("{}", triad_floats * sizeof(float) >> 20), measured("{}", threads),
                   measured("{:.1f}", bandwidth));
        fmt::print("  ridge point: {} FLOPs per byte (below it memory limits a loop, above it arithmetic)\n\n",
                   measured("{:.1f}", ridge));
        out["peak"] = {{"width", width},
                       {"fma_ports", kFmaPorts},
                       {"flops_per_cycle", 2 * width * kFmaPorts},
                       {"formula_core", round_to(formula_core, 1)},
                       {"formula_all", round_to(formula_all, 1)},
                       {"measured_core", round_to(peak_core, 1)},
                       {"measured_all", round_to(peak_all, 1)},
                       {"fma_per_cycle", round_to(ports_seen, 2)},
                       {"bandwidth_gbs", round_to(bandwidth, 1)},
                       {"triad_mib", triad_floats * sizeof(float) >> 20},
                       {"ridge", round_to(ridge, 1)}};

        // 3. The steps.
        Problem p({n, n, n});
        const Shape s = p.shape;
        progress.step("reference");
        const Reference ref(p);
        const auto blocks = ch09::machine_blocking(kernel);
        std::vector<StepResult> steps;
        const float *a = p.a.get(), *b = p.b.get();
        float* c = p.c.get();

        // C is cleared before each step, so that no step is checked on rows another step wrote.
        auto clear_c = [&] { std::fill(c, c + s.m * s.n, 0.0f); };
        auto sampled = [&](std::string key, std::string label, double flops, std::size_t multiple, int warmup,
                           const std::function<void(RowRange)>& run, double intensity) {
            progress.step(key);
            clear_c();
            const std::size_t rows = sample_rows(s, flops, multiple);
            StepResult r{std::move(key), std::move(label), time_rows(p, rows, runs, warmup, run), rows, 1, {}, intensity};
            r.check = ref.check(p, rows == s.m);
            r.sampled = true;
            steps.push_back(r);
        };
        auto whole = [&](std::string key, std::string label, int t, const std::function<void()>& run, double intensity) {
            progress.step(key);
            clear_c();
            const auto timing = cachebook::time_runs(runs, run, 1);
            StepResult r{std::move(key), std::move(label), timing.min(), s.m, t, ref.check(p, true), intensity};
            steps.push_back(r);
        };
        const double scale = quick ? 0.25 : 1.0;
        sampled("naive", "1 naive i-j-k", 0.05e9 * scale, 1, 0, [&](RowRange r) { ch09::matmul_naive(a, b, c, s, r); },
                ch09::intensity_naive(line));
        {
            ch09::Buffer bt = ch09::make_buffer(n * n);
            const double t_transpose =
                cachebook::time_runs(runs, [&] { ch09::transpose(b, bt.get(), n, n); }, 1).min();
            sampled("naive_bt", "1t naive, B transposed first", 0.1e9 * scale, 1, 0,
                    [&](RowRange r) { ch09::matmul_naive_bt(a, bt.get(), c, s, r); }, ch09::intensity_ikj());
            steps.back().seconds += t_transpose;
            out["transpose_seconds"] = t_transpose;
        }
        sampled("ikj", "2 i-k-j", 0.1e9 * scale, 1, 0, [&](RowRange r) { ch09::matmul_ikj(a, b, c, s, r); },
                ch09::intensity_ikj());
        sampled("tiled", "3 tiled, T = " + measured("{}", tile), 0.2e9 * scale, tile, 0,
                [&](RowRange r) { ch09::matmul_tiled(a, b, c, s, r, tile); }, ch09::intensity_tiled(tile));
        sampled("simd", "4 tiled + " + measured("{}", isa == Isa::Scalar ? "scalar fallback" : "AVX2 FMA"),
                1e9 * scale, tile, 1, [&](RowRange r) { ch09::matmul_tiled_simd(a, b, c, s, r, tile, isa); },
                ch09::intensity_tiled(tile));
        whole("threaded", "5 step 4, threads: " + measured("{}", threads), threads,
              [&] { ch09::matmul_threaded(a, b, c, s, tile, isa, threads); }, ch09::intensity_tiled(tile));
        const double ai_blis = ch09::intensity_blis(s, blocks);
        whole("blis1", "6 packed + micro-kernel, 1 thread", 1,
              [&] { ch09::matmul_blis(a, b, c, s, kernel, blocks, 1); }, ai_blis);
        whole("blisT", "6 packed + micro-kernel, threads: " + measured("{}", threads), threads,
              [&] { ch09::matmul_blis(a, b, c, s, kernel, blocks, threads); }, ai_blis);

        // Step 7 runs in child processes: OpenBLAS reads OPENBLAS_CORETYPE only when it loads.
        std::vector<std::pair<std::string, BlasSide>> cores;
        std::string default_core;
        if (blas) {
            default_core = ch09::blas_corename();
            std::vector<std::string> candidates = {""};
            if (features.avx2 && features.fma) candidates.push_back("Haswell");
            if (features.avx512f) candidates.push_back("SkylakeX");
            const int blas_runs = std::max(runs, quick ? 2 : 4);
            for (const auto& name : candidates) {
                if (!name.empty() && name == default_core) continue;
                progress.step("OpenBLAS " + (name.empty() ? default_core : name));
                if (auto side = blas_child(name, n, threads, blas_runs, kernel.name)) cores.emplace_back(name, *side);
            }
        }
        fmt::print("3. C = A x B, N = {}, float, row-major: seconds (minimum of {} runs), GFLOPS = 2 N^3 / seconds\n", n,
                   measured("{}", runs));
        fmt::print("  % of peak: of the measured FMA peak for the threads used; 'matches': every checked element\n");
        fmt::print("  within gamma_N x (|A||B|)ij of a double-precision reference, gamma_N = N u / (1 - N u), u = 2^-24\n");
        fmt::print("  (the worst case of float rounding for any order of summation; 'err/bound' is the largest\n");
        fmt::print("  error found as a fraction of it). Slow steps time only some rows of C and scale up.\n");
        cachebook::Table table({"step", "rows timed", "seconds", "GFLOPS", "% peak", "x naive", "err/bound", "matches"});
        const double naive_gflops = s.flops() / steps.front().seconds / 1e9;
        nlohmann::json jsteps;
        for (const auto& r : steps) {
            const double gflops = s.flops() / r.seconds / 1e9;
            const double peak = r.threads == 1 ? peak_core : peak_all;
            const bool have_err = r.check.elements > 0;
            const std::string rows = r.rows_timed == s.m ? "all" : fmt::format("{}", r.rows_timed);
            table.row({r.label, r.sampled ? measured("{}", rows) : rows,
                       measured("{:.3g}", r.seconds), measured("{:.2f}", gflops), measured("{:.1f}", 100 * gflops / peak),
                       measured("{:.0f}", gflops / naive_gflops), have_err ? measured("{:.3f}", r.check.worst_ratio) : "-",
                       r.check.matches ? "yes" : "NO"});
            const double bound = r.intensity > 0 ? std::min(peak, r.intensity * bandwidth) : 0;
            jsteps[r.key] = {{"label", r.label},
                             {"seconds", round_to(r.seconds, 3)},
                             {"rows_timed", r.rows_timed},
                             {"threads", r.threads},
                             {"gflops", round_to(gflops, 2)},
                             {"pct_peak", round_to(100 * gflops / peak, 1)},
                             {"speedup", round_to(gflops / naive_gflops, 1)},
                             {"matches", r.check.matches},
                             {"worst_ratio", round_to(r.check.worst_ratio, 4)},
                             {"intensity", round_to(r.intensity, 3)},
                             {"roof_gflops", round_to(bound, 2)}};
        }
        // Step 7 always has its two rows, so the output has one shape with or without OpenBLAS.
        const BlasSide* by_default = cores.empty() ? nullptr : &cores.front().second;
        for (const bool one : {true, false}) {  // by row, not by thread count: with one CPU both are 1
            const int t = one ? 1 : threads;
            const double sec = by_default ? (one ? by_default->blas1 : by_default->blasT) : 0;
            const double gflops = sec > 0 ? s.flops() / sec / 1e9 : 0;
            const double peak = one ? peak_core : peak_all;
            auto cell = [&](const std::string& text) { return measured("{}", sec > 0 ? text : std::string("-")); };
            table.row({one ? "7 OpenBLAS, 1 thread" : "7 OpenBLAS, threads: " + measured("{}", threads), "all",
                       cell(fmt::format("{:.3g}", sec)), cell(fmt::format("{:.2f}", gflops)),
                       cell(fmt::format("{:.1f}", 100 * gflops / peak)), cell(fmt::format("{:.0f}", gflops / naive_gflops)),
                       "-", cell(by_default && by_default->matches ? "yes" : "NO")});
            if (sec > 0)
                jsteps[one ? "blas1" : "blasT"] = {{"label", "7 OpenBLAS " + by_default->core},
                                                      {"seconds", round_to(sec, 3)},
                                                      {"threads", t},
                                                      {"gflops", round_to(gflops, 2)},
                                                      {"pct_peak", round_to(100 * gflops / peak, 1)},
                                                      {"speedup", round_to(gflops / naive_gflops, 1)},
                                                      {"matches", by_default->matches}};
        }
        fmt::print("{}", table.render());
        fmt::print("  step 7: {}\n\n", measured("{}", !ch09::blas_available() ? "skipped, this build has no OpenBLAS"
                                                    : no_blas                    ? "skipped (--no-blas)"
                                                    : cores.empty()              ? "skipped, its process failed"
                                                                                 : "OpenBLAS's default kernel, " + cores.front().second.core));
        out["steps"] = jsteps;
        out["tile"] = tile;
        out["blocking"] = {{"kernel", kernel.name}, {"mr", kernel.mr}, {"nr", kernel.nr}, {"mc", blocks.mc},
                           {"kc", blocks.kc},       {"nc", blocks.nc}};

        // 4. Where the blocks of step 6 come from.
        fmt::print("4. Step 6's blocks, from this machine's caches\n");
        fmt::print("  micro-kernel {}: a block of {} x {} elements of C stays in registers\n", measured("{}", kernel.name),
                   measured("{}", kernel.mr), measured("{}", kernel.nr));
        fmt::print("  KC = {}: a KC x NR sliver of B ({}) fills 3/4 of L1\n", measured("{}", blocks.kc),
                   measured("{}", kib(blocks.kc * kernel.nr * sizeof(float))));
        fmt::print("  MC = {}: an MC x KC block of A ({}) fills 3/4 of L2\n", measured("{}", blocks.mc),
                   measured("{}", kib(blocks.mc * blocks.kc * sizeof(float))));
        fmt::print("  NC = {}: a KC x NC panel of B ({}) fills half of L3, at most 4096 columns\n",
                   measured("{}", blocks.nc), measured("{}", kib(blocks.kc * blocks.nc * sizeof(float))));
        fmt::print("  caches used: {}\n\n", measured("{}", blocking_caches(machine)));

        // 5. The roofline.
        fmt::print("5. Roofline: FLOPs per byte of memory traffic (a model for matrices larger than the caches)\n");
        cachebook::Table roof({"step", "FLOPs/byte", "roof GFLOPS", "measured", "% of roof"});
        for (const auto& r : steps) {
            if (r.intensity <= 0) continue;
            const double gflops = s.flops() / r.seconds / 1e9;
            const double bound = std::min(r.threads == 1 ? peak_core : peak_all, r.intensity * bandwidth);
            roof.row({r.label, measured("{:.3g}", r.intensity), measured("{:.1f}", bound), measured("{:.2f}", gflops),
                      measured("{:.0f}", 100 * gflops / bound)});
        }
        fmt::print("{}", roof.render());
        fmt::print("  roof = min(peak, FLOPs/byte x {} GB/s)\n\n", measured("{:.1f}", bandwidth));

        // 6. OpenBLAS and the goals.
        fmt::print("6. OpenBLAS: the kernel it picks, and the best it has here (each run in its own process)\n");
        {
            const BlasSide* best = nullptr;
            std::string best_name, tried;
            nlohmann::json jcores = nlohmann::json::array();
            for (const auto& [name, side] : cores) {
                if (best == nullptr || side.blas1 + side.blasT < best->blas1 + best->blasT) best = &side, best_name = name;
                tried += fmt::format("{}{} ({:.1f}, {:.1f})", tried.empty() ? "" : ", ", side.core,
                                     s.flops() / side.blas1 / 1e9, s.flops() / side.blasT / 1e9);
                jcores.push_back({{"coretype", name},
                                  {"core", side.core},
                                  {"gflops1", round_to(s.flops() / side.blas1 / 1e9, 1)},
                                  {"gflopsT", round_to(s.flops() / side.blasT / 1e9, 1)}});
            }
            auto g = [&](double sec) { return measured("{}", sec > 0 ? fmt::format("{:.1f}", s.flops() / sec / 1e9) : "-"); };
            fmt::print("  kernels tried, GFLOPS on 1 and {} threads: {}\n", measured("{}", threads),
                       measured("{}", tried.empty() ? "none" : tried));
            fmt::print("  best: {} (OPENBLAS_CORETYPE={})\n", measured("{}", best ? best->core : "-"),
                       measured("{}", best ? (best_name.empty() ? "not set" : best_name) : "-"));
            const double r1 = best ? best->blas1 / best->blis1 : 0, rT = best ? best->blasT / best->blisT : 0;
            const double blis1_gflops = best ? s.flops() / best->blis1 / 1e9 : 0;
            auto pct = [&](double x) { return measured("{}", best ? fmt::format("{:.0f}%", 100 * x) : "-"); };
            fmt::print("  goals: step 6 and that kernel timed in turn in one process, N = {}\n", n);
            fmt::print("    1 thread:  step 6 {} GFLOPS, OpenBLAS {}: step 6 reaches {} of OpenBLAS (goal 80%)\n",
                       g(best ? best->blis1 : 0), g(best ? best->blas1 : 0), pct(r1));
            fmt::print("    threads {}: step 6 {} GFLOPS, OpenBLAS {}: step 6 reaches {} of OpenBLAS (goal 80%)\n",
                       measured("{}", threads), g(best ? best->blisT : 0), g(best ? best->blasT : 0), pct(rT));
            fmt::print("    1 thread:  step 6 reaches {} of the measured FMA peak (goal 50%)\n",
                       pct(blis1_gflops / peak_core));
            const double plain_sec = best ? best->blis1_plain : 0;
            fmt::print("    1 thread, the same kernel without the prefetch of C: {} GFLOPS, {} of OpenBLAS\n\n",
                       g(plain_sec), measured("{}", plain_sec > 0 ? fmt::format("{:.0f}%", 100 * best->blas1 / plain_sec) : "-"));
            out["blas"] = {{"available", ch09::blas_available()}, {"default_core", default_core}, {"cores", jcores}};
            // Present even without OpenBLAS (as nulls), so the book's references to it resolve.
            out["goals"] = {{"n", n}, {"threads", threads}, {"met_1", false}, {"met_T", false}, {"met_peak", false}};
            for (const char* key : {"blis1_gflops", "blas1_gflops", "blisT_gflops", "blasT_gflops", "pct_1", "pct_T",
                                    "pct_of_peak_1", "plain1_gflops", "pct_1_plain"})
                out["goals"][key] = nullptr;
            if (best) {
                out["blas"]["best_core"] = best->core;
                out["goals"] = {{"n", n},
                                {"threads", threads},
                                {"blis1_gflops", round_to(blis1_gflops, 1)},
                                {"blas1_gflops", round_to(s.flops() / best->blas1 / 1e9, 1)},
                                {"blisT_gflops", round_to(s.flops() / best->blisT / 1e9, 1)},
                                {"blasT_gflops", round_to(s.flops() / best->blasT / 1e9, 1)},
                                {"pct_1", round_to(100 * r1, 1)},
                                {"pct_T", round_to(100 * rT, 1)},
                                {"pct_of_peak_1", round_to(100 * blis1_gflops / peak_core, 1)},
                                {"met_1", r1 >= 0.8},
                                {"met_T", rT >= 0.8},
                                {"met_peak", blis1_gflops >= 0.5 * peak_core},
                                {"plain1_gflops", nullptr},
                                {"pct_1_plain", nullptr}};
                if (best->blis1_plain > 0) {
                    out["goals"]["plain1_gflops"] = round_to(s.flops() / best->blis1_plain / 1e9, 1);
                    out["goals"]["pct_1_plain"] = round_to(100 * best->blas1 / best->blis1_plain, 1);
                }
            }
        }

        // Options: the seed's challenges.
        if (sweep_tiles) {
            fmt::print("Tile sweep (steps 3 and 4, GFLOPS)\n");
            cachebook::Table t({"T", "3 tiled", "4 tiled + SIMD"});
            nlohmann::json js = nlohmann::json::array();
            for (std::size_t tt : {8u, 16u, 32u, 64u, 128u, 256u}) {
                if (tt > n) break;
                progress.step(fmt::format("tile {}", tt));
                const std::size_t rows = sample_rows(s, 0.6e9 * scale, tt);
                const double g3 = s.flops() / time_rows(p, rows, runs, 0, [&](RowRange r) { ch09::matmul_tiled(a, b, c, s, r, tt); }) / 1e9;
                const std::size_t rows4 = sample_rows(s, 3e9 * scale, tt);
                const double g4 = s.flops() /
                                  time_rows(p, rows4, runs, 1, [&](RowRange r) { ch09::matmul_tiled_simd(a, b, c, s, r, tt, isa); }) / 1e9;
                t.row({fmt::format("{}", tt), measured("{:.2f}", g3), measured("{:.2f}", g4)});
                js.push_back({{"tile", tt}, {"tiled", round_to(g3, 2)}, {"simd", round_to(g4, 2)}});
            }
            fmt::print("{}\n", t.render());
            out["tile_sweep"] = js;
        }
        if (sweep_threads) {
            fmt::print("Thread sweep (steps 5 and 6, GFLOPS)\n");
            cachebook::Table t({"threads", "5 threaded", "6 packed"});
            nlohmann::json js = nlohmann::json::array();
            for (int th = 1; th <= threads; ++th) {
                progress.step(fmt::format("{} threads", th));
                const double g5 = s.flops() / cachebook::time_runs(runs, [&] { ch09::matmul_threaded(a, b, c, s, tile, isa, th); }).min() / 1e9;
                const double g6 = s.flops() / cachebook::time_runs(runs, [&] { ch09::matmul_blis(a, b, c, s, kernel, blocks, th); }).min() / 1e9;
                t.row({fmt::format("{}", th), measured("{:.1f}", g5), measured("{:.1f}", g6)});
                js.push_back({{"threads", th}, {"threaded", round_to(g5, 2)}, {"blis", round_to(g6, 2)}});
            }
            fmt::print("{}\n", t.render());
            out["thread_sweep"] = js;
        }
        if (sweep_kernels) {
            fmt::print("Micro-kernel sweep (step 6 on 1 thread; blocks derived for each kernel)\n");
            cachebook::Table t({"kernel", "MC", "KC", "NC", "GFLOPS", "% peak"});
            nlohmann::json js = nlohmann::json::array();
            for (Isa i : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
                if (!ch09::isa_supported(i)) continue;
                for (const auto& k : ch09::micro_kernels(i)) {
                    progress.step(k.name);
                    const auto bk = ch09::machine_blocking(k);
                    const double g = s.flops() / cachebook::time_runs(runs, [&] { ch09::matmul_blis(a, b, c, s, k, bk, 1); }).min() / 1e9;
                    const bool ok = ref.check(p, true).matches;
                    t.row({k.name + (ok ? "" : " (WRONG)"), measured("{}", bk.mc), measured("{}", bk.kc),
                           measured("{}", bk.nc), measured("{:.1f}", g), measured("{:.0f}", 100 * g / peak_core)});
                    js.push_back({{"kernel", k.name}, {"gflops", round_to(g, 2)}, {"matches", ok}});
                }
            }
            fmt::print("{}\n", t.render());
            out["kernel_sweep"] = js;
        }

        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
