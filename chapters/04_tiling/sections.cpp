// Chapter 4's output, sections 1 to 8, one function per numbered section, in the order printed:
// each figure a Value made once, with its JSON key. Sections 9 to 12, the second page's, follow in
// sections_beyond.cpp. main.cpp calls them; the lab (lab.cpp, lab_oblivious.cpp) computes what they print.
#include "sections.hpp"

#include <fmt/format.h>

#include <cmath>
#include <tuple>

#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/walks.hpp"

namespace ch04 {

using cachebook::Report;
using cachebook::Value;

namespace {

std::string three(double value) {
    return fmt::format("{:.3f}", value);
}
// The tile bound as printed: rounded down to one decimal.
std::string bound_text(double bound) {
    return fmt::format("{:.1f}", std::floor(bound * 10) / 10);
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
                Value::exact(key + ".elem", choice.elem),
                value("cache_bytes", choice.cache_bytes, fmt::format("{}", choice.cache_bytes)),
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

}  // namespace

std::string tile_key(std::size_t tile) {
    return tile == 0 ? "none" : fmt::format("t{}", tile);
}

void visits_section(Report& report) {
    report.section("The order of visits in a 4 x 4 matrix: the step at which each cell is read");
    report.line("  plain:");
    visit_grid(report, 4, 0);
    report.line("  tile 2:");
    visit_grid(report, 4, 2);
}

namespace {
// Where one T x T tile's rows fall in this machine's L1d, at the leading dimension N and at N plus
// one line: the tile rule assumes they spread over the sets. Counted from the matrix's first byte
// as the start of a page.
void tile_sets_lines(Report& report, std::size_t n, std::size_t tile) {
    const auto l1 = cachebook::cache_config(cachebook::machine().data_cache(1));
    const std::size_t padded_n = n + 64 / sizeof(double);  // one line of 64 bytes, as padded_lines times
    report.record("tile_sets.tile", tile);
    if (!l1) {  // the same two lines, every figure unknown
        for (const char* key : {"tile_sets.l1", "tile_sets.power", "tile_sets.padded"}) report.record(key, nullptr);
        const auto unknown = Value::unknown("", "unknown");
        for (const auto& [label, leading, key] : {std::tuple{"rows of N", n, "tile_sets.n"},
                                                  std::tuple{"rows of N + one line", padded_n, "tile_sets.padded_n"}})
            report.line("  one tile's {} lines, {} = {} doubles: L1d sets {} ({} of {} sets, room for {} lines)",
                        unknown, label, Value::exact(key, leading), unknown, unknown, unknown, unknown);
        return;
    }
    report.record("tile_sets.l1", {{"sets", l1->sets}, {"ways", l1->ways}, {"line_bytes", l1->line_bytes}});
    for (const auto& [label, leading, key, n_key] :
         {std::tuple{"rows of N", n, "tile_sets.power", "tile_sets.n"},
          std::tuple{"rows of N + one line", padded_n, "tile_sets.padded", "tile_sets.padded_n"}}) {
        const auto sets = cachebook::block_sets(*l1, 0, tile, tile * sizeof(double), leading * sizeof(double));
        report.line("  one tile's {} lines, {} = {} doubles: L1d sets {} ({} of {} sets, room for {} lines)",
                    Value::measured(std::string(key) + ".lines", sets.lines), label, Value::exact(n_key, leading),
                    Value::measured(std::string(key) + ".set_list", cachebook::set_list(sets.sets)),
                    Value::measured(std::string(key) + ".sets", sets.sets.size()),
                    Value::measured(std::string(key) + ".l1_sets", l1->sets),
                    Value::measured(std::string(key) + ".room", sets.room));
    }
}
}  // namespace

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
                l1 ? Value::measured_as("l1d_bytes", l1->size_bytes, cachebook::size_text(l1->size_bytes))
                   : Value::unknown("l1d_bytes", "unknown"),
                Value::exact("tile_n", n));
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

namespace {
// `key`: where its totals are recorded.
void print_stepper(Report& report, const ch04::MatmulStepper& run, const std::string& walk, const std::string& key) {
    const auto exact = [&](const char* field, std::uint64_t value) { return Value::exact(key + "." + field, value); };
    report.line("  {}, {}-line cache: {} misses (A {}, B {}, C {}), {} hits", walk,
                exact("cache_lines", run.cache_lines), exact("misses", run.misses), exact("a", run.misses_of[0]),
                exact("b", run.misses_of[1]), exact("c", run.misses_of[2]), exact("hits", run.hits));
    report.line("{} A, B, C of each iteration (M miss, H hit)", run.tile == 0 ? "     i        " : "    ii jj kk  ");
    for (const auto& group : ch04::stepper_groups(run)) {
        const std::string where = run.tile == 0 ? fmt::format("    {:2}        ", group.row)
                                                : fmt::format("    {:2} {:2} {:2}  ", group.ii, group.jj, group.kk);
        report.line("{} {}  {} misses", where, ch04::stepper_marks(run, group.first, group.first + group.count),
                    group.misses);
    }
}
}  // namespace

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
    print_stepper(report, tiled, tiled_name, "stepper_totals.tiled");
    print_stepper(report, untiled, "untiled ikj", "stepper_totals.untiled");
    print_stepper(report, tight, tiled_name, "stepper_totals.tight");
    report.record("stepper", {ch04::to_json(tiled, tiled_name), ch04::to_json(untiled, "untiled ikj"),
                              ch04::to_json(tight, tiled_name)});
}

namespace {
// The two products again at N plus one line of doubles, whose tiles spread over the L1's sets:
// time per multiply-add beside the power-of-two size's.
void padded_lines(Report& report, const BlockedTiming& timing, const BlockedPrice& price, int runs) {
    const std::size_t n = timing.n, padded = price.padded;
    const auto again = time_blocked(padded, timing.tile, table_runs(runs, kPaddedSeconds));
    const auto per_madd = [](double seconds, std::size_t size) {
        return seconds * 1e9 / cachebook::multiply_adds(size);
    };
    report.line("  ns per multiply-add, N = {} against N = {} (rows one line longer), same tile:",
                Value::exact("blocked.padded.power_n", n), Value::exact("blocked.padded.n", padded));
    report.line("    naive ijk: {} against {}",
                Value::measured("blocked.padded.naive_power_ns", per_madd(timing.naive.min(), n), "{:.2f}"),
                Value::measured("blocked.padded.naive_ns", per_madd(again.naive.min(), padded), "{:.2f}"));
    report.line("    blocked:   {} against {}",
                Value::measured("blocked.padded.blocked_power_ns", per_madd(timing.blocked.min(), n), "{:.2f}"),
                Value::measured("blocked.padded.blocked_ns", per_madd(again.blocked.min(), padded), "{:.2f}"));
    report.line("  priced from this machine's profile before the timing (the appendix Priced):");
    report.line("    {}", Value::measured("blocked.padded.levels", cachebook::levels_text(price.machine)));
    const char* const left_out = "the core's own work (the multiply-adds), C's stores, and the TLB";
    for (const auto& [key, what, power, padded_p, timed_power, timed_padded] :
         {std::tuple{"naive", "naive ijk", &price.naive, &price.naive_padded, &timing.naive, &again.naive},
          std::tuple{"blocked", "blocked", &price.blocked, &price.blocked_padded, &timing.blocked, &again.blocked}})
        for (const auto& claim :
             cachebook::padded_claims({key, what, fmt::format("N = {}", n), fmt::format("N = {}", padded),
                                       "a multiply-add", *power, *padded_p, cachebook::multiply_adds(n),
                                       cachebook::multiply_adds(padded), per_madd(timed_power->min(), n),
                                       per_madd(timed_padded->min(), padded), left_out, price.machine.why_not}))
            cachebook::report_priced(report, claim, claim.key.ends_with("over_padded") ? "{:.2f}x" : "{:.2f} ns");
}
}  // namespace

void blocked_section(Report& report, const Options& options, std::size_t tile) {
    const auto n = static_cast<std::size_t>(options.n);
    report.section("Measured: naive ijk against blocked (tile {0}), {1} x {1} doubles, integer-valued data",
                   Value::measured("blocked.tile", tile), Value::exact("blocked.n", n));
    // The prediction comes first: the profile and the model, before either product is timed.
    const auto price = ch04::price_blocked(n, tile);
    report.record("profile", cachebook::profile_json(price.profile));
    const auto timing = ch04::time_blocked(
        n, tile, ch04::claim_runs(ch04::kBlockedClaim, static_cast<int>(options.runs), options.quick));
    report.line("  identical results (memcmp): {}",
                Value::exact_as("blocked.identical", timing.identical, timing.identical ? "yes" : "NO"));
    report.line("  naive ijk: {} ms, blocked: {} ms (minimum of {} runs)",
                Value::measured("blocked.naive_ms", timing.naive.min() * 1e3, "{:.1f}"),
                Value::measured("blocked.blocked_ms", timing.blocked.min() * 1e3, "{:.1f}"),
                Value::exact("blocked.runs", timing.naive.runs.size()));
    report.line("  naive / blocked = {}", Value::measured("blocked.speedup", timing.speedup(), "{:.1f}").quoted());
    ch04::padded_lines(report, timing, price, static_cast<int>(options.runs));
    cachebook::report_experiment(report, timing.claim);
    report.record("quick_claim_runs", ch04::kQuickClaimRuns);  // the tests' runs a side
}

void sweep_section(Report& report, const Options& options, std::size_t pick) {
    const auto n = static_cast<std::size_t>(options.n);
    report.section("Measured: the blocked product for each tile, N = {}", Value::exact("sweep.n", n));
    const auto sweep = ch04::tile_sweep(n, ch04::kSweepTiles,
                                        ch04::table_runs(static_cast<int>(options.runs), ch04::kSweepSeconds).budget);
    auto table = report.table_of_rows("sweep.points", {"tile", "ms (min)", "3 T^2 x 8 bytes"});
    for (const auto& point : sweep.points)
        table.row({Value::exact("tile", point.tile), Value::measured("ms", point.timing.min() * 1e3, "{:.1f}"),
                   Value::exact("three_tiles_bytes", 3 * point.tile * point.tile * 8)});
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

namespace {
void kinds_table(Report& report, std::size_t n, const cachebook::CacheConfig& cache) {
    report.line("  why each walk misses: compulsory, capacity and conflict misses, and the fewest misses any");
    report.line("  replacement could take (Belady's OPT), beside LRU's:");
    auto table = report.table_of_rows(
        "miss_kinds", {"tile", "LRU misses", "compulsory", "fully assoc. LRU", "capacity", "conflict", "OPT"});
    for (const auto& w : transpose_kinds(n, kModelTiles, cache))
        table.row({Value::exact("walk", w.walk), Value::exact("misses", w.kinds.misses),
                   Value::exact("compulsory", w.kinds.compulsory),
                   Value::exact("fully_associative", w.fully_associative), Value::exact("capacity", w.kinds.capacity),
                   Value::exact("conflict", w.kinds.conflict), Value::exact("optimal", w.optimal)});
    table.print();
}
}  // namespace

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
                   l2 ? Value::measured_as("transpose.l2_bytes", l2->size_bytes,
                                           fmt::format("{}, from {}", cachebook::size_text(l2->size_bytes),
                                                       cachebook::source_name(l2->source)))
                      : Value::unknown("transpose.l2_bytes", machine.why_unknown("the L2")));
    auto table = report.table({"tile", "naive ms", "tiled ms", "naive / tiled", "identical"});
    cachebook::ExperimentResult claim;             // the claim is made of T = 8
    std::pair<double, std::size_t> fastest{0, 8};  // (speed-up, tile) of the fastest tile
    for (std::size_t tile : {8u, 16u, 32u}) {
        const auto runs = static_cast<int>(options.runs);
        const auto timing =
            ch04::time_transpose(n, tile,
                                 tile == 8 ? ch04::claim_runs(ch04::kTransposeClaim, runs, options.quick)
                                           : ch04::table_runs(runs, ch04::kTransposeSeconds));
        if (tile == 8) claim = timing.claim;
        fastest = std::max(fastest, std::pair{timing.speedup(), tile});
        const std::string key = fmt::format("transpose.t{}.", tile);
        auto speedup = Value::measured(key + "speedup", timing.speedup(), "{:.2f}");
        table.row({Value::exact(key + "tile", tile),
                   Value::measured(key + "naive_ms", timing.naive.min() * 1e3, "{:.1f}"),
                   Value::measured(key + "tiled_ms", timing.tiled.min() * 1e3, "{:.1f}"), speedup.quoted(),
                   Value::exact_as(key + "identical", timing.identical, timing.identical ? "yes" : "NO")});
    }
    table.print();
    report.record("transpose.best", fastest.second);
    const auto l1 = machine.data_cache(1);  // 0 ways: not reported
    report.record("transpose.l1_ways", l1 ? l1->ways : 0);
    cachebook::report_experiment(report, claim);
}

}  // namespace ch04
