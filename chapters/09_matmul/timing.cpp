// Chapter 9: how the program measures the steps (see timing.hpp).
#include "timing.hpp"

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

namespace ch09 {

Problem::Problem(Shape s) : shape(s), a(make_buffer(s.m * s.k)), b(make_buffer(s.k * s.n)), c(make_buffer(s.m * s.n)) {
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

double time_rows(const Problem& p, std::size_t rows_timed, int runs, int warmup,
                 const std::function<void(RowRange)>& run) {
    const auto t = cachebook::time_runs(
        runs,
        [&] {
            run({0, rows_timed});
        },
        warmup);
    cachebook::do_not_optimize(p.c[0]);
    return t.min() * double(p.shape.m) / double(rows_timed);
}

std::size_t sample_rows(Shape s, double flops, std::size_t multiple) {
    const double per_row = 2.0 * double(s.n) * double(s.k);
    auto rows = static_cast<std::size_t>(std::max(16.0, flops / std::max(per_row, 1.0)));
    rows = (rows + multiple - 1) / multiple * multiple;
    return std::min(rows, s.m);
}

// ---- Step 6 beside the libraries -------------------------------------------------------

nlohmann::json to_json(const LibraryRun& r) {
    return {{"core", r.openblas_core},
            {"blis_lib", r.blis_name},
            {"step6", r.step6},
            {"openblas", r.openblas},
            {"blis", r.blis},
            {"step6_plain", r.step6_plain},
            {"openblas_matches", r.openblas_matches},
            {"blis_matches", r.blis_matches}};
}

LibraryRun library_run_from_json(const nlohmann::json& j) {
    return LibraryRun{
        j.at("core"),        j.at("blis_lib"),         j.at("step6"),       j.at("openblas"), j.at("blis"),
        j.at("step6_plain"), j.at("openblas_matches"), j.at("blis_matches")};
}

std::vector<int> thread_counts(int threads) {
    return threads > 1 ? std::vector<int>{1, threads} : std::vector<int>{1};
}

namespace {

// The libraries' worker threads keep spinning for a while after a call; give them time to
// sleep so they do not take cycles from the next measurement.
void pause_for_idle_blas_threads() {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

// One timed call, after the same pause before each, so that none starts from a busier core.
double time_once(const std::function<void()>& f) {
    pause_for_idle_blas_threads();
    const auto start = cachebook::Clock::now();
    f();
    return cachebook::seconds_since(start);
}

// One contender of the side-by-side runs: where its times go, and how to run it on t threads.
struct Contender {
    std::array<double, 2>* seconds;
    std::function<void(int)> run;
};

std::vector<Contender> contenders(Problem& p, const Reference& ref, const MicroKernel& kernel, Blocking blocks,
                                  LibraryRun& out) {
    const float *a = p.a.get(), *b = p.b.get();
    float* c = p.c.get();
    std::vector<Contender> all = {{&out.step6, [=, &p](int t) { matmul_blis(a, b, c, p.shape, kernel, blocks, t); }}};
    if (blas_available()) {
        all.push_back({&out.openblas, [=, &p](int t) { matmul_blas(a, b, c, p.shape, t); }});
        all.back().run(1);
        out.openblas_matches = ref.check(p, true).matches;
    }
    if (blis_lib_available()) {
        all.push_back({&out.blis, [=, &p](int t) { matmul_blis_lib(a, b, c, p.shape, t); }});
        all.back().run(1);
        out.blis_matches = ref.check(p, true).matches;
    }
    return all;
}

}  // namespace

LibraryRun time_beside_libraries(std::size_t n, int threads, int runs, const MicroKernel& kernel, Blocking blocks) {
    Problem p({n, n, n});
    const Reference ref(p);
    LibraryRun out;
    out.openblas_core = blas_available() ? blas_corename() : "";
    out.blis_name = blis_lib_name();
    auto all = contenders(p, ref, kernel, blocks, out);
    const auto plain = without_c_prefetch(kernel);
    const std::vector<int> counts = thread_counts(threads);
    for (std::size_t slot = 0; slot < counts.size(); ++slot) {
        const int t = counts[slot];
        for (auto& c : all) c.run(t), (*c.seconds)[slot] = HUGE_VAL;  // warm-up
        for (int r = 0; r < runs; ++r) {
            for (auto& c : all) (*c.seconds)[slot] = std::min((*c.seconds)[slot], time_once([&] { c.run(t); }));
            if (t != 1 || !plain) continue;
            const double sec =
                time_once([&] { matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, *plain, blocks, 1); });
            out.step6_plain = out.step6_plain > 0 ? std::min(out.step6_plain, sec) : sec;
        }
    }
    pause_for_idle_blas_threads();
    return out;
}

std::string self_path() {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string{} : p.string();
}

std::optional<LibraryRun> run_child(const ChildRequest& q) {
    if (q.program.empty()) return std::nullopt;
    std::string cmd;
    if (!q.coretype.empty()) cmd += "OPENBLAS_CORETYPE=" + q.coretype + " ";
    cmd +=
        fmt::format("'{}' --blas-child --n {} --threads {} --runs {} --kernel '{}' --mc {} --kc {} --nc {} 2>/dev/null",
                    q.program, q.n, q.threads, q.runs, q.kernel, q.blocks.mc, q.blocks.kc, q.blocks.nc);
    const cachebook::CommandResult child = cachebook::run_command(cmd);
    if (child.status != 0) return std::nullopt;
    try {
        return library_run_from_json(nlohmann::json::parse(child.output));
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

std::optional<std::size_t> fastest_openblas(const std::vector<CoreRun>& runs) {
    std::optional<std::size_t> best;
    auto total = [](const LibraryRun& x) { return x.openblas[0] + x.openblas[1]; };
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (!best || total(runs[i].run) < total(runs[*best].run)) best = i;
    return best;
}

// ---- The block search and the tiles ----------------------------------------------------

std::vector<BlockTrial> search_blocks(Problem& p, const MicroKernel& kernel, Blocking rule, int runs) {
    std::vector<BlockTrial> trials;
    for (const auto& b : block_candidates(rule, kernel.mr)) trials.push_back({b, HUGE_VAL});
    for (int r = 0; r <= runs; ++r)  // run 0 warms up
        for (auto& trial : trials) {
            const auto start = cachebook::Clock::now();
            matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, trial.blocks, 1);
            if (r > 0) trial.seconds = std::min(trial.seconds, cachebook::seconds_since(start));
        }
    return trials;
}

Blocking fastest_blocks(const std::vector<BlockTrial>& trials) {
    return std::min_element(trials.begin(), trials.end(), [](auto& x, auto& y) { return x.seconds < y.seconds; })
        ->blocks;
}

std::vector<TileTiming> time_tiles(Problem& p, Isa isa, const std::vector<std::size_t>& tiles, int runs,
                                   double scalar_flops, double vector_flops, cachebook::Progress& progress) {
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

double parallel_share(double speedup, double workers) {
    // speedup = 1 / ((1 - p) + p / w)  =>  p = (1 - 1 / speedup) / (1 - 1 / w)
    return std::clamp((1.0 - 1.0 / speedup) / (1.0 - 1.0 / workers), 0.0, 1.0);
}

}  // namespace ch09
