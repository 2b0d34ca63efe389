// ch04_tiling: prints what chapter 4 shows, one function per numbered section (sections.cpp,
// sections_beyond.cpp).
// The lesson is tiling.cpp, the experiment lab.cpp; each result is written once, through cachebook::Report.
#include <fmt/format.h>

#include <optional>

#include "cachebook/chapter_main.hpp"
#include "cachebook/measure.hpp"
#include "sections.hpp"

namespace {

// Reads the study's columns, so that a bad file fails before any long work.
void read_study_data(ch04::Options& options) {
    options.study = ch04::read_study_data(options.data);
    const auto study_n = static_cast<std::size_t>(options.study_n);
    for (const auto& series : options.study.series)
        if (series.values.size() < 2 * study_n - 1)
            throw cachebook::UsageError(fmt::format("--study-n {}: column '{}' has {} values, {} needed", study_n,
                                                    series.name, series.values.size(), 2 * study_n - 1));
}

// Parses and checks the options; an exit status when the program should stop now.
std::optional<int> parse(cachebook::Cli& cli, ch04::Options& options, int argc, char** argv) {
    cli.add_int("--n", options.n, "Order of the matrices multiplied for real", 16, 4096);
    cli.add_int("--tile", options.tile, "Tile of the blocked product (0: from this machine's L1 by 3 T^2 S <= 3/4 L1)",
                0, 4096);
    cli.add_int("--runs", options.runs, "Timed runs of each measurement (the minimum is reported)", 1, 100);
    cli.add_int("--transpose-n", options.transpose_n, "Order of the matrix transposed for real", 16, 32768);
    cli.add_int("--study-n", options.study_n, "Order of the lag matrix of the study", 2, 1024);
    cli.add_string("--data", options.data, "CSV file of the study (default: matplotlib's sample Stocks.csv)");
    if (auto status = cli.parse(argc, argv)) return status;
    auto& app = cli.app();
    options.quick = cli.quick();
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

void sections(cachebook::Report& report, const ch04::Options& options) {
    ch04::visits_section(report);
    const std::size_t tile = ch04::tile_section(report, options);
    ch04::stepper_section(report);
    cachebook::Progress progress("measuring", 4);
    ch04::blocked_section(report, options, tile);
    progress.step("naive vs blocked");
    ch04::sweep_section(report, options, tile);
    progress.step("tile sweep");
    ch04::transpose_model_section(report);
    ch04::lab_section(report);
    ch04::transpose_section(report, options);
    progress.step("transpose");
    ch04::study_section(report, options);
    ch04::prefetch_section(report);
    ch04::oblivious_model_section(report);
    ch04::oblivious_timing_section(report, options, tile);
    progress.step("recursive walks");
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::chapter_main<ch04::Options>(
        argc, argv,
        {"ch04_tiling",
         "Chapter 4: blocking; the blocked product, the tile from the L1, the tiled transpose and a study on a real "
         "series",
         "Chapter 4 · Blocking"},
        parse, sections);
}
