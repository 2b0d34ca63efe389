// ch04_tiling: prints what chapter 4 shows, one function per numbered section.
// The lesson is tiling.cpp, the experiment lab.cpp; each result is written once, through cachebook::Report.
#include <fmt/format.h>

#include <cmath>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/prefetch.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"
#include "tiling.hpp"

namespace {

using cachebook::Report;
using cachebook::Value;

struct Options {
    std::int64_t n = 512, tile = 0, runs = 6, transpose_n = 2048, study_n = 73;
    std::string data;
    ch04::StudyData study;  // read before any long work
};

// Reads the study's columns, so that a bad file fails before any long work.
void read_study_data(Options& options) {
    options.study = ch04::read_study_data(options.data);
    const auto study_n = static_cast<std::size_t>(options.study_n);
    for (const auto& series : options.study.series)
        if (series.values.size() < 2 * study_n - 1)
            throw cachebook::UsageError(fmt::format("--study-n {}: column '{}' has {} values, {} needed", study_n,
                                                    series.name, series.values.size(), 2 * study_n - 1));
}

// Parses and checks the options; an exit status when the program should stop now.
std::optional<int> parse(cachebook::Cli& cli, Options& options, int argc, char** argv) {
    cli.add_int("--n", options.n, "Order of the matrices multiplied for real", 16, 4096);
    cli.add_int("--tile", options.tile, "Tile of the blocked product (0: from this machine's L1 by 3 T^2 S <= 3/4 L1)",
                0, 4096);
    cli.add_int("--runs", options.runs, "Timed runs of each measurement (the minimum is reported)", 1, 100);
    cli.add_int("--transpose-n", options.transpose_n, "Order of the matrix transposed for real", 16, 32768);
    cli.add_int("--study-n", options.study_n, "Order of the lag matrix of the study", 2, 1024);
    cli.add_string("--data", options.data, "CSV file of the study (default: matplotlib's sample Stocks.csv)");
    if (auto status = cli.parse(argc, argv)) return status;
    auto& app = cli.app();
    if (cli.quick()) {
        if (app.count("--n") == 0) options.n = 256;
        if (app.count("--runs") == 0) options.runs = 1;
        if (app.count("--transpose-n") == 0) options.transpose_n = 1024;
    }
    if (options.tile > options.n)
        throw cachebook::UsageError(fmt::format("--tile {} exceeds --n {}", options.tile, options.n));
    const auto n = static_cast<std::uint64_t>(options.n);
    const auto transpose_n = static_cast<std::uint64_t>(options.transpose_n);
    cachebook::require_memory(4 * n * n * sizeof(double), "--n");
    cachebook::require_memory(3 * transpose_n * transpose_n * sizeof(double), "--transpose-n");
    read_study_data(options);
    return std::nullopt;
}

std::string three(double value) {
    return fmt::format("{:.3f}", value);
}
// The tile bound as printed: rounded down to one decimal.
std::string bound_text(double bound) {
    return fmt::format("{:.1f}", std::floor(bound * 10) / 10);
}
std::string tile_key(std::size_t tile) {
    return tile == 0 ? "none" : fmt::format("t{}", tile);
}

// The step at which each cell of an n x n matrix is visited, as a grid.
void visit_grid(Report& report, std::size_t n, std::size_t tile) {
    const auto step = ch04::visit_steps(n, tile);
    for (std::size_t i = 0; i < n; ++i) {
        std::string row = "    ";
        for (std::size_t j = 0; j < n; ++j) row += fmt::format("{:3}", step[i * n + j]);
        report.line("{}", row);
    }
}

// The two lines of a tile choice, recorded under `key`; `measured` for this machine's L1d.
void tile_choice_lines(Report& report, const ch04::TileChoice& choice, const std::string& key, bool measured) {
    const auto value = [&](const char* field, nlohmann::json json, std::string text) {
        return measured ? Value::measured_as(key + "." + field, std::move(json), std::move(text))
                        : Value::exact_as(key + "." + field, std::move(json), std::move(text));
    };
    const std::string bound = bound_text(choice.bound);
    const std::string estimate = fmt::format("{:.4f}", choice.estimate);
    report.line("  3 x T^2 x {} <= 3/4 x {} B  =>  T <= {}  =>  T = {} (largest power of two dividing N = {})",
                choice.elem, value("cache_bytes", choice.cache_bytes, fmt::format("{}", choice.cache_bytes)),
                value("bound", bound, bound), value("tile", choice.tile, fmt::format("{}", choice.tile)),
                Value::exact(key + ".n", choice.n));
    report.line("  three tiles: {} B = {} KiB; misses per iteration (tiles of A and B): 2 / (8 x T) = {}",
                value("three_tiles", choice.three_tiles, fmt::format("{}", choice.three_tiles)),
                // The unit stays outside the value: the golden file masks the number only.
                value("three_tiles_kib", choice.three_tiles / 1024,
                      fmt::format("{:g}", static_cast<double>(choice.three_tiles) / 1024)),
                value("estimate", estimate, estimate));
    report.record(key + ".cache_kib", choice.cache_bytes / 1024);
}

// The tile lines in the same shape when the machine reports no L1d.
void unknown_tile_lines(Report& report, std::size_t n) {
    const auto unknown = Value::unknown("", "unknown");
    report.line("  3 x T^2 x 8 <= 3/4 x {} B  =>  T <= {}  =>  T = {} (largest power of two dividing N = {})", unknown,
                unknown, unknown, n);
    report.line("  three tiles: {} B = {} KiB; misses per iteration (tiles of A and B): 2 / (8 x T) = {}", unknown,
                unknown, unknown);
    report.record("machine_tile", nullptr);
}

void visits_section(Report& report) {
    report.section("The order of visits in a 4 x 4 matrix: the step at which each cell is read");
    report.line("  plain:");
    visit_grid(report, 4, 0);
    report.line("  tile 2:");
    visit_grid(report, 4, 2);
}

// The tile of the blocked product: --tile, else this machine's L1d's, else the course notes' L1's.
std::size_t tile_section(Report& report, const Options& options) {
    const auto n = static_cast<std::size_t>(options.n);
    report.section("The tile from the L1's size: three T x T tiles of doubles in three quarters of it");
    report.line("  the course notes' L1, 32 KiB:");
    tile_choice_lines(report, ch04::tile_from_cache(32 * 1024, 512), "l1_32kib_tile", false);
    const auto floats = ch04::tile_from_cache(48 * 1024, 512, 4), doubles = ch04::tile_from_cache(48 * 1024, 512, 8);
    report.record("rule_48kib", {{"float", floats.tile},
                                 {"float_bound", bound_text(floats.bound)},
                                 {"double", doubles.tile},
                                 {"double_bound", bound_text(doubles.bound)}});
    const auto& machine = cachebook::machine();
    const auto l1 = machine.data_cache(1);
    const auto mine = ch04::machine_tile(machine, n);
    report.line("  this machine's L1d, {}, N = {}:",
                l1 ? Value::measured_as("", l1->size_bytes, cachebook::size_text(l1->size_bytes))
                   : Value::unknown("", "unknown"),
                n);
    if (mine)
        tile_choice_lines(report, *mine, "machine_tile", true);
    else
        unknown_tile_lines(report, n);
    const auto source = cachebook::source_name(l1 ? l1->source : cachebook::Source::unknown);
    report.line(
        "  where it comes from: {}",
        Value::measured_as("machine_tile_source", source,
                           l1 ? source : machine.why_unknown("the L1d") + "; the tile below is the course notes'"));
    const auto tile = ch04::blocked_tile(static_cast<std::size_t>(options.tile), n, mine);
    ch04::tile_sets_lines(report, n, tile);
    return tile;
}

void print_stepper(Report& report, const ch04::MatmulStepper& run, const std::string& walk) {
    report.line("  {}, {}-line cache: {} misses (A {}, B {}, C {}), {} hits", walk, run.cache_lines, run.misses,
                run.misses_of[0], run.misses_of[1], run.misses_of[2], run.hits);
    report.line("{} A, B, C of each iteration (M miss, H hit)", run.tile == 0 ? "     i        " : "    ii jj kk  ");
    for (const auto& group : ch04::stepper_groups(run)) {
        const std::string where = run.tile == 0 ? fmt::format("    {:2}        ", group.row)
                                                : fmt::format("    {:2} {:2} {:2}  ", group.ii, group.jj, group.kk);
        report.line("{} {}  {} misses", where, ch04::stepper_marks(run, group.first, group.first + group.count),
                    group.misses);
    }
}

void stepper_section(Report& report) {
    const std::size_t n = 4, tile = 2;
    const auto cache = ch04::stepper_cache(tile);
    const auto formula = ch04::tile_from_cache(cache.cache_bytes(), n);
    const auto exact = [](const std::string& key, const auto& value) {
        return Value::exact("stepper_cache." + key, value);
    };
    report.section("The tile stepper: C = A x B on {0} x {0} doubles, A, B, C one after another, tiles of {1}",
                   exact("n", n), exact("tile", tile));
    report.line(
        "  one line = one row of a tile = {} B; three tiles = {} lines, 3/4 of a cache of {} lines "
        "({} B)",
        exact("line_bytes", cache.line_bytes), exact("three_tiles_lines", cache.three_tiles_lines),
        exact("cache_lines", cache.cache_lines), exact("cache_bytes", cache.cache_bytes()));
    report.line("  the tile rule on that cache: 3 x T^2 x {} <= 3/4 x {} B  =>  T <= {}  =>  T = {}",
                exact("elem", cache.elem), cache.cache_bytes(), exact("bound", bound_text(formula.bound)),
                exact("formula_tile", formula.tile));
    report.record("stepper_cache.three_tiles_bytes", 3 * tile * tile * cache.elem);
    const auto notes_model = ch04::stepper_cache(8);
    report.line("  the same proportions with T = {} give the course notes' model: {} B lines, {} of {} lines",
                exact("notes_model.tile", notes_model.tile), exact("notes_model.line_bytes", notes_model.line_bytes),
                exact("notes_model.three_tiles_lines", notes_model.three_tiles_lines),
                exact("notes_model.cache_lines", notes_model.cache_lines));
    const auto tiled = ch04::run_matmul_stepper(n, tile, cache.elem, cache.line_bytes, cache.cache_lines);
    const auto untiled = ch04::run_matmul_stepper(n, 0, cache.elem, cache.line_bytes, cache.cache_lines);
    const auto tight = ch04::run_matmul_stepper(n, tile, cache.elem, cache.line_bytes, cache.three_tiles_lines);
    const std::string tiled_name = fmt::format("tiled T = {}", tile);
    print_stepper(report, tiled, tiled_name);
    print_stepper(report, untiled, "untiled ikj");
    print_stepper(report, tight, tiled_name);
    report.record("stepper", {ch04::to_json(tiled, tiled_name), ch04::to_json(untiled, "untiled ikj"),
                              ch04::to_json(tight, tiled_name)});
}

void blocked_section(Report& report, const Options& options, std::size_t tile) {
    const auto n = static_cast<std::size_t>(options.n);
    report.section("Measured: naive ijk against blocked (tile {0}), {1} x {1} doubles, integer-valued data",
                   Value::measured("blocked.tile", tile), Value::exact("blocked.n", n));
    // The prediction comes first: the profile and the model, before either product is timed.
    const auto price = ch04::price_blocked(n, tile);
    report.record("profile", cachebook::profile_json(price.profile));
    const auto timing = ch04::time_blocked(n, tile, static_cast<int>(options.runs));
    report.line("  identical results (memcmp): {}",
                Value::exact_as("blocked.identical", timing.identical, timing.identical ? "yes" : "NO"));
    report.line("  naive ijk: {} ms, blocked: {} ms (minimum of {} runs)",
                Value::measured("blocked.naive_ms", timing.naive.min() * 1e3, "{:.1f}"),
                Value::measured("blocked.blocked_ms", timing.blocked.min() * 1e3, "{:.1f}"),
                Value::exact("blocked.runs", options.runs));
    report.line("  naive / blocked = {}", Value::measured("blocked.speedup", timing.speedup(), "{:.1f}").quoted());
    ch04::padded_lines(report, timing, price, static_cast<int>(options.runs));
    cachebook::report_claim(report, "blocked", "naive / blocked", ch04::blocked_claim(timing));
}

void sweep_section(Report& report, const Options& options, std::size_t pick) {
    const auto n = static_cast<std::size_t>(options.n);
    report.section("Measured: the blocked product for each tile, N = {}", n);
    const auto sweep = ch04::tile_sweep(n, ch04::kSweepTiles, static_cast<int>(options.runs));
    auto table = report.table_of_rows("sweep.points", {"tile", "ms (min)", "3 T^2 x 8 bytes"});
    for (const auto& point : sweep.points)
        table.row({Value::exact("tile", point.tile), Value::measured("ms", point.timing.min() * 1e3, "{:.1f}"),
                   fmt::format("{}", 3 * point.tile * point.tile * 8)});
    table.print();
    report.line("  identical results across tiles: {}",
                Value::exact_as("sweep.identical", sweep.identical, sweep.identical ? "yes" : "NO"));
    const double pick_over_best = sweep.over_best(pick);  // 0 when --tile chose a tile the sweep skips
    const auto best = Value::measured("sweep.best", sweep.best());
    if (pick_over_best > 0) {
        report.line("  fastest tile: {}; the formula's pick: {} ({} x the fastest time)", best,
                    Value::measured("sweep.pick", pick), Value::measured("sweep.pick_over_best", pick_over_best, 2));
    } else {
        report.line("  fastest tile: {}; the formula's pick: {}", best, Value::measured("sweep.pick", pick));
        report.record("sweep.pick_over_best", pick_over_best);
    }
    // Whether the largest tile lost, and by how much: the prose says what this run showed.
    report.record("sweep.largest", sweep.points.back().tile);
    report.record("sweep.largest_over_best", sweep.over_best(sweep.points.back().tile));
}

void transpose_model_section(Report& report) {
    const auto cache = cachebook::CacheConfig::fully_associative(32, 64);
    report.section("Transpose dst[j][i] = src[i][j], N = 64 doubles, fully associative LRU cache of 32 lines");
    auto table = report.table({"walk", "src misses / element", "dst misses / element", "total"});
    for (std::size_t tile : {0u, 8u}) {
        const auto rate = ch04::transpose_rate(64, tile, cache);
        const std::string key = tile == 0 ? "transpose_model.naive." : "transpose_model.tiled.";
        table.row({tile == 0 ? "naive" : fmt::format("tiled T={}", tile), Value::exact(key + "src", three(rate.src)),
                   Value::exact(key + "dst", three(rate.dst)), Value::exact(key + "total", three(rate.total()))});
    }
    table.print();
}

// The lab's misses_by_tile and best_tile, in the lab's cache.
void lab_section(Report& report) {
    const auto cache = ch04::lab_cache();
    const auto lab = ch04::tile_table(73, ch04::kModelTiles, cache);
    report.section("The lab's transpose: misses_by_tile and best_tile");
    report.line("  misses_by_tile: transpose of 73 x 73 doubles, B right after A");
    report.line("  cache: {}", cache.describe());
    auto table = report.table({"tile", "none", "4", "8", "16", "32"});
    std::vector<Value> cells = {"misses"};
    for (const auto& [tile, count] : lab.misses)
        cells.push_back(Value::exact("misses_by_tile." + tile_key(tile), count));
    table.row(cells);
    table.print();
    report.line("  best_tile: {} ({}x fewer misses than none)", Value::exact("misses_by_tile.best", lab.best),
                Value::exact("misses_by_tile.gain", lab.gain, 2));
    report.record("misses_by_tile.largest", ch04::kModelTiles.back());
    ch04::kinds_table(report, 73, cache);
}

void transpose_section(Report& report, const Options& options) {
    const auto n = static_cast<std::size_t>(options.transpose_n);
    const auto& machine = cachebook::machine();
    const auto l2 = machine.data_cache(2);
    report.section("Measured: transpose of {0} x {0} doubles ({1} MiB each; this machine's L2: {2})",
                   Value::exact("transpose.n", n), Value::exact("transpose.mib", n * n * 8 >> 20),
                   l2 ? Value::measured_as("", l2->size_bytes,
                                           fmt::format("{}, from {}", cachebook::size_text(l2->size_bytes),
                                                       cachebook::source_name(l2->source)))
                      : Value::unknown("", machine.why_unknown("the L2")));
    auto table = report.table({"tile", "naive ms", "tiled ms", "naive / tiled", "identical"});
    cachebook::ClaimResult claim;                  // the claim is made of T = 8
    std::pair<double, std::size_t> fastest{0, 8};  // (speed-up, tile) of the fastest tile
    for (std::size_t tile : {8u, 16u, 32u}) {
        const auto timing = ch04::time_transpose(n, tile, static_cast<int>(options.runs));
        if (tile == 8) claim = ch04::transpose_claim(timing);
        fastest = std::max(fastest, std::pair{timing.speedup(), tile});
        const std::string key = fmt::format("transpose.t{}.", tile);
        auto speedup = Value::measured(key + "speedup", timing.speedup(), "{:.2f}");
        table.row({fmt::format("{}", tile), Value::measured(key + "naive_ms", timing.naive.min() * 1e3, "{:.1f}"),
                   Value::measured(key + "tiled_ms", timing.tiled.min() * 1e3, "{:.1f}"), speedup.quoted(),
                   Value::exact_as(key + "identical", timing.identical, timing.identical ? "yes" : "NO")});
    }
    table.print();
    report.record("transpose.best", fastest.second);
    const auto l1 = machine.data_cache(1);  // 0 ways: not reported
    report.record("transpose.l1_ways", l1 ? l1->ways : 0);
    cachebook::report_claim(report, "transpose", "naive / tiled (T = 8)", claim);
}

void study_section(Report& report, Options& options) {
    const auto n = static_cast<std::size_t>(options.study_n);
    const auto cache = ch04::lab_cache();
    report.section("The study: a {0} x {0} lag matrix A[i][j] = s[i + j] of a series, transposed for real",
                   Value::exact("study.n", n));
    report.line("   while the cache model ({}) sees every address it touches", cache.describe());
    if (options.study.series.empty())
        report.line("  {} is not installed: only generated series below (make deps installs it)", ch04::kStudyFile);
    else
        report.line("  data: {}", options.study.note);
    report.record("study.data", options.study.note);
    options.study.series.push_back(ch04::random_walk(2 * n - 1, 7));
    auto table = report.table_of_rows("study.series", {"series", "s[0]", "s[2n-2]", "row", "column", "untiled", "4",
                                                       "8", "16", "32", "best", "correct"});
    std::vector<ch04::Study> results;
    for (const auto& series : options.study.series) {
        const auto& result = results.emplace_back(ch04::study(series, n, ch04::kModelTiles, cache));
        std::vector<Value> cells = {Value::exact("name", result.name), fmt::format("{:.2f}", result.first),
                                    fmt::format("{:.2f}", result.last), Value::exact("row", result.orders.row),
                                    Value::exact("column", result.orders.column)};
        for (const auto& [tile, count] : result.by_tile)
            cells.push_back(Value::exact("by_tile." + tile_key(tile), count));
        cells.push_back(Value::exact("best", result.best));
        cells.push_back(Value::exact_as("transposed", result.transposed, result.transposed ? "yes" : "NO"));
        table.row(cells, {{"values", 2 * n - 1}});
    }
    table.print();
    const bool same = ch04::same_counts(results);
    report.line("  the same counts for every series: {}",
                Value::exact_as("study.same_counts", same, same ? "yes" : "NO"));
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch04_tiling", [&] {
        cachebook::Cli cli("ch04_tiling",
                           "Chapter 4: blocking; the blocked product, the tile from the L1, the tiled "
                           "transpose and a study on a real series");
        Options options;
        if (auto status = parse(cli, options, argc, argv)) return *status;
        Report report("Chapter 4 · Blocking");
        visits_section(report);
        const std::size_t tile = tile_section(report, options);
        stepper_section(report);
        cachebook::Progress progress("measuring", 4);
        blocked_section(report, options, tile);
        progress.step("naive vs blocked");
        sweep_section(report, options, tile);
        progress.step("tile sweep");
        transpose_model_section(report);
        lab_section(report);
        transpose_section(report, options);
        progress.step("transpose");
        study_section(report, options);
        ch04::prefetch_section(report);
        ch04::oblivious_model_section(report);
        ch04::oblivious_timing_section(
            report, {static_cast<std::size_t>(options.n), static_cast<std::size_t>(options.transpose_n), tile,
                     static_cast<int>(options.runs)});
        progress.step("recursive walks");
        report.save(cli.json_path());
        return 0;
    });
}
