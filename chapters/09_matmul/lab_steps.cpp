// Chapter 9's lab: the machine's facts and peak, step 6's blocks, and the steps timed one by one
// as the table of section 3 shows them (see lab.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "lab.hpp"

namespace ch09 {

std::array<std::size_t, 3> MachineFacts::cache_bytes() const {
    std::array<std::size_t, 3> out{};
    for (int i = 0; i < 3; ++i) out[i] = caches[i] ? caches[i]->size_bytes : 0;
    return out;
}

MachineFacts machine_caches() {
    MachineFacts m;
    for (int i = 0; i < 3; ++i) m.caches[i] = cachebook::machine().data_cache(i + 1);
    return m;
}

MachineFacts machine_facts(const Settings& o) {
    const auto& machine = cachebook::machine();
    MachineFacts m = machine_caches();
    m.cpus = cachebook::usable_cpus();
    m.reported_line = machine.line_bytes();
    m.line = m.reported_line.value_or(64);
    m.features = cachebook::cpu_features();
    m.tile = o.tile.value_or(std::min(o.n, tile_from_l1(m.caches[0] ? m.caches[0]->size_bytes : 32768)));
    m.ghz_nominal = nominal_clock_ghz();
    m.ghz = cachebook::estimate_clock_ghz(o.quick ? 0.05 : 0.2).value_or(0.0);
    return m;
}

Peak measure_peak(const Settings& o, const MachineFacts& m, cachebook::Progress& progress) {
    progress.step("peak");
    const double fma_seconds = o.quick ? 0.15 : 0.4;
    Peak peak;
    peak.core = measure_fma_gflops(o.isa, 1, fma_seconds);
    peak.all = measure_fma_gflops(o.isa, o.threads, fma_seconds);
    progress.step("bandwidth");
    // Each array twice the last level: the L3 chapter 8 measured where given (a virtual machine can
    // report one many times larger than it is), else the reported one.
    const std::size_t reported_l3 = m.caches[2] ? m.caches[2]->size_bytes : 8u << 20;
    const std::size_t l3_bytes = o.measured_caches ? o.measured_caches->bytes[2].value_or(reported_l3) : reported_l3;
    peak.triad_floats =
        o.quick ? (8u << 20) : std::clamp<std::size_t>(2 * l3_bytes / sizeof(float), 16u << 20, 64u << 20);
    peak.bandwidth = measure_triad_gbs(peak.triad_floats, o.threads, o.quick ? 3 : 5);
    return peak;
}

Blocks choose_blocks(Problem& p, const Settings& o, const MachineFacts& m, cachebook::Progress& progress) {
    Blocks b;
    b.reported = derive_blocking(m.cache_bytes()[0], m.cache_bytes()[1], m.cache_bytes()[2], o.kernel.mr, o.kernel.nr);
    if (o.measured_caches) b.measured = measured_blocking(*o.measured_caches, m.cache_bytes(), o.kernel);
    b.rule = b.measured.value_or(b.reported);
    b.used = o.with_given(b.rule);
    if (!o.blocks_given()) {
        progress.step("block search");
        b.trials = search_blocks(p, o.kernel, b.rule, table_runs(o));
        b.used = fastest_blocks(b.trials);
    }
    return b;
}

namespace {

struct StepRunner {
    Problem& p;
    const Reference& ref;
    const Settings& o;
    cachebook::Progress& progress;
    std::vector<StepResult> steps;

    // C is cleared before each step, so that no step is checked on rows another step wrote.
    void clear_c() { std::fill(p.c.get(), p.c.get() + p.shape.m * p.shape.n, 0.0f); }
    StepResult& sampled(StepResult r, double flops, std::size_t multiple, int warmup,
                        const std::function<void(RowRange)>& run) {
        progress.step(r.key);
        clear_c();
        r.rows_timed = sample_rows(p.shape, flops * o.scale(), multiple);
        r.seconds = time_rows(p, r.rows_timed, table_runs(o), warmup, run);
        r.check = ref.check(p, r.rows_timed == p.shape.m);
        r.sampled = true;
        return steps.emplace_back(std::move(r));
    }
    StepResult& whole(StepResult r, const cachebook::RunBudget& runs, int warmup, const std::function<void()>& run) {
        progress.step(r.key);
        clear_c();
        r.seconds = fastest_run(runs, warmup, run);
        r.rows_timed = p.shape.m;
        r.check = ref.check(p, true);
        return steps.emplace_back(std::move(r));
    }
};

// A label with one machine-dependent part (`part`, possibly empty): recorded whole, shown with
// that part masked in golden mode.
StepResult step(std::string key, std::string before, std::string part, std::string after, double intensity,
                int threads = 1) {
    StepResult r;
    r.key = std::move(key);
    r.label = before + part + after;
    r.before = std::move(before), r.part = std::move(part), r.after = std::move(after);
    r.intensity = intensity;
    r.threads = threads;
    return r;
}

StepResult step(std::string key, std::string label, double intensity) {
    return step(std::move(key), std::move(label), "", "", intensity);
}

std::string threads_text(int threads) {
    return threads > 1 ? fmt::format("{}", threads) : "-";
}

double run_scalar_steps(StepRunner& run, const MachineFacts& m) {
    const Shape s = run.p.shape;
    const float *a = run.p.a.get(), *b = run.p.b.get();
    float* c = run.p.c.get();
    run.sampled(step("naive", "1 naive i-j-k", intensity_naive(m.line)), 0.05e9, 1, 0,
                [&](RowRange r) { matmul_naive(a, b, c, s, r); });
    Buffer bt = make_buffer(s.n * s.k);
    const double transpose = fastest_run(table_runs(run.o), 1, [&] { ch09::transpose(b, bt.get(), s.k, s.n); });
    run.sampled(step("naive_bt", "1t naive, B transposed first", intensity_ikj()), 0.1e9, 1, 0,
                [&](RowRange r) { matmul_naive_bt(a, bt.get(), c, s, r); })
        .seconds += transpose;
    run.sampled(step("ikj", "2 i-k-j", intensity_ikj()), 0.1e9, 1, 0, [&](RowRange r) { matmul_ikj(a, b, c, s, r); });
    run.sampled(step("tiled", "3 tiled, T = ", fmt::format("{}", m.tile), "", intensity_tiled(m.tile)), 0.2e9, m.tile,
                0, [&](RowRange r) { matmul_tiled(a, b, c, s, r, m.tile); });
    return transpose;
}

}  // namespace

StepRuns run_steps(Problem& p, const Reference& ref, const Settings& o, const MachineFacts& m, Blocking blocks,
                   const Libraries& libs, cachebook::Progress& progress) {
    StepRunner run{p, ref, o, progress, {}};
    const double transpose = run_scalar_steps(run, m);
    const Shape s = p.shape;
    const float *a = p.a.get(), *b = p.b.get();
    float* c = p.c.get();
    const std::string vector_name = o.isa == Isa::Scalar ? "scalar fallback"
                                    : o.isa == Isa::Neon ? "NEON FMA"
                                                         : "AVX2 FMA";
    run.sampled(step("simd", "4 tiled + ", vector_name, "", intensity_tiled(m.tile)), 1e9, m.tile, 1,
                [&](RowRange r) { matmul_tiled_simd(a, b, c, s, r, m.tile, o.isa); });
    run.whole(
        step("threaded", "5 step 4, threads: ", fmt::format("{}", o.threads), "", intensity_tiled(m.tile), o.threads),
        table_runs(o), 0, [&] { matmul_threaded(a, b, c, s, m.tile, o.isa, o.threads); });  // step 4 touched the data
    const double ai = intensity_blis(s, blocks);
    const LibraryRun* beside = libs.best();
    // Beside the libraries step 6 was timed in their process: here one call, its check only.
    const cachebook::RunBudget runs6 = beside ? cachebook::RunBudget{1, 1, 0} : table_runs(o);
    const int warmup6 = beside ? 0 : 1;
    auto& one = run.whole(step("blis1", "6 packed + micro-kernel, 1 thread", ai), runs6, warmup6,
                          [&] { matmul_blis(a, b, c, s, o.kernel, blocks, 1); });
    if (beside) one.seconds = beside->step6[0];
    StepResult all = step("blisT", "6 packed + micro-kernel, threads: ", threads_text(o.threads), "", ai, o.threads);
    all.needs_threads = true;
    if (o.threads > 1) {
        auto& many =
            run.whole(std::move(all), runs6, warmup6, [&] { matmul_blis(a, b, c, s, o.kernel, blocks, o.threads); });
        if (beside) many.seconds = beside->step6[1];
    } else {  // the row stays, empty, so the output has one shape; the line under the table says why
        run.steps.push_back(std::move(all));
    }
    return {std::move(run.steps), transpose};
}

std::vector<std::size_t> study_tiles(std::size_t n) {
    std::vector<std::size_t> tiles = {n};
    for (std::size_t t : {16, 32, 64, 128, 256})
        if (t < n) tiles.push_back(t);
    return tiles;
}

std::vector<std::size_t> sweep_tiles(std::size_t n) {
    std::vector<std::size_t> tiles;
    for (std::size_t t : {8, 16, 32, 64, 128, 256})
        if (t <= n) tiles.push_back(t);
    return tiles;
}

std::vector<ThreadTiming> time_threads(Problem& p, const Settings& o, std::size_t tile, Blocking blocks,
                                       cachebook::Progress& progress) {
    const float *a = p.a.get(), *b = p.b.get();
    float* c = p.c.get();
    std::vector<ThreadTiming> out;
    for (int th = 1; th <= o.threads; ++th) {
        progress.step(fmt::format("{} threads", th));
        const double t5 =
            cachebook::time_runs(o.runs, [&] { matmul_threaded(a, b, c, p.shape, tile, o.isa, th); }).min();
        const double t6 =
            cachebook::time_runs(o.runs, [&] { matmul_blis(a, b, c, p.shape, o.kernel, blocks, th); }).min();
        out.push_back({th, p.shape.flops() / t5 / 1e9, p.shape.flops() / t6 / 1e9});
    }
    return out;
}

std::vector<KernelTiming> time_kernels(Problem& p, const Reference& ref, int runs, cachebook::Progress& progress) {
    std::vector<KernelTiming> out;
    for (Isa i : kAllIsas) {
        if (!isa_supported(i)) continue;
        for (const auto& k : micro_kernels(i)) {
            progress.step(k.name);
            const auto bk = machine_blocking(k);
            const double sec = cachebook::time_runs(runs, [&] {
                                   matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, k, bk, 1);
                               }).min();
            out.push_back({k.name, bk, p.shape.flops() / sec / 1e9, ref.check(p, true).matches});
        }
    }
    return out;
}

}  // namespace ch09
