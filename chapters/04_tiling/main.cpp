// ch04_tiling: prints what chapter 4 shows. Logic lives in tiling.cpp.
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "cachebook/trace.hpp"
#include "tiling.hpp"

namespace {

constexpr const char* kDefaultData = "/usr/share/matplotlib/mpl-data/sample_data/Stocks.csv";

std::string three(double v) { return fmt::format("{:.3f}", v); }

// The step at which each cell of an n x n matrix is visited, as a grid.
void print_visit_grid(std::size_t n, std::size_t tile) {
    const auto order = cachebook::visit_order(n, tile);
    std::vector<std::size_t> step(n * n);
    for (std::size_t s = 0; s < order.size(); ++s) step[order[s].first * n + order[s].second] = s;
    for (std::size_t i = 0; i < n; ++i) {
        std::string row = "    ";
        for (std::size_t j = 0; j < n; ++j) row += fmt::format("{:3}", step[i * n + j]);
        fmt::print("{}\n", row);
    }
}

nlohmann::json tile_json(const ch04::TileChoice& t) {
    return {{"cache_bytes", t.cache_bytes}, {"cache_kib", t.cache_bytes / 1024},   {"bound", fmt::format("{:.1f}", std::floor(t.bound * 10) / 10)},
            {"tile", t.tile},               {"three_tiles", t.three_tiles},         {"three_tiles_kib", t.three_tiles / 1024},
            {"n", t.n},                     {"estimate", fmt::format("{:.4f}", t.estimate)}};
}

void print_tile_choice(const ch04::TileChoice& t, bool machine) {
    auto m = [&](std::string s) { return machine ? cachebook::measured("{}", s) : s; };
    fmt::print("  3 x T^2 x {} <= {} B  =>  T <= {}  =>  T = {} (largest power of two dividing N = {})\n", t.elem,
               m(fmt::format("{}", t.cache_bytes)), m(fmt::format("{:.1f}", std::floor(t.bound * 10) / 10)), m(fmt::format("{}", t.tile)),
               t.n);
    fmt::print("  three tiles: {} B = {} KiB; estimated misses per iteration 2 / (8 x T) = {}\n",
               m(fmt::format("{}", t.three_tiles)), m(fmt::format("{:g}", static_cast<double>(t.three_tiles) / 1024)),
               m(fmt::format("{:.4f}", t.estimate)));
}

// The tile lines in the same shape when the machine reports no L1d.
void print_tile_unknown(std::size_t n) {
    const auto u = cachebook::measured("unknown");
    fmt::print("  3 x T^2 x 8 <= {} B  =>  T <= {}  =>  T = {} (largest power of two dividing N = {})\n", u, u, u, n);
    fmt::print("  three tiles: {} B = {} KiB; estimated misses per iteration 2 / (8 x T) = {}\n", u, u, u);
}

void print_stepper(const ch04::MatmulStepper& run, const std::string& walk) {
    fmt::print("  {}, {}-line cache: {} misses (A {}, B {}, C {}), {} hits\n", walk, run.cache_lines, run.misses,
               run.misses_of[0], run.misses_of[1], run.misses_of[2], run.hits);
    fmt::print("{} A, B, C of each iteration (M miss, H hit)\n", run.tile == 0 ? "     i        " : "    ii jj kk  ");
    for (const auto& g : ch04::stepper_groups(run)) {
        const std::string where =
            run.tile == 0 ? fmt::format("    {:2}        ", g.row) : fmt::format("    {:2} {:2} {:2}  ", g.ii, g.jj, g.kk);
        fmt::print("{} {}  {} misses\n", where, ch04::stepper_marks(run, g.first, g.first + g.count), g.misses);
    }
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch04_tiling", [&] {
        cachebook::Cli cli("ch04_tiling", "Chapter 4: blocking; the blocked product, the tile from the L1, the tiled "
                                          "transpose and a study on a real series");
        std::int64_t n = 512, tile = 0, runs = 3, transpose_n = 2048, study_n = 73;
        std::string data;
        cli.add_int("--n", n, "Order of the matrices multiplied for real", 16, 4096);
        cli.add_int("--tile", tile, "Tile of the blocked product (0: from this machine's L1 by 3 T^2 S <= L1)", 0, 4096);
        cli.add_int("--runs", runs, "Timed runs of each measurement (the minimum is reported)", 1, 100);
        cli.add_int("--transpose-n", transpose_n, "Order of the matrix transposed for real", 16, 32768);
        cli.add_int("--study-n", study_n, "Order of the lag matrix of the study", 2, 1024);
        cli.add_string("--data", data, "CSV file of the study (default: matplotlib's sample Stocks.csv)");
        if (auto status = cli.parse(argc, argv)) return *status;
        auto& app = cli.app();
        if (cli.quick()) {
            if (app.count("--n") == 0) n = 256;
            if (app.count("--runs") == 0) runs = 1;
            if (app.count("--transpose-n") == 0) transpose_n = 1024;
        }
        if (tile > n) throw cachebook::UsageError(fmt::format("--tile {} exceeds --n {}", tile, n));
        const auto size = static_cast<std::size_t>(n);
        const auto tn = static_cast<std::size_t>(transpose_n);
        cachebook::require_memory(4 * size * size * sizeof(double), "--n");
        cachebook::require_memory(3 * tn * tn * sizeof(double), "--transpose-n");
        // The study's data, read before any long work so that a bad file fails at once.
        std::vector<ch04::Series> series;
        std::string data_note;
        const std::vector<std::string> columns = {"^GSPC", "IBM"};
        if (!data.empty()) {
            series = ch04::read_csv_columns(data, columns);
            data_note = data;
        } else if (std::filesystem::exists(kDefaultData)) {
            series = ch04::read_csv_columns(kDefaultData, columns);
            data_note = fmt::format("{} (package python-matplotlib-data)", kDefaultData);
        }
        const auto sn = static_cast<std::size_t>(study_n);
        for (const auto& s : series)
            if (s.values.size() < 2 * sn - 1)
                throw cachebook::UsageError(fmt::format("--study-n {}: column '{}' has {} values, {} needed", sn,
                                                        s.name, s.values.size(), 2 * sn - 1));
        nlohmann::json out;

        fmt::print("Chapter 4 · Blocking\n\n");
        // 1. R6.
        const auto c32 = cachebook::CacheConfig::fully_associative(32, 64);
        fmt::print("1. Transpose dst[j][i] = src[i][j], N = 64 doubles, fully associative LRU cache of 32 lines\n");
        cachebook::Table t6({"walk", "src misses / element", "dst misses / element", "total"});
        out["r6"] = nlohmann::json::object();
        for (std::size_t t : {0u, 8u}) {
            const auto r = ch04::transpose_rate(64, t, c32);
            t6.row({t == 0 ? "naive" : fmt::format("tiled T={}", t), three(r.src), three(r.dst), three(r.total())});
            out["r6"][t == 0 ? "naive" : "tiled"] = {{"src", three(r.src)}, {"dst", three(r.dst)}, {"total", three(r.total())}};
        }
        fmt::print("{}\n", t6.render(2));

        // 2. Seed 002's lab: visit order, misses by tile (R4), best tile.
        fmt::print("2. The order of visits in a 4 x 4 matrix: the step at which each cell is read\n");
        fmt::print("  plain:\n");
        print_visit_grid(4, 0);
        fmt::print("  tile 2:\n");
        print_visit_grid(4, 2);
        const auto small = cachebook::CacheConfig{8, 8, 64};
        const std::vector<std::size_t> tiles = {0, 4, 8, 16, 32};
        const auto r4 = ch04::misses_by_tile(73, tiles, small);
        fmt::print("\n  misses_by_tile: transpose of 73 x 73 doubles, B right after A, cache {}\n", small.describe());
        cachebook::Table t4({"tile", "none", "4", "8", "16", "32"});
        std::vector<std::string> cells = {"misses"};
        out["r4"] = nlohmann::json::object();
        for (const auto& [t, m] : r4) {
            cells.push_back(fmt::format("{}", m));
            out["r4"][t == 0 ? "none" : fmt::format("t{}", t)] = m;
        }
        t4.row(cells);
        fmt::print("{}", t4.render(2));
        const std::size_t best = ch04::best_tile(73, tiles, small);
        fmt::print("  best_tile: {} ({:.2f}x fewer misses than none)\n\n", best,
                   static_cast<double>(r4.front().second) / static_cast<double>(r4.back().second));
        out["r4"]["best"] = best;
        out["r4"]["gain"] = fmt::format("{:.1f}", static_cast<double>(r4.front().second) /
                                                         static_cast<double>(r4.back().second));

        // 3. R7.
        fmt::print("3. The tile from the L1's size: three T x T tiles of doubles must fit\n");
        fmt::print("  the seed's L1, 32 KiB:\n");
        const auto seed_tile = ch04::tile_from_cache(32 * 1024, 512);
        print_tile_choice(seed_tile, false);
        out["r7"] = tile_json(seed_tile);
        const auto& machine = cachebook::machine();
        const auto l1 = machine.data_cache(1);
        const auto mine = ch04::machine_tile(machine, size);
        std::size_t pick = static_cast<std::size_t>(tile);
        fmt::print("  this machine's L1d, {}, N = {}:\n",
                   cachebook::measured("{}", l1 ? fmt::format("{} KiB", l1->size_bytes / 1024) : "unknown"), size);
        if (mine) {
            print_tile_choice(*mine, true);
            if (pick == 0) pick = mine->tile;
        } else {
            print_tile_unknown(size);
            if (pick == 0) pick = ch04::tile_from_cache(32 * 1024, size).tile;
        }
        fmt::print("  where it comes from: {}\n",
                   cachebook::measured("{}", l1 ? cachebook::source_name(l1->source)
                                                : machine.why_unknown("the L1d") + "; the tile below is the seed's"));
        out["r7_machine"] = mine ? tile_json(*mine) : nlohmann::json();
        out["r7_machine_source"] = cachebook::source_name(l1 ? l1->source : cachebook::Source::unknown);
        fmt::print("\n");

        // 4. Naive against blocked, for real.
        fmt::print("4. Measured: naive ijk against blocked (tile {}), {} x {} doubles, integer-valued data\n",
                   cachebook::measured("{}", pick), size, size);
        cachebook::Progress progress("measuring", 3);
        const auto bt = ch04::time_blocked(size, pick, static_cast<int>(runs));
        progress.step("naive vs blocked");
        fmt::print("  identical results (memcmp): {}\n", bt.identical ? "yes" : "NO");
        fmt::print("  naive ijk: {} ms, blocked: {} ms (minimum of {} runs)\n",
                   cachebook::measured("{:.1f}", bt.naive.min() * 1e3), cachebook::measured("{:.1f}", bt.blocked.min() * 1e3),
                   runs);
        fmt::print("  naive / blocked = {}\n\n", cachebook::measured("{:.1f}", bt.speedup()));
        out["blocked"] = {{"n", size},          {"tile", pick},
                          {"identical", bt.identical}, {"naive_ms", bt.naive.min() * 1e3},
                          {"blocked_ms", bt.blocked.min() * 1e3}, {"speedup", bt.speedup()},
                          {"speedup_1", fmt::format("{:.1f}", bt.speedup())}, {"runs", runs}};

        // 5. The sweep.
        const std::vector<std::size_t> sweep_tiles = {8, 16, 24, 32, 48, 64, 96, 128};
        fmt::print("5. Measured: the blocked product for each tile, N = {}\n", size);
        const auto sweep = ch04::tile_sweep(size, sweep_tiles, static_cast<int>(runs));
        progress.step("tile sweep");
        cachebook::Table ts({"tile", "ms (min)", "3 T^2 x 8 bytes"});
        out["sweep"] = {{"identical", sweep.identical}, {"points", nlohmann::json::array()}};
        for (const auto& p : sweep.points) {
            ts.row({fmt::format("{}", p.tile), cachebook::measured("{:.1f}", p.timing.min() * 1e3),
                    fmt::format("{}", 3 * p.tile * p.tile * 8)});
            out["sweep"]["points"].push_back({{"tile", p.tile}, {"ms", p.timing.min() * 1e3}});
        }
        fmt::print("{}", ts.render(2));
        double pick_ms = 0, best_ms = 0;
        for (const auto& p : sweep.points) {
            if (p.tile == pick) pick_ms = p.timing.min();
            if (p.tile == sweep.best()) best_ms = p.timing.min();
        }
        fmt::print("  identical results across tiles: {}\n", sweep.identical ? "yes" : "NO");
        fmt::print("  fastest tile: {}; the formula's pick: {}", cachebook::measured("{}", sweep.best()),
                   cachebook::measured("{}", pick));
        if (pick_ms > 0) fmt::print(" ({} x the fastest time)", cachebook::measured("{:.2f}", pick_ms / best_ms));
        fmt::print("\n\n");
        out["sweep"]["best"] = sweep.best();
        out["sweep"]["pick"] = pick;
        out["sweep"]["pick_over_best"] = pick_ms > 0 ? pick_ms / best_ms : 0.0;

        // 6. Transpose, for real.
        const auto l2 = machine.data_cache(2);
        fmt::print("6. Measured: transpose of {} x {} doubles ({} MiB each; this machine's L2: {})\n", tn, tn,
                   tn * tn * 8 >> 20,
                   cachebook::measured("{}", l2 ? fmt::format("{} KiB, from {}", l2->size_bytes / 1024,
                                                              cachebook::source_name(l2->source))
                                                : machine.why_unknown("the L2")));
        cachebook::Table tt({"tile", "naive ms", "tiled ms", "naive / tiled", "identical"});
        out["transpose"] = {{"n", tn}, {"mib", tn * tn * 8 >> 20}};
        for (std::size_t ttile : {8u, 16u, 32u}) {
            const auto r = ch04::time_transpose(tn, ttile, static_cast<int>(runs));
            tt.row({fmt::format("{}", ttile), cachebook::measured("{:.1f}", r.naive.min() * 1e3),
                    cachebook::measured("{:.1f}", r.tiled.min() * 1e3), cachebook::measured("{:.2f}", r.speedup()),
                    r.identical ? "yes" : "NO"});
            out["transpose"][fmt::format("t{}", ttile)] = {{"naive_ms", r.naive.min() * 1e3},
                                                           {"tiled_ms", r.tiled.min() * 1e3},
                                                           {"speedup", r.speedup()},
                                                           {"speedup_1", fmt::format("{:.1f}", r.speedup())},
                                                           {"identical", r.identical}};
        }
        progress.step("transpose");
        fmt::print("{}\n", tt.render(2));

        // 7. The study.
        fmt::print("7. The study: a {} x {} lag matrix A[i][j] = s[i + j] of a series, transposed for real\n", sn, sn);
        fmt::print("   while the cache model ({}) sees every address it touches\n", small.describe());
        if (series.empty())
            fmt::print("  {} is not installed: only generated series below (tools/deps.sh installs it)\n", kDefaultData);
        else
            fmt::print("  data: monthly closes from {}\n", data_note);
        series.push_back(ch04::random_walk(2 * sn - 1, 7));
        cachebook::Table st({"series", "s[0]", "s[2n-2]", "row", "column", "tile none", "4", "8", "16", "32", "best",
                             "transposed"});
        out["study"] = {{"n", sn}, {"data", data_note}, {"series", nlohmann::json::array()}};
        bool same = true;
        std::vector<std::pair<std::size_t, std::uint64_t>> first_counts;
        for (const auto& s : series) {
            const auto r = ch04::study(s, sn, tiles, small);
            std::vector<std::string> row = {r.name, fmt::format("{:.2f}", r.first), fmt::format("{:.2f}", r.last),
                                            fmt::format("{}", r.orders.row), fmt::format("{}", r.orders.column)};
            for (const auto& [t, m] : r.by_tile) row.push_back(fmt::format("{}", m));
            row.push_back(fmt::format("{}", r.best));
            row.push_back(r.transposed ? "yes" : "NO");
            st.row(row);
            if (first_counts.empty()) first_counts = r.by_tile;
            same = same && r.by_tile == first_counts;
            nlohmann::json by_tile = nlohmann::json::object();
            for (const auto& [t, m] : r.by_tile) by_tile[t == 0 ? "none" : fmt::format("t{}", t)] = m;
            out["study"]["series"].push_back({{"name", r.name},
                                              {"values", 2 * sn - 1},
                                              {"row", r.orders.row},
                                              {"column", r.orders.column},
                                              {"by_tile", by_tile},
                                              {"best", r.best},
                                              {"transposed", r.transposed}});
        }
        fmt::print("{}", st.render(2));
        fmt::print("  the same counts for every series: {}\n", same ? "yes" : "NO");
        out["study"]["same_counts"] = same;

        // 8. The tile stepper.
        const std::size_t sn4 = 4, st2 = 2;
        const auto sc = ch04::stepper_cache(st2);
        const auto sc_tile = ch04::tile_from_cache(sc.cache_bytes(), sn4);
        fmt::print("\n8. The tile stepper: C = A x B on {} x {} doubles, A, B, C one after another, tiles of {}\n", sn4,
                   sn4, st2);
        fmt::print("  one line = one row of a tile = {} B; three tiles = {} lines, three quarters of a cache of {} lines "
                   "({} B)\n",
                   sc.line_bytes, sc.three_tiles_lines, sc.cache_lines, sc.cache_bytes());
        fmt::print("  the tile formula on that cache: 3 x T^2 x {} <= {} B  =>  T <= {:.1f}  =>  T = {}\n", sc.elem,
                   sc.cache_bytes(), std::floor(sc_tile.bound * 10) / 10, sc_tile.tile);
        const auto seed_model = ch04::stepper_cache(8);
        fmt::print("  the same proportions with T = {} give the source text's model: {} B lines, {} of {} lines\n",
                   seed_model.tile, seed_model.line_bytes, seed_model.three_tiles_lines, seed_model.cache_lines);
        const auto tiled = ch04::run_matmul_stepper(sn4, st2, sc.elem, sc.line_bytes, sc.cache_lines);
        const auto untiled = ch04::run_matmul_stepper(sn4, 0, sc.elem, sc.line_bytes, sc.cache_lines);
        const auto tight = ch04::run_matmul_stepper(sn4, st2, sc.elem, sc.line_bytes, sc.three_tiles_lines);
        const std::string tiled_name = fmt::format("tiled T = {}", st2);
        print_stepper(tiled, tiled_name);
        print_stepper(untiled, "untiled ikj");
        print_stepper(tight, tiled_name);
        out["stepper"] = {ch04::to_json(tiled, tiled_name), ch04::to_json(untiled, "untiled ikj"),
                          ch04::to_json(tight, tiled_name)};
        out["stepper_cache"] = {{"n", sn4},
                                {"tile", st2},
                                {"elem", sc.elem},
                                {"line_bytes", sc.line_bytes},
                                {"three_tiles_lines", sc.three_tiles_lines},
                                {"three_tiles_bytes", 3 * st2 * st2 * sc.elem},
                                {"cache_lines", sc.cache_lines},
                                {"cache_bytes", sc.cache_bytes()},
                                {"bound", fmt::format("{:.1f}", std::floor(sc_tile.bound * 10) / 10)},
                                {"formula_tile", sc_tile.tile},
                                {"seed_model",
                                 {{"tile", seed_model.tile},
                                  {"line_bytes", seed_model.line_bytes},
                                  {"three_tiles_lines", seed_model.three_tiles_lines},
                                  {"cache_lines", seed_model.cache_lines}}}};

        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
