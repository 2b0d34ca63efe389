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

/// Step 6 and the two libraries, timed in turn in one process. Seconds, minimum of the runs;
/// index 0 is one thread, index 1 all threads (0: not measured, e.g. --threads 1 or no library).
struct BlasSide {
    std::string core;      // OpenBLAS's kernel ("" without OpenBLAS)
    std::string blis_lib;  // "BLIS <version>, <its kernels>" ("" without BLIS)
    std::array<double, 2> step6{}, openblas{}, blis{};
    double step6_plain = 0;  // step 6's kernel without the prefetch of C, 1 thread (0: no such twin)
    bool openblas_matches = false, blis_matches = false;
};

nlohmann::json to_json(const BlasSide& s) {
    return {{"core", s.core},         {"blis_lib", s.blis_lib},         {"step6", s.step6},
            {"openblas", s.openblas}, {"blis", s.blis},                 {"step6_plain", s.step6_plain},
            {"openblas_matches", s.openblas_matches}, {"blis_matches", s.blis_matches}};
}

BlasSide side_from_json(const nlohmann::json& j) {
    return BlasSide{j.at("core"),        j.at("blis_lib"),         j.at("step6"),       j.at("openblas"),
                    j.at("blis"),        j.at("step6_plain"),      j.at("openblas_matches"), j.at("blis_matches")};
}

void pause_for_idle_blas_threads() {
    // The libraries' worker threads keep spinning for a while after a call; give them time to
    // sleep so they do not take cycles from the next measurement.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

/// The thread counts the side-by-side runs: 1, and `threads` when that is more.
std::vector<int> thread_counts(int threads) { return threads > 1 ? std::vector<int>{1, threads} : std::vector<int>{1}; }

/// Step 6, OpenBLAS and BLIS (those present) side by side in one process, runs interleaved.
BlasSide side_by_side(std::size_t n, int threads, int runs, const ch09::MicroKernel& kernel, ch09::Blocking blocks) {
    Problem p({n, n, n});
    const Reference ref(p);
    BlasSide out;
    out.core = ch09::blas_available() ? ch09::blas_corename() : "";
    out.blis_lib = ch09::blis_lib_name();
    auto time_once = [](auto&& f) {
        pause_for_idle_blas_threads();  // the same pause before each, so none starts from a busier core
        const auto start = cachebook::Clock::now();
        f();
        return cachebook::seconds_since(start);
    };
    struct Contender {
        std::array<double, 2>* seconds;
        std::function<void(int)> run;
    };
    std::vector<Contender> all = {{&out.step6, [&](int t) {
                                       ch09::matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, blocks, t);
                                   }}};
    if (ch09::blas_available()) {
        all.push_back({&out.openblas, [&](int t) { ch09::matmul_blas(p.a.get(), p.b.get(), p.c.get(), p.shape, t); }});
        all.back().run(1);
        out.openblas_matches = ref.check(p, true).matches;
    }
    if (ch09::blis_lib_available()) {
        all.push_back({&out.blis, [&](int t) { ch09::matmul_blis_lib(p.a.get(), p.b.get(), p.c.get(), p.shape, t); }});
        all.back().run(1);
        out.blis_matches = ref.check(p, true).matches;
    }
    const auto plain = ch09::without_c_prefetch(kernel);
    const std::vector<int> counts = thread_counts(threads);
    for (std::size_t slot = 0; slot < counts.size(); ++slot) {
        const int t = counts[slot];
        for (auto& c : all) c.run(t), (*c.seconds)[slot] = HUGE_VAL;  // warm-up
        for (int r = 0; r < runs; ++r) {
            for (auto& c : all) (*c.seconds)[slot] = std::min((*c.seconds)[slot], time_once([&] { c.run(t); }));
            if (t == 1 && plain) {
                const double sec = time_once([&] { ch09::matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, *plain, blocks, 1); });
                out.step6_plain = out.step6_plain > 0 ? std::min(out.step6_plain, sec) : sec;
            }
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

/// Runs this program again with OPENBLAS_CORETYPE=`core` (empty: the environment as it is),
/// so that OpenBLAS picks its kernel at load time; returns what the child measured.
std::optional<BlasSide> blas_child(const std::string& core, std::size_t n, int threads, int runs,
                                   const std::string& kernel, ch09::Blocking blocks) {
    const std::string self = self_path();
    if (self.empty()) return std::nullopt;
    std::string cmd;
    if (!core.empty()) cmd += "OPENBLAS_CORETYPE=" + core + " ";
    cmd += fmt::format("'{}' --blas-child --n {} --threads {} --runs {} --kernel '{}' --mc {} --kc {} --nc {} 2>/dev/null",
                       self, n, threads, runs, kernel, blocks.mc, blocks.kc, blocks.nc);
    std::FILE* pipe = ::popen(cmd.c_str(), "r");
    if (pipe == nullptr) return std::nullopt;
    std::string text;
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) text += buf.data();
    if (::pclose(pipe) != 0) return std::nullopt;
    try {
        return side_from_json(nlohmann::json::parse(text));
    } catch (...) {
        return std::nullopt;
    }
}

std::string kib(std::size_t bytes) { return fmt::format("{} KiB", bytes / 1024); }

/// The child whose OpenBLAS kernel was fastest (on one thread and all, summed); without
/// OpenBLAS, the one child (which timed BLIS). nullopt when no child ran.
std::optional<std::size_t> best_openblas(const std::vector<std::pair<std::string, BlasSide>>& cores) {
    std::optional<std::size_t> best;
    auto total = [](const BlasSide& x) { return x.openblas[0] + x.openblas[1]; };
    for (std::size_t i = 0; i < cores.size(); ++i)
        if (!best || total(cores[i].second) < total(cores[*best].second)) best = i;
    return best;
}

/// Step 7's four rows of the table (OpenBLAS and BLIS, one thread and all), "-" where not measured.
void library_rows(cachebook::Table& table, nlohmann::json& jsteps, const BlasSide* best, int threads, double flops,
                  double naive_gflops, double peak_core, double peak_all) {
    for (int lib = 0; lib < 2; ++lib)
        for (std::size_t slot = 0; slot < 2; ++slot) {
            const std::string name = lib == 0 ? "OpenBLAS" : "BLIS";
            const double sec = best ? (lib == 0 ? best->openblas : best->blis)[slot] : 0;
            const bool matches = best && (lib == 0 ? best->openblas_matches : best->blis_matches);
            const double gflops = sec > 0 ? flops / sec / 1e9 : 0;
            const double peak = slot == 0 ? peak_core : peak_all;
            auto cell = [&](const std::string& text) { return measured("{}", sec > 0 ? text : std::string("-")); };
            table.row({"7 " + name + (slot == 0 ? ", 1 thread" : ", threads: " + measured("{}", threads)), "all",
                       cell(fmt::format("{:.3g}", sec)), cell(fmt::format("{:.2f}", gflops)),
                       cell(fmt::format("{:.1f}", 100 * gflops / peak)), cell(fmt::format("{:.0f}", gflops / naive_gflops)),
                       "-", cell(matches ? "yes" : "NO")});
            if (sec > 0)
                jsteps[(lib == 0 ? "blas" : "blis_lib") + std::string(slot == 0 ? "1" : "T")] = {
                    {"label", "7 " + (lib == 0 ? "OpenBLAS " + best->core : best->blis_lib)},
                    {"seconds", round_to(sec, 3)},
                    {"threads", slot == 0 ? 1 : threads},
                    {"gflops", round_to(gflops, 2)},
                    {"pct_peak", round_to(100 * gflops / peak, 1)},
                    {"speedup", round_to(gflops / naive_gflops, 1)},
                    {"matches", matches}};
        }
}

/// Section 6: OpenBLAS's kernels, BLIS, and step 6 against them (the goals), from the children.
void print_goals(const std::vector<std::pair<std::string, BlasSide>>& cores, std::optional<std::size_t> best_core,
                 const std::string& default_core, int threads, double flops, double peak_core, std::size_t n,
                 nlohmann::json& out) {
    constexpr double kGoal = 0.95;  // step 6 against OpenBLAS at its best kernel, on 1 thread and on all
    auto gflops = [&](double sec) { return sec > 0 ? flops / sec / 1e9 : 0.0; };
    auto g = [&](double sec) { return measured("{}", sec > 0 ? fmt::format("{:.1f}", gflops(sec)) : "-"); };
    auto ratio = [](double sec_lib, double sec_6) { return sec_lib > 0 && sec_6 > 0 ? sec_lib / sec_6 : 0.0; };
    auto pct = [](double r) { return measured("{}", r > 0 ? fmt::format("{:.0f}%", 100 * r) : "-"); };
    fmt::print("6. Step 6 beside the libraries (each OpenBLAS kernel in its own process)\n");
    std::string tried;
    nlohmann::json jcores = nlohmann::json::array();
    for (const auto& [name, side] : cores) {
        if (side.core.empty()) continue;
        tried += fmt::format("{}{} ({}, {})", tried.empty() ? "" : ", ", side.core, g(side.openblas[0]), g(side.openblas[1]));
        jcores.push_back({{"coretype", name}, {"core", side.core}, {"gflops1", round_to(gflops(side.openblas[0]), 1)},
                          {"gflopsT", round_to(gflops(side.openblas[1]), 1)}});
    }
    const BlasSide* best = best_core ? &cores[*best_core].second : nullptr;
    const bool have_openblas = best && !best->core.empty();
    fmt::print("  OpenBLAS kernels tried, GFLOPS on 1 and {} threads: {}\n", measured("{}", threads),
               measured("{}", tried.empty() ? "none" : tried));
    fmt::print("  OpenBLAS's own choice: {}; the best here: {} (OPENBLAS_CORETYPE={})\n",
               measured("{}", default_core.empty() ? "-" : default_core), measured("{}", have_openblas ? best->core : "-"),
               measured("{}", have_openblas ? (cores[*best_core].first.empty() ? "not set" : cores[*best_core].first) : "-"));
    fmt::print("  BLIS: {}\n", measured("{}", best && !best->blis_lib.empty() ? best->blis_lib : "-"));
    fmt::print("  goals: step 6 and the libraries timed in turn in one process, N = {}\n", n);
    const double r1 = have_openblas ? ratio(best->openblas[0], best->step6[0]) : 0;
    const double rT = have_openblas ? ratio(best->openblas[1], best->step6[1]) : 0;
    for (std::size_t slot = 0; slot < 2; ++slot) {
        const double r = slot == 0 ? r1 : rT;
        fmt::print("    {} step 6 {} GFLOPS, OpenBLAS {}, BLIS {}: step 6 reaches {} of OpenBLAS (goal {:.0f}%), {} of BLIS\n",
                   slot == 0 ? std::string("1 thread: ") : "threads " + measured("{}", threads) + ":", g(best ? best->step6[slot] : 0),
                   g(best ? best->openblas[slot] : 0), g(best ? best->blis[slot] : 0), pct(r), 100 * kGoal,
                   pct(best ? ratio(best->blis[slot], best->step6[slot]) : 0));
    }
    const double step6_1 = best ? gflops(best->step6[0]) : 0;
    fmt::print("    1 thread:  step 6 reaches {} of the measured FMA peak, OpenBLAS {}\n", pct(step6_1 / peak_core),
               pct(have_openblas ? gflops(best->openblas[0]) / peak_core : 0));
    const double plain = best ? best->step6_plain : 0;
    fmt::print("    1 thread, the same kernel without the prefetch of C: {} GFLOPS, {} of OpenBLAS\n\n", g(plain),
               pct(have_openblas ? ratio(best->openblas[0], plain) : 0));
    out["blas"] = {{"available", ch09::blas_available()}, {"default_core", default_core}, {"cores", jcores},
                   {"best_core", have_openblas ? best->core : ""}, {"blis_lib", best ? best->blis_lib : ""}};
    // Every key is present (null where not measured), so the book's references to them resolve.
    auto num = [](double x, int digits) { return x > 0 ? nlohmann::json(round_to(x, digits)) : nlohmann::json(nullptr); };
    out["goals"] = {{"n", n},
                    {"threads", threads},
                    {"goal_pct", 100 * kGoal},
                    {"blis1_gflops", num(step6_1, 1)},
                    {"blisT_gflops", num(best ? gflops(best->step6[1]) : 0, 1)},
                    {"blas1_gflops", num(have_openblas ? gflops(best->openblas[0]) : 0, 1)},
                    {"blasT_gflops", num(have_openblas ? gflops(best->openblas[1]) : 0, 1)},
                    {"lib_blis1_gflops", num(best ? gflops(best->blis[0]) : 0, 1)},
                    {"lib_blisT_gflops", num(best ? gflops(best->blis[1]) : 0, 1)},
                    {"pct_1", num(100 * r1, 1)},
                    {"pct_T", num(100 * rT, 1)},
                    {"pct_1_blis", num(best ? 100 * ratio(best->blis[0], best->step6[0]) : 0, 1)},
                    {"pct_T_blis", num(best ? 100 * ratio(best->blis[1], best->step6[1]) : 0, 1)},
                    {"pct_of_peak_1", num(100 * step6_1 / peak_core, 1)},
                    {"met_1", r1 >= kGoal},
                    {"met_T", rT >= kGoal},
                    {"plain1_gflops", num(gflops(plain), 1)},
                    {"pct_1_plain", num(have_openblas ? 100 * ratio(best->openblas[0], plain) : 0, 1)}};
}

/// Steps 2 to 4 with tiles of several sizes, one float per instruction and eight: T = N is
/// step 2's untiled i-k-j. Prints a table; returns its figures and the best gain of each.
nlohmann::json tiling_study(Problem& p, Isa isa, int runs, double scale, cachebook::Progress& progress) {
    const Shape s = p.shape;
    const float *a = p.a.get(), *b = p.b.get();
    float* c = p.c.get();
    fmt::print("  Tiling with one float per instruction and with {} (GFLOPS; T = N is step 2's i-k-j, untiled):\n",
               measured("{}", isa == Isa::Scalar ? "the scalar fallback" : "eight"));
    cachebook::Table table({"T", "scalar (steps 2, 3)", "vector (step 4)"});
    nlohmann::json rows = nlohmann::json::array();
    double untiled[2] = {0, 0}, best[2] = {0, 0};
    std::size_t best_tile[2] = {0, 0};
    for (std::size_t t : {s.n, std::size_t{16}, std::size_t{32}, std::size_t{64}, std::size_t{128}}) {
        if (t > s.n || (t == s.n && t <= 128 && !rows.empty())) continue;
        progress.step(fmt::format("tiles of {}", t));
        // At least one whole tile of rows, so that each tile of B is used as often as in the full product.
        const std::size_t rows_scalar = sample_rows(s, 0.1e9 * scale, std::min(t, std::size_t{128}));
        const std::size_t rows_simd = sample_rows(s, 0.5e9 * scale, std::min(t, std::size_t{128}));
        const double g[2] = {
            s.flops() / time_rows(p, rows_scalar, runs, 0, [&](RowRange r) { ch09::matmul_tiled(a, b, c, s, r, t); }) / 1e9,
            s.flops() / time_rows(p, rows_simd, runs, 1, [&](RowRange r) { ch09::matmul_tiled_simd(a, b, c, s, r, t, isa); }) / 1e9};
        for (int k = 0; k < 2; ++k) {
            if (t == s.n) untiled[k] = g[k];
            if (t != s.n && g[k] > best[k]) best[k] = g[k], best_tile[k] = t;
        }
        table.row({t == s.n ? fmt::format("N = {}", t) : fmt::format("{}", t), measured("{:.2f}", g[0]), measured("{:.2f}", g[1])});
        rows.push_back({{"tile", t}, {"scalar", round_to(g[0], 2)}, {"simd", round_to(g[1], 2)}});
    }
    fmt::print("{}", table.render());
    auto gain = [](double x, double y) { return y > 0 ? round_to(x / y, 2) : 0.0; };
    fmt::print("  best tile over untiled: scalar {}x (T = {}), vector {}x (T = {})\n\n", measured("{:.2f}", gain(best[0], untiled[0])),
               measured("{}", best_tile[0]), measured("{:.2f}", gain(best[1], untiled[1])), measured("{}", best_tile[1]));
    return {{"rows", rows},
            {"scalar_gain", gain(best[0], untiled[0])}, {"scalar_best_tile", best_tile[0]},
            {"simd_gain", gain(best[1], untiled[1])},   {"simd_best_tile", best_tile[1]}};
}

/// One candidate of the block search and its time (seconds, minimum of the runs).
struct BlockTrial {
    ch09::Blocking blocks;
    double seconds = HUGE_VAL;
};

/// Step 6 on one thread with each candidate block, the candidates taken in turn in every run
/// so that a noisy moment falls on one run of each rather than on every run of one.
std::vector<BlockTrial> search_blocks(Problem& p, const ch09::MicroKernel& kernel, ch09::Blocking rule, int runs) {
    std::vector<BlockTrial> trials;
    for (const auto& b : ch09::block_candidates(rule, kernel.mr)) trials.push_back({b});
    for (int r = 0; r <= runs; ++r)  // run 0 warms up
        for (auto& trial : trials) {
            const auto start = cachebook::Clock::now();
            ch09::matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, trial.blocks, 1);
            if (r > 0) trial.seconds = std::min(trial.seconds, cachebook::seconds_since(start));
        }
    return trials;
}

/// Section 4: the rule's blocks, the search around them, and the blocks step 6 used.
void print_blocks(const ch09::MicroKernel& kernel, ch09::Blocking rule, const std::vector<BlockTrial>& trials,
                  ch09::Blocking used, double flops, nlohmann::json& out) {
    fmt::print("4. Step 6's blocks: a rule from this machine's caches, then a short search around it\n");
    fmt::print("  micro-kernel {}: a block of {} x {} elements of C stays in registers\n", measured("{}", kernel.name),
               measured("{}", kernel.mr), measured("{}", kernel.nr));
    fmt::print("  rule: KC = {}: a KC x NR sliver of B ({}) fills 3/4 of L1\n", measured("{}", rule.kc),
               measured("{}", kib(rule.kc * kernel.nr * sizeof(float))));
    fmt::print("        MC = {}: an MC x KC block of A ({}) fills 3/4 of L2\n", measured("{}", rule.mc),
               measured("{}", kib(rule.mc * rule.kc * sizeof(float))));
    fmt::print("        NC = {}: a KC x NC panel of B ({}) fills half of L3, at most 4096 columns\n",
               measured("{}", rule.nc), measured("{}", kib(rule.kc * rule.nc * sizeof(float))));
    out["blocking_rule"] = {{"mc", rule.mc}, {"kc", rule.kc}, {"nc", rule.nc}};
    if (trials.empty()) {
        fmt::print("  search: skipped, blocks given with --mc, --kc or --nc\n");
    } else {
        double rule_seconds = 0;
        for (const auto& t : trials)
            if (t.blocks.mc == rule.mc && t.blocks.kc == rule.kc) rule_seconds = t.seconds;
        fmt::print("  search: step 6 on one thread at this N, GFLOPS (each candidate's fastest run)\n");
        cachebook::Table table({"KC", "MC", "GFLOPS", "vs rule", "used"});
        nlohmann::json js = nlohmann::json::array();
        for (const auto& t : trials) {
            const bool chosen = t.blocks.mc == used.mc && t.blocks.kc == used.kc;
            table.row({measured("{}", t.blocks.kc), measured("{}", t.blocks.mc), measured("{:.1f}", flops / t.seconds / 1e9),
                       measured("{:+.1f}%", 100 * (rule_seconds / t.seconds - 1)), measured("{}", chosen ? "*" : "")});
            js.push_back({{"mc", t.blocks.mc}, {"kc", t.blocks.kc}, {"gflops", round_to(flops / t.seconds / 1e9, 1)}});
        }
        fmt::print("{}", table.render());
        out["block_search"] = js;
        double best = HUGE_VAL;
        for (const auto& t : trials) best = std::min(best, t.seconds);
        out["block_search_gain_pct"] = round_to(100 * (rule_seconds / best - 1), 1);
    }
    fmt::print("  used: KC = {}, MC = {}, NC = {}\n", measured("{}", used.kc), measured("{}", used.mc),
               measured("{}", used.nc));
}

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
    for (Isa i : ch09::kAllIsas)
        for (const auto& k : ch09::micro_kernels(i))
            if (k.name == name) {
                if (!ch09::isa_supported(i))
                    throw cachebook::UsageError(fmt::format("--kernel '{}': this CPU cannot run it", name));
                return k;
            }
    std::string known;
    for (Isa i : ch09::kAllIsas)
        for (const auto& k : ch09::micro_kernels(i))
            if (ch09::isa_supported(i)) known += (known.empty() ? "" : ", ") + k.name;
    throw cachebook::UsageError(fmt::format("--kernel: expected one of {}; got '{}'", known, name));
}


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

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch09_matmul", [&] {
        cachebook::Cli cli("ch09_matmul", "Chapter 9: one matrix multiply, from the definition to within reach of BLAS");
        const int cpus = cachebook::usable_cpus();
        std::int64_t n_opt = 2048, threads_opt = cpus, tile_opt = 32, runs_opt = 3, mc_opt = 0, kc_opt = 0, nc_opt = 0;
        std::string isa_opt, kernel_opt;
        bool sweep_tiles = false, sweep_threads = false, sweep_kernels = false, child = false, no_blas = false;
        auto* n_flag = cli.add_int("--n", n_opt, "Order N of the N x N matrices (--quick: 512)", 1, 8192);
        cli.add_int("--threads", threads_opt, "Threads for steps 5 to 7 (default: every usable CPU)", 1, 256);
        auto* tile_flag = cli.add_int("--tile", tile_opt, "Tile of steps 3 to 5 (default: from the L1 size)", 1, 4096);
        auto* runs_flag = cli.add_int("--runs", runs_opt, "Timed runs per measurement; the minimum is reported (--quick: 2)", 1, 100);
        cli.add_string("--isa", isa_opt, "Kernels to use: scalar, avx2, avx512 or neon (default: the widest this CPU has)");
        cli.add_string("--kernel", kernel_opt, "Micro-kernel of step 6, e.g. 'avx2 6x16' (default: the isa's first)");
        auto* mc_flag = cli.add_int("--mc", mc_opt, "Step 6's MC (default: the rule, then a short search)", 1, 1 << 16);
        auto* kc_flag = cli.add_int("--kc", kc_opt, "Step 6's KC (default: the rule, then a short search)", 1, 1 << 16);
        auto* nc_flag = cli.add_int("--nc", nc_opt, "Step 6's NC (default: the rule, then a short search)", 1, 1 << 16);
        cli.app().add_flag("--sweep-tiles", sweep_tiles, "Also time steps 3 and 4 for tiles 8 to 256");
        cli.app().add_flag("--sweep-threads", sweep_threads, "Also time steps 5 and 6 for 1 to --threads threads");
        cli.app().add_flag("--sweep-kernels", sweep_kernels, "Also time step 6 with every micro-kernel (register block)");
        cli.app().add_flag("--no-blas", no_blas, "Skip step 7 (OpenBLAS and BLIS)");
        cli.app().add_flag("--blas-child", child, "Internal: time step 6, OpenBLAS and BLIS side by side, print one JSON line");
        if (auto status = cli.parse(argc, argv)) return *status;

        const bool quick = cli.quick();
        const auto n = static_cast<std::size_t>(quick && n_flag->count() == 0 ? 512 : n_opt);
        const int threads = static_cast<int>(threads_opt);
        const int runs = static_cast<int>(quick && runs_flag->count() == 0 ? 2 : runs_opt);
        const Isa isa = parse_isa(isa_opt);
        const ch09::MicroKernel kernel = parse_kernel(kernel_opt, isa);
        cachebook::require_memory(3 * n * n * sizeof(float) * 2, fmt::format("--n {}", n));

        // Blocks given on the command line replace the rule's, one by one; any given skips the search.
        const bool blocks_given = mc_flag->count() + kc_flag->count() + nc_flag->count() > 0;
        ch09::Blocking rule = ch09::machine_blocking(kernel), given = rule;
        if (mc_flag->count()) given.mc = static_cast<std::size_t>(mc_opt);
        if (kc_flag->count()) given.kc = static_cast<std::size_t>(kc_opt);
        if (nc_flag->count()) given.nc = static_cast<std::size_t>(nc_opt);

        if (child) {
            if (!ch09::blas_available() && !ch09::blis_lib_available())
                throw cachebook::UsageError("--blas-child: this program has neither OpenBLAS nor BLIS");
            fmt::print("{}\n", to_json(side_by_side(n, threads, runs, kernel, given)).dump());
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
        cachebook::Progress progress("ch09_matmul", 24);

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
        fmt::print("  instruction sets: {}\n", measured("{}", instruction_sets(features)));
        // The scalar fallback says why: the CPU lacks the instructions, or the build left the kernels out.
        const std::string steps45 = steps45_kernel(isa);
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
                          {"neon", features.neon},
                          {"isa", ch09::isa_name(isa)},
                          {"ghz_measured", round_to(ghz, 2)},
                          {"ghz_nominal", ghz_nominal > 0 ? nlohmann::json(round_to(ghz_nominal, 2)) : nlohmann::json()}};

        // 2. The peak and the roofline's two ceilings.
        progress.step("peak");
        const int width = ch09::simd_width(isa);
        // Two FMA units per core: Intel since Haswell, AMD since Zen 2, ARM's Cortex-A76 and Neoverse N1
        // (128-bit each); some ARM cores have four (Neoverse V2): the measured line below shows it.
        constexpr int kFmaPorts = 2;
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
        std::vector<BlockTrial> trials;
        ch09::Blocking blocks = given;
        if (!blocks_given) {
            progress.step("block search");
            trials = search_blocks(p, kernel, rule, runs);
            blocks = std::min_element(trials.begin(), trials.end(), [](auto& x, auto& y) { return x.seconds < y.seconds; })->blocks;
        }
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
        sampled("simd", "4 tiled + " + measured("{}", isa == Isa::Scalar ? "scalar fallback" : isa == Isa::Neon ? "NEON FMA" : "AVX2 FMA"),
                1e9 * scale, tile, 1, [&](RowRange r) { ch09::matmul_tiled_simd(a, b, c, s, r, tile, isa); },
                ch09::intensity_tiled(tile));
        whole("threaded", "5 step 4, threads: " + measured("{}", threads), threads,
              [&] { ch09::matmul_threaded(a, b, c, s, tile, isa, threads); }, ch09::intensity_tiled(tile));
        const double ai_blis = ch09::intensity_blis(s, blocks);
        whole("blis1", "6 packed + micro-kernel, 1 thread", 1,
              [&] { ch09::matmul_blis(a, b, c, s, kernel, blocks, 1); }, ai_blis);
        if (threads > 1)
            whole("blisT", "6 packed + micro-kernel, threads: " + measured("{}", threads), threads,
                  [&] { ch09::matmul_blis(a, b, c, s, kernel, blocks, threads); }, ai_blis);
        else  // the row stays, empty, so the output has one shape; the line under the table says why
            steps.push_back({"blisT", "6 packed + micro-kernel, threads: " + measured("{}", threads), 0, s.m, 1, {}, ai_blis});

        // Step 7 runs in child processes: OpenBLAS reads OPENBLAS_CORETYPE only when it loads.
        // Each child also times BLIS, where it is installed, beside step 6 and OpenBLAS.
        std::vector<std::pair<std::string, BlasSide>> cores;
        const std::string default_core = blas ? ch09::blas_corename() : "";
        if (!no_blas && (blas || ch09::blis_lib_available())) {
            std::vector<std::string> candidates = {""};
            if (blas && features.avx2 && features.fma) candidates.push_back("Haswell");
            if (blas && features.avx512f) candidates.push_back("SkylakeX");
            const int blas_runs = std::max(runs, quick ? 2 : 4);
            for (const auto& name : candidates) {
                if (!name.empty() && name == default_core) continue;
                progress.step("libraries " + (name.empty() ? default_core : name));
                if (auto side = blas_child(name, n, threads, blas_runs, kernel.name, blocks)) cores.emplace_back(name, *side);
            }
        }
        const auto best_core = best_openblas(cores);
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
            if (r.seconds <= 0) {  // not run: --threads 1
                table.row({r.label, "all", measured("-"), measured("-"), measured("-"), measured("-"), measured("-"), "-"});
                continue;
            }
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
        // Step 7 always has its four rows, so the output has one shape with or without the libraries.
        const BlasSide* best = best_core ? &cores[*best_core].second : nullptr;
        library_rows(table, jsteps, best, threads, s.flops(), naive_gflops, peak_core, peak_all);
        fmt::print("{}", table.render());
        fmt::print("  several threads: {}\n", measured("{}", threads > 1 ? fmt::format("{} threads in the rows that say so", threads)
                                                               : "not run, --threads 1 (the rows for several threads need two)"));
        fmt::print("  step 7: {}\n", measured("{}", no_blas                     ? "OpenBLAS skipped (--no-blas)"
                                                  : !ch09::blas_available() ? "OpenBLAS skipped, this build has no OpenBLAS"
                                                  : best == nullptr ? "OpenBLAS skipped, its process failed"
                                                                 : "OpenBLAS at its best kernel here, " + best->core));
        fmt::print("  step 7: {}\n\n", measured("{}", no_blas                           ? "BLIS skipped (--no-blas)"
                                                    : !ch09::blis_lib_available()     ? "BLIS skipped, " + ch09::blis_lib_unavailable_reason()
                                                    : best == nullptr                 ? "BLIS skipped, its process failed"
                                                                                      : best->blis_lib));
        out["tiling"] = tiling_study(p, isa, runs, scale, progress);
        out["steps"] = jsteps;
        out["tile"] = tile;
        out["blocking"] = {{"kernel", kernel.name}, {"mr", kernel.mr}, {"nr", kernel.nr}, {"mc", blocks.mc},
                           {"kc", blocks.kc},       {"nc", blocks.nc}};

        // 4. Where the blocks of step 6 come from.
        print_blocks(kernel, rule, trials, blocks, s.flops(), out);
        fmt::print("  caches used: {}\n\n", measured("{}", blocking_caches(machine)));

        // 5. The roofline.
        fmt::print("5. Roofline: FLOPs per byte of memory traffic (a model for matrices larger than the caches)\n");
        cachebook::Table roof({"step", "FLOPs/byte", "roof GFLOPS", "measured", "% of roof"});
        for (const auto& r : steps) {
            if (r.intensity <= 0) continue;
            if (r.seconds <= 0) {  // not run: --threads 1
                roof.row({r.label, measured("{:.3g}", r.intensity), measured("-"), measured("-"), measured("-")});
                continue;
            }
            const double gflops = s.flops() / r.seconds / 1e9;
            const double bound = std::min(r.threads == 1 ? peak_core : peak_all, r.intensity * bandwidth);
            roof.row({r.label, measured("{:.3g}", r.intensity), measured("{:.1f}", bound), measured("{:.2f}", gflops),
                      measured("{:.0f}", 100 * gflops / bound)});
        }
        fmt::print("{}", roof.render());
        fmt::print("  roof = min(peak, FLOPs/byte x {} GB/s)\n\n", measured("{:.1f}", bandwidth));

        // 6. Step 6 beside the libraries, and the goals.
        print_goals(cores, best_core, default_core, threads, s.flops(), peak_core, n, out);

        // Options: the challenges at the end of the course notes.
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
            for (Isa i : ch09::kAllIsas) {
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
