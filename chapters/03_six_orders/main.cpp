// ch03_six_orders: prints what chapter 3 shows, one function per numbered section (sections.cpp).
// The lesson is six_orders.cpp, the lab lab.cpp; each result is written once, through cachebook::Report.
#include <optional>

#include "cachebook/chapter_main.hpp"
#include "lab.hpp"
#include "sections.hpp"

namespace {

// Parses and checks the options; an exit status when the program should stop now.
std::optional<int> parse(cachebook::Cli& cli, ch03::Options& options, int argc, char** argv) {
    cli.add_int("--n", options.n, "Simulate n x n matrices in a cache of your choice (with --lines, --ways, ...)", 2,
                256);
    cli.add_int("--lines", options.lines, "Lines in that cache", 1, 1 << 20);
    cli.add_int("--ways", options.ways, "Ways per set of that cache (0: fully associative)", 0, 1 << 20);
    cli.add_int("--line-bytes", options.line_bytes, "Bytes per line of that cache (a power of two, at least 8)", 8,
                4096);
    cli.add_int("--tile", options.tile, "Also simulate the tiled product with this tile (0: none)", 0, 256);
    cli.add_int("--measure-n", options.measure_n, "Order of the matrices multiplied for real", 16, 4096);
    cli.add_int("--runs", options.runs, "Timed runs of each order (the minimum is reported)", 1, 100);
    if (auto status = cli.parse(argc, argv)) return status;
    auto& app = cli.app();
    options.quick = cli.quick();
    for (const char* flag : {"--n", "--lines", "--ways", "--line-bytes", "--tile"})
        options.custom = options.custom || app.count(flag) > 0;
    if (cli.quick() && app.count("--measure-n") == 0) options.measure_n = 256;
    if (cli.quick() && app.count("--runs") == 0) options.runs = 1;
    options.cache = ch03::chosen_cache(options.lines, options.ways, options.line_bytes);
    ch03::check_simulation(options.n, static_cast<std::int64_t>(options.cache.ways), options.tile);
    const auto measure_n = static_cast<std::uint64_t>(options.measure_n);
    cachebook::require_memory(4 * measure_n * measure_n * sizeof(double), "--measure-n");
    return std::nullopt;
}

void sections(cachebook::Report& report, const ch03::Options& options) {
    ch03::analytic_section(report);
    ch03::small_cache_section(report, 4);
    ch03::small_cache_section(report, 32);
    ch03::tiled_section(report);
    if (options.custom) ch03::chosen_cache_section(report, options);
    ch03::measured_section(report, options);
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::chapter_main<ch03::Options>(
        argc, argv,
        {"ch03_six_orders", "Chapter 3: the six loop orders of C = A x B, analysed, simulated and measured",
         "Chapter 3 · The six loop orders of C = A x B"},
        parse, sections);
}
