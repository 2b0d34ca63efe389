// Chapter 9's study of steps 2 to 4 at several tiles, printed for main.cpp: the table of tiles,
// where the rule's tile of B falls in the L1d's sets at N and at N plus one line, and the rule's
// tile timed again at that padded size.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "cachebook/report.hpp"
#include "cachebook/walks.hpp"
#include "lab.hpp"

namespace ch09 {

using cachebook::Report;
using cachebook::Value;

namespace {

constexpr std::size_t kPadFloats = 64 / sizeof(float);  // one line of 64 bytes

// The L1d sets one T x T tile of B (rows of T floats, N floats apart) falls into, at N and at the
// padded N, counted from the matrix's first byte as the start of a page.
void tile_sets_lines(Report& report, std::size_t n, const MachineFacts& m) {
    report.line("  step 3's tile of B, T = {}, in this machine's L1d:", Value::measured("", m.tile));
    const auto unknown = Value::unknown("", "unknown");
    const auto l1 = cachebook::cache_config(m.caches[0]);
    if (!l1) report.record("tiling.b_sets", nullptr);
    for (const auto& [label, leading, key] : {std::tuple{"N", n, "tiling.b_sets.power"},
                                              std::tuple{"N + one line", n + kPadFloats, "tiling.b_sets.padded"}}) {
        if (!l1) {
            report.line("    rows of {} = {} floats: {} lines in sets {} ({} of {} sets, room for {} lines)", label,
                        Value::exact("", leading), unknown, unknown, unknown, unknown, unknown);
            continue;
        }
        const auto sets = cachebook::block_sets(*l1, 0, m.tile, m.tile * sizeof(float), leading * sizeof(float));
        const std::string k = key;
        // Small counts recorded as text: the prose quotes them, and small numbers are also typed there.
        const auto count = [&](const char* field, std::size_t x) {
            return Value::measured(k + "." + field, fmt::format("{}", x));
        };
        report.line("    rows of {} = {} floats: {} lines in sets {} ({} of {} sets, room for {} lines)", label,
                    Value::exact("", leading), count("lines", sets.lines),
                    Value::measured(k + ".set_list", cachebook::set_list(sets.sets)), count("sets", sets.sets.size()),
                    count("l1_sets", l1->sets), count("room", sets.room));
    }
}

// The rule's tile at N plus one line of floats, beside its row of the table at N.
void padded_tile_lines(Report& report, const Problem& p, const std::vector<TileTiming>& rows, const Settings& o,
                       const MachineFacts& m, cachebook::Progress& progress) {
    const std::size_t n = p.shape.n, padded_n = n + kPadFloats;
    Problem padded({padded_n, padded_n, padded_n});
    const auto at_n = std::find_if(rows.begin(), rows.end(), [&](const TileTiming& r) { return r.tile == m.tile; });
    const auto again =
        time_tiles(padded, o.isa, {m.tile}, table_runs(o), 0.1e9 * o.scale(), 0.5e9 * o.scale(), progress);
    const bool have = at_n != rows.end() && !again.empty();
    const auto figure = [&](const char* key, double x) {
        return have ? Value::measured(key, x, 2) : Value::unknown(key, "-");
    };
    report.line("  T = {} again at N = {} (rows one line longer): scalar {} GFLOPS ({} at N), vector {} ({} at N)",
                Value::measured("", m.tile), Value::exact("tiling.padded.n", padded_n),
                figure("tiling.padded.scalar", have ? again.front().scalar_gflops : 0),
                figure("tiling.padded.scalar_power", have ? at_n->scalar_gflops : 0),
                figure("tiling.padded.simd", have ? again.front().vector_gflops : 0),
                figure("tiling.padded.simd_power", have ? at_n->vector_gflops : 0));
}

}  // namespace

// Steps 2 to 4 with tiles of several sizes: T = N is step 2's untiled i-k-j.
void tiling_study(Report& report, Problem& p, const Settings& o, const MachineFacts& m, cachebook::Progress& progress) {
    const auto rows =
        time_tiles(p, o.isa, study_tiles(p.shape.n), table_runs(o), 0.1e9 * o.scale(), 0.5e9 * o.scale(), progress);
    report.blank_line();
    report.line("  Tiling with one float per instruction and with {} (GFLOPS; T = N is step 2's i-k-j, untiled):",
                Value::measured("", std::string(o.isa == Isa::Scalar ? "the scalar fallback" : "eight")));
    auto table = report.table_of_rows("tiling.rows", {"T", "scalar (steps 2, 3)", "vector (step 4)"});
    for (const auto& r : rows)
        table.row({Value::exact_as("tile", r.tile,
                                   r.tile == p.shape.n ? fmt::format("N = {}", r.tile) : fmt::format("{}", r.tile)),
                   Value::measured("scalar", r.scalar_gflops, 2), Value::measured("simd", r.vector_gflops, 2)});
    table.print();
    const TileGain gain = best_tiles(rows, p.shape.n);
    report.line("  best tile over untiled: scalar {}x (T = {}), vector {}x (T = {})",
                Value::measured("tiling.scalar_gain", gain.scalar, 2),
                Value::measured("tiling.scalar_best_tile", gain.scalar_tile),
                Value::measured("tiling.simd_gain", gain.vector, 2),
                Value::measured("tiling.simd_best_tile", gain.vector_tile));
    tile_sets_lines(report, p.shape.n, m);
    padded_tile_lines(report, p, rows, o, m, progress);
}

}  // namespace ch09
