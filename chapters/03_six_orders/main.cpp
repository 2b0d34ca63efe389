// ch03_six_orders: prints what chapter 3 shows. Logic lives in six_orders.cpp.
#include <bit>

#include <fmt/format.h>

#include "cachebook/cli.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "six_orders.hpp"

namespace {

using cachebook::LoopOrder;

std::string name(LoopOrder o) { return std::string(cachebook::order_name(o)); }

// A simulated table of the six orders beside the analytic totals.
nlohmann::json print_simulated(std::size_t n, const cachebook::CacheConfig& cache) {
    const std::size_t per_line = cache.line_bytes / 8;
    cachebook::Table t({"order", "A", "B", "C", "total", "analytic total", "vs analytic"});
    nlohmann::json out = nlohmann::json::object();
    for (LoopOrder o : cachebook::kAllOrders) {
        const auto sim = ch03::simulate_order(o, n, cache).per_iteration();
        const auto ana = ch03::analytic(o, per_line);
        const bool off = ch03::departs(sim.total(), ana.total());
        t.row({name(o), ch03::three(sim.a), ch03::three(sim.b), ch03::three(sim.c), ch03::three(sim.total()),
               ch03::three(ana.total()), off ? (sim.total() < ana.total() ? "fewer" : "more") : "as predicted"});
        out[name(o)] = ch03::to_json(sim);
        out[name(o)]["departs"] = off;
    }
    fmt::print("{}", t.render(2));
    return out;
}

nlohmann::json print_tiled(std::size_t n, const cachebook::CacheConfig& cache, const std::vector<std::size_t>& tiles) {
    cachebook::Table t({"tile", "A", "B", "C", "total", "estimate 2/(B T) + 1/(B N)", "3 T^2 fits"});
    const std::size_t per_line = cache.line_bytes / 8;
    const std::size_t cache_elems = cache.capacity_bytes() / 8;
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t tile : tiles) {
        const auto sim = ch03::simulate_tiled(n, tile, cache).per_iteration();
        const bool fits = 3 * tile * tile <= cache_elems;
        t.row({fmt::format("T={}", tile), ch03::three(sim.a), ch03::three(sim.b), ch03::three(sim.c),
               ch03::three(sim.total()), ch03::three(ch03::tiled_estimate(per_line, tile, n)), fits ? "yes" : "no"});
        out[fmt::format("t{}", tile)] = ch03::to_json(sim);
        out[fmt::format("t{}", tile)]["estimate"] = ch03::three(ch03::tiled_estimate(per_line, tile, n));
        out[fmt::format("t{}", tile)]["fits"] = fits;
    }
    fmt::print("{}", t.render(2));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch03_six_orders", [&] {
        cachebook::Cli cli("ch03_six_orders", "Chapter 3: the six loop orders of C = A x B, analysed, simulated "
                                              "and measured");
        std::int64_t n = 64, lines = 32, ways = 0, line_bytes = 64, tile = 0, measure_n = 512, runs = 3;
        cli.add_int("--n", n, "Simulate n x n matrices in a cache of your choice (with --lines, --ways, ...)", 2, 256);
        cli.add_int("--lines", lines, "Lines in that cache", 1, 1 << 20);
        cli.add_int("--ways", ways, "Ways per set of that cache (0: fully associative)", 0, 1 << 20);
        cli.add_int("--line-bytes", line_bytes, "Bytes per line of that cache (a power of two, at least 8)", 8, 4096);
        cli.add_int("--tile", tile, "Also simulate the tiled product with this tile (0: none)", 0, 256);
        cli.add_int("--measure-n", measure_n, "Order of the matrices multiplied for real", 16, 4096);
        cli.add_int("--runs", runs, "Timed runs of each order (the minimum is reported)", 1, 100);
        if (auto status = cli.parse(argc, argv)) return *status;
        auto& app = cli.app();
        const bool custom = app.count("--n") + app.count("--lines") + app.count("--ways") +
                                app.count("--line-bytes") + app.count("--tile") >
                            0;
        if (cli.quick()) {
            if (app.count("--measure-n") == 0) measure_n = 256;
            if (app.count("--runs") == 0) runs = 1;
        }
        // Checks of the custom geometry, before any work.
        if (!std::has_single_bit(static_cast<std::uint64_t>(line_bytes)))
            throw cachebook::UsageError(fmt::format("--line-bytes {} is not a power of two", line_bytes));
        const std::int64_t w = ways == 0 ? lines : ways;
        if (w > lines) throw cachebook::UsageError(fmt::format("--ways {} exceeds --lines {}", ways, lines));
        if (lines % w != 0)
            throw cachebook::UsageError(fmt::format("--lines {} is not a whole number of {}-way sets", lines, w));
        if (tile > n) throw cachebook::UsageError(fmt::format("--tile {} exceeds --n {}", tile, n));
        // The model scans every way of a set on each access: bound the work so a run ends in seconds.
        const double work = 3.0 * static_cast<double>(n * n * n) * static_cast<double>(w) * (tile ? 7 : 6);
        if (custom && work > 4e10)
            throw cachebook::UsageError(fmt::format("--n {} with {} ways would take too long to simulate "
                                                    "(n^3 x ways is limited to about 2e9)",
                                                    n, w));
        const auto mn = static_cast<std::size_t>(measure_n);
        cachebook::require_memory(4 * mn * mn * sizeof(double), "--measure-n");
        nlohmann::json out;

        fmt::print("Chapter 3 · The six loop orders of C = A x B\n\n");
        // 1. The analytic table.
        fmt::print("1. The textbook's analysis: misses per inner iteration, doubles, 64-byte lines (B = 8)\n");
        fmt::print("   inner variable is an array's right index: 1/B; its left index: 1; absent: 0\n");
        cachebook::Table ta({"order", "inner", "A[i][k]", "B[k][j]", "C[i][j]", "total"});
        out["analytic"] = nlohmann::json::object();
        for (LoopOrder o : cachebook::kAllOrders) {
            const auto p = ch03::analytic(o, 8);
            ta.row({name(o), std::string(1, ch03::inner_variable(o)), fmt::format("{:g}", p.a),
                    fmt::format("{:g}", p.b), fmt::format("{:g}", p.c), fmt::format("{:g}", p.total())});
            out["analytic"][name(o)] = {{"a", p.a}, {"b", p.b}, {"c", p.c}, {"total", p.total()}};
        }
        fmt::print("{}\n", ta.render(2));

        // 2. R5 beside it.
        out["r5"] = nlohmann::json::object();
        for (std::size_t cache_lines : {4u, 32u}) {
            const auto cache = cachebook::CacheConfig::fully_associative(cache_lines, 64);
            fmt::print("{}. Simulated: N = 64, fully associative LRU cache of {} lines ({} B)\n",
                       cache_lines == 4 ? 2 : 3, cache_lines, cache.capacity_bytes());
            out["r5"][fmt::format("lines{}", cache_lines)] = print_simulated(64, cache);
            fmt::print("\n");
        }
        const auto c32 = cachebook::CacheConfig::fully_associative(32, 64);
        fmt::print("4. Tiled (tiles ii, jj, kk; then i, k, j), N = 64, the 32-line cache: 256 doubles\n");
        fmt::print("   3 T^2 <= 256 gives T <= {:.1f}\n", ch03::tile_bound(256));
        out["r5"]["tiled"] = print_tiled(64, c32, {8, 16});
        out["r5"]["tile_bound"] = fmt::format("{:.1f}", ch03::tile_bound(256));
        out["r5"]["cache_doubles"] = c32.capacity_bytes() / 8;
        fmt::print("\n");

        // 3. A geometry of the reader's choice.
        int section = 5;
        if (custom) {
            const auto cache = cachebook::CacheConfig{static_cast<std::size_t>(lines / w), static_cast<std::size_t>(w),
                                                      static_cast<std::size_t>(line_bytes)};
            fmt::print("{}. Simulated: N = {}, {}\n", section++, n, cache.describe());
            out["custom"] = {{"n", n}, {"cache", cache.describe()}};
            out["custom"]["orders"] = print_simulated(static_cast<std::size_t>(n), cache);
            if (tile > 0) {
                fmt::print("  tiled:\n");
                out["custom"]["tiled"] = print_tiled(static_cast<std::size_t>(n), cache, {static_cast<std::size_t>(tile)});
            }
            fmt::print("\n");
        }

        // 4. The six orders for real.
        fmt::print("{}. Measured: the six orders on {} x {} doubles ({} KiB per matrix), integer-valued data\n",
                   section, mn, mn, mn * mn * 8 / 1024);
        cachebook::Progress progress("six orders", 1);
        const auto m = ch03::time_orders(mn, static_cast<int>(runs));
        progress.step();
        fmt::print("  results identical across the six orders: {} (sum of C = {:.0f})\n", m.identical ? "yes" : "NO",
                   m.checksum);
        cachebook::Table tm({"order", "inner", "ms (min of runs)", "vs best"});
        double best = m.min_of('j');
        for (const auto& o : m.orders) best = std::min(best, o.timing.min());
        out["measured"] = {{"n", mn}, {"runs", runs}, {"identical", m.identical}, {"checksum", m.checksum}};
        for (const auto& o : m.orders) {
            tm.row({name(o.order), std::string(1, ch03::inner_variable(o.order)),
                    cachebook::measured("{:.1f}", o.timing.min() * 1e3),
                    cachebook::measured("{:.1f}", o.timing.min() / best)});
            out["measured"][name(o.order) + "_ms"] = o.timing.min() * 1e3;
        }
        fmt::print("{}", tm.render(2));
        const double i_over_j = m.min_of('i') / m.min_of('j');
        const double k_over_j = m.min_of('k') / m.min_of('j');
        fmt::print("  fastest inner-i / fastest inner-j = {}\n", cachebook::measured("{:.1f}", i_over_j));
        fmt::print("  fastest inner-k / fastest inner-j = {}\n", cachebook::measured("{:.1f}", k_over_j));
        out["measured"]["i_over_j"] = i_over_j;
        out["measured"]["k_over_j"] = k_over_j;
        out["measured"]["i_over_j_1"] = fmt::format("{:.1f}", i_over_j);
        out["measured"]["k_over_j_1"] = fmt::format("{:.1f}", k_over_j);

        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
