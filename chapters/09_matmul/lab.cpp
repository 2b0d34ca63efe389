// Chapter 9's lab: the machine's peak, the checks, the samples, the block search and the tiles (see lab.hpp).
#include "lab.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cachebook/machine.hpp"
#include "kernels.hpp"

namespace ch09 {

Problem::Problem(Shape s, cachebook::PageSize c_pages)
    : shape(s), a(make_buffer(s.m * s.k)), b(make_buffer(s.k * s.n)), c(make_page_buffer(s.m * s.n, c_pages)) {
    fill_random(a.get(), s.m * s.k, 1);
    fill_random(b.get(), s.k * s.n, 2);
    std::fill(c.get(), c.get() + s.m * s.n, 0.0f);
}

Reference::Reference(const Problem& p) {
    const std::size_t m = p.shape.m, rows = std::min<std::size_t>(m, 16);
    head = {0, rows};
    tail = {m - rows, m};
    head_ref = reference_rows(p.a.get(), p.b.get(), p.shape, head);
    head_abs = abs_product_rows(p.a.get(), p.b.get(), p.shape, head);
    tail_ref = reference_rows(p.a.get(), p.b.get(), p.shape, tail);
    tail_abs = abs_product_rows(p.a.get(), p.b.get(), p.shape, tail);
}

Check Reference::check(const Problem& p, bool all_rows) const {
    const Check h = check_rows(p.c.get(), p.shape, head, head_ref, head_abs);
    if (!all_rows) return h;
    const Check t = check_rows(p.c.get(), p.shape, tail, tail_ref, tail_abs);
    return {h.matches && t.matches, std::max(h.worst_ratio, t.worst_ratio), h.elements + t.elements};
}

double fastest_run(const cachebook::RunBudget& runs, int warmup, const std::function<void()>& run) {
    for (int i = 0; i < warmup; ++i) run();
    double fastest = HUGE_VAL;
    const auto began = cachebook::Clock::now();
    for (int r = 0; runs.another(r, cachebook::seconds_since(began)); ++r) {
        const auto start = cachebook::Clock::now();
        run();
        fastest = std::min(fastest, cachebook::seconds_since(start));
    }
    return fastest;
}

cachebook::RunBudget table_runs(const Settings& o) {
    return {std::min(2, o.runs), o.runs, kTableSeconds};
}

std::string table_runs_text(const Settings& o) {
    const auto runs = table_runs(o);
    return runs.floor == runs.most ? fmt::format("{}", runs.most) : fmt::format("{} to {}", runs.floor, runs.most);
}

cachebook::RunBudget all_runs(const Settings& o) {
    return {o.runs, o.runs, 0};
}

double time_rows(const Problem& p, std::size_t rows_timed, const cachebook::RunBudget& runs, int warmup,
                 const std::function<void(RowRange)>& run) {
    const double fastest = fastest_run(runs, warmup, [&] { run({0, rows_timed}); });
    cachebook::do_not_optimize(p.c[0]);
    return fastest * double(p.shape.m) / double(rows_timed);
}

std::size_t sample_rows(Shape s, double flops, std::size_t multiple) {
    const double per_row = 2.0 * double(s.n) * double(s.k);
    auto rows = static_cast<std::size_t>(std::max(16.0, flops / std::max(per_row, 1.0)));
    rows = (rows + multiple - 1) / multiple * multiple;
    return std::min(rows, s.m);
}

// ---- Checking ----------------------------------------------------------------------------

std::vector<double> reference_rows(const float* a, const float* b, Shape s, RowRange rows) {
    std::vector<double> out(rows.size() * s.n, 0.0);
    for (std::size_t i = rows.begin; i < rows.end; ++i) {
        double* ci = out.data() + (i - rows.begin) * s.n;
        for (std::size_t p = 0; p < s.k; ++p) {
            const double aip = a[i * s.k + p];
            for (std::size_t j = 0; j < s.n; ++j) ci[j] += aip * double(b[p * s.n + j]);
        }
    }
    return out;
}

std::vector<double> abs_product_rows(const float* a, const float* b, Shape s, RowRange rows) {
    std::vector<double> out(rows.size() * s.n, 0.0);
    for (std::size_t i = rows.begin; i < rows.end; ++i) {
        double* ci = out.data() + (i - rows.begin) * s.n;
        for (std::size_t p = 0; p < s.k; ++p) {
            const double aip = std::fabs(double(a[i * s.k + p]));
            for (std::size_t j = 0; j < s.n; ++j) ci[j] += aip * std::fabs(double(b[p * s.n + j]));
        }
    }
    return out;
}

double gamma_bound(std::size_t k) {
    const double u = std::ldexp(1.0, -24);
    const double ku = double(std::max<std::size_t>(k, 1)) * u;
    return ku / (1.0 - ku);
}

Check check_rows(const float* c, Shape s, RowRange rows, const std::vector<double>& ref,
                 const std::vector<double>& abs_ab) {
    Check out;
    out.matches = true;
    const double g = gamma_bound(s.k);
    for (std::size_t i = rows.begin; i < rows.end; ++i)
        for (std::size_t j = 0; j < s.n; ++j) {
            const std::size_t r = (i - rows.begin) * s.n + j;
            const double err = std::fabs(double(c[i * s.n + j]) - ref[r]);
            const double bound = g * abs_ab[r];
            const double ratio = bound > 0 ? err / bound : (err == 0 ? 0.0 : HUGE_VAL);
            if (!(ratio <= 1.0)) out.matches = false;  // also catches NaN
            out.worst_ratio = std::max(out.worst_ratio, std::isnan(ratio) ? HUGE_VAL : ratio);
            ++out.elements;
        }
    return out;
}

// ---- The machine ---------------------------------------------------------------------------

double measure_fma_gflops(Isa isa, int threads, double seconds) {
    const auto loop = detail::kernels_of(isa).fma_loop;
    // Calibrate one run to about 10 ms, then keep the fastest of many runs: on a shared machine
    // some run goes undisturbed, and noise only ever adds time.
    std::size_t iterations = 1 << 10;
    for (;;) {
        const auto start = cachebook::Clock::now();
        loop(iterations);
        if (cachebook::seconds_since(start) > 0.01 || iterations > (std::size_t{1} << 40)) break;
        iterations *= 2;
    }
    const int runs = std::max(5, static_cast<int>(seconds / 0.01));
    double flops = 0;
    const auto timing = cachebook::time_runs(
        runs,
        [&] {
            std::vector<double> each(static_cast<std::size_t>(threads));
            run_threads(threads, [&](int t) { each[static_cast<std::size_t>(t)] = loop(iterations); });
            flops = 0;
            for (double f : each) flops += f;
        },
        0);
    return flops / timing.min() / 1e9;
}

double nominal_clock_ghz() {
    return cachebook::machine().nominal_ghz;
}

double measure_triad_gbs(std::size_t floats, int threads, int runs) {
    Buffer x = make_buffer(floats), y = make_buffer(floats), z = make_buffer(floats);
    const std::size_t per = (floats + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
    auto triad = [&](float scale) {
        run_threads(threads, [&](int t) {
            const std::size_t begin = std::min(floats, per * static_cast<std::size_t>(t));
            const std::size_t end = std::min(floats, begin + per);
            for (std::size_t i = begin; i < end; ++i) x[i] = y[i] + scale * z[i];
        });
        cachebook::clobber_memory();
    };
    run_threads(threads, [&](int t) {  // first touch by the thread that will use each part
        const std::size_t begin = std::min(floats, per * static_cast<std::size_t>(t));
        const std::size_t end = std::min(floats, begin + per);
        for (std::size_t i = begin; i < end; ++i) x[i] = 0, y[i] = 1, z[i] = 2;
    });
    const auto timing = cachebook::time_runs(
        runs, [&] { triad(3.0f); }, 1);
    cachebook::do_not_optimize(x[floats / 2]);
    return 3.0 * sizeof(float) * double(floats) / timing.min() / 1e9;
}

// ---- The block search and the tiles ----------------------------------------------------

std::vector<BlockTrial> search_blocks(Problem& p, const MicroKernel& kernel, Blocking rule,
                                      const cachebook::RunBudget& rounds) {
    std::vector<BlockTrial> trials;
    for (const auto& b : block_candidates(rule, kernel.mr)) trials.push_back({b, HUGE_VAL});
    if (trials.empty()) return trials;
    // Two calls warm up: the candidates with the largest panel of B and the largest block of A
    // make the packing buffers as large as any candidate needs (kept from call to call), so no
    // timed call pays a first touch. A whole round of warm-up calls took a quarter of the search.
    auto largest = [&](auto floats) {
        return std::max_element(
                   trials.begin(), trials.end(),
                   [&](const BlockTrial& x, const BlockTrial& y) { return floats(x.blocks) < floats(y.blocks); })
            ->blocks;
    };
    for (const Blocking& b :
         {largest([](Blocking x) { return x.kc * x.nc; }), largest([](Blocking x) { return x.mc * x.kc; })})
        matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, b, 1);
    const auto began = cachebook::Clock::now();
    for (int r = 0; rounds.another(r, cachebook::seconds_since(began)); ++r)
        for (auto& trial : trials) {
            const auto start = cachebook::Clock::now();
            matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, trial.blocks, 1);
            trial.seconds = std::min(trial.seconds, cachebook::seconds_since(start));
        }
    return trials;
}

Blocking fastest_blocks(const std::vector<BlockTrial>& trials) {
    return std::min_element(trials.begin(), trials.end(), [](auto& x, auto& y) { return x.seconds < y.seconds; })
        ->blocks;
}

std::vector<TileTiming> time_tiles(Problem& p, Isa isa, const std::vector<std::size_t>& tiles,
                                   const cachebook::RunBudget& runs, double scalar_flops, double vector_flops,
                                   cachebook::Progress& progress) {
    const Shape s = p.shape;
    const float *a = p.a.get(), *b = p.b.get();
    float* c = p.c.get();
    std::vector<TileTiming> out;
    for (std::size_t t : tiles) {
        progress.step(fmt::format("tiles of {}", t));
        const std::size_t whole = std::min(t, std::size_t{128});
        const std::size_t rows_scalar = sample_rows(s, scalar_flops, whole);
        const std::size_t rows_vector = sample_rows(s, vector_flops, whole);
        const double scalar = time_rows(p, rows_scalar, runs, 0, [&](RowRange r) { matmul_tiled(a, b, c, s, r, t); });
        const double vector =
            time_rows(p, rows_vector, runs, 1, [&](RowRange r) { matmul_tiled_simd(a, b, c, s, r, t, isa); });
        out.push_back({t, s.flops() / scalar / 1e9, s.flops() / vector / 1e9});
    }
    return out;
}

TileGain best_tiles(const std::vector<TileTiming>& rows, std::size_t n) {
    TileGain g;
    double best[2] = {0, 0};
    for (const auto& r : rows) {
        if (r.tile == n) continue;
        if (r.scalar_gflops > best[0]) best[0] = r.scalar_gflops, g.scalar_tile = r.tile;
        if (r.vector_gflops > best[1]) best[1] = r.vector_gflops, g.vector_tile = r.tile;
    }
    auto gain = [](double x, double y) { return y > 0 ? x / y : 0.0; };
    g.scalar = rows.empty() ? 0 : gain(best[0], rows.front().scalar_gflops);
    g.vector = rows.empty() ? 0 : gain(best[1], rows.front().vector_gflops);
    return g;
}

double rule_seconds(const std::vector<BlockTrial>& trials, Blocking rule) {
    double seconds = 0;  // the last such trial, should two candidates be equal
    for (const auto& t : trials)
        if (t.blocks.mc == rule.mc && t.blocks.kc == rule.kc) seconds = t.seconds;
    return seconds;
}

double fastest_seconds(const std::vector<BlockTrial>& trials) {
    double best = HUGE_VAL;
    for (const auto& t : trials) best = std::min(best, t.seconds);
    return best;
}

// ---- Blocks from the caches chapter 8 measured ------------------------------------------

MeasuredCaches measured_caches_from_json(const nlohmann::json& cliff) {
    if (!cliff.is_object() || !cliff.contains("levels") || !cliff["levels"].is_object())
        throw std::invalid_argument("no \"levels\" in it (write it with ch08_cliff --json FILE)");
    const auto& levels = cliff["levels"];
    MeasuredCaches out;
    const char* names[] = {"L1d", "L2", "L3"};
    for (int i = 0; i < 3; ++i) {
        if (!levels.contains(names[i])) continue;
        const auto& level = levels[names[i]];
        if (!level.is_object() || !level.contains("detected_bytes") || level["detected_bytes"].is_null()) continue;
        const auto& bytes = level["detected_bytes"];
        if (!bytes.is_number_unsigned() || bytes.get<std::uint64_t>() == 0)
            throw std::invalid_argument(
                fmt::format("levels.{}.detected_bytes is not a positive whole number", names[i]));
        out.bytes[i] = bytes.get<std::size_t>();
    }
    if (!out.bytes[0] && !out.bytes[1] && !out.bytes[2])
        throw std::invalid_argument("chapter 8 found no cache level in it");
    return out;
}

MeasuredCaches read_measured_caches(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw std::invalid_argument(std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) throw std::invalid_argument("cannot be read");
    const auto json = nlohmann::json::parse(text.str(), nullptr, false);
    if (json.is_discarded()) throw std::invalid_argument("not JSON");
    return measured_caches_from_json(json);
}

Blocking measured_blocking(const MeasuredCaches& measured, const std::array<std::size_t, 3>& reported,
                           const MicroKernel& kernel) {
    std::array<std::size_t, 3> bytes{};
    for (int i = 0; i < 3; ++i) bytes[i] = measured.bytes[i].value_or(reported[i]);
    return derive_blocking(bytes[0], bytes[1], bytes[2], kernel.mr, kernel.nr);
}

// ---- Speed-up: Amdahl and Gustafson ---------------------------------------------------

double amdahl_speedup(double parallel, double workers) {
    return 1.0 / ((1.0 - parallel) + parallel / workers);
}

double gustafson_speedup(double parallel, double workers) {
    return (1.0 - parallel) + parallel * workers;
}

double gustafson_share(double parallel, double workers) {
    const double parallel_time = parallel / workers;  // of one worker's time
    return parallel_time / ((1.0 - parallel) + parallel_time);
}

double parallel_share(double speedup, double workers) {
    // speedup = 1 / ((1 - p) + p / w)  =>  p = (1 - 1 / speedup) / (1 - 1 / w)
    return std::clamp((1.0 - 1.0 / speedup) / (1.0 - 1.0 / workers), 0.0, 1.0);
}

}  // namespace ch09
