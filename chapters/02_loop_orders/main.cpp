// ch02_loop_orders: prints what chapter 2 shows, one function per numbered section (sections.cpp).
// The lesson is loop_orders.cpp, the lab lab.cpp; each result is written once, through cachebook::Report.
#include <optional>

#include "cachebook/chapter_main.hpp"
#include "sections.hpp"

namespace {

// Parses and checks the options; an exit status when the program should stop now.
std::optional<int> parse(cachebook::Cli& cli, ch02::Options& options, int argc, char** argv) {
    cli.add_int("--n", options.n, "Order of the n x n int array summed both ways", 64, 32768);
    cli.add_int("--runs", options.runs, "Timed runs of each sum (the minimum is reported)", 1, 1000);
    if (auto status = cli.parse(argc, argv)) return status;
    if (cli.quick() && cli.app().count("--runs") == 0) options.runs = 6;
    const auto size = static_cast<std::size_t>(options.n);
    cachebook::require_memory(size * size * sizeof(int), "--n");
    return std::nullopt;
}

void sections(cachebook::Report& report, const ch02::Options& options) {
    ch02::arithmetic_section(report);
    ch02::matrix_read_section(report);
    ch02::trap_section(report);
    ch02::sum_section(report, options);
    ch02::conflict_section(report, options);
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::chapter_main<ch02::Options>(
        argc, argv,
        {"ch02_loop_orders",
         "Chapter 2: row or column; the miss arithmetic, the 4 KiB 8-way matrix-read table, the power-of-two trap, "
         "the measured sum of an int array both ways and one measured conflict",
         "Chapter 2 · Row or column"},
        parse, sections);
}
