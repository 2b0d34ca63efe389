// ch08_cliff: prints what chapter 8 shows, one function per numbered section (sections.cpp,
// sections_amat.cpp). The lesson is cliff.cpp; the experiment lab.cpp and the other lab*.cpp.
#include "cachebook/cli.hpp"
#include "sections.hpp"

namespace {

std::optional<int> parse(cachebook::Cli& cli, ch08::Options& options, int argc, char** argv) {
    cli.add_int("--seed", options.seed, "Seed of the random cycles and chunk orders", 0, INT64_MAX);
    cli.add_int("--runs", options.runs, "Timed runs per size, best kept (0: 15, or 7 with --quick)", 0, 100);
    cli.add_int("--steps", options.steps, "Sizes per octave (0: 8, or 4 with --quick)", 0, 16);
    cli.add_int("--max-mib", options.max_mib, "Largest working set in MiB (0: from the reported last-level cache)", 0,
                4096);
    cli.add_string("--csv", options.csv_path, "Write the curve (size, ns per access of each method) to this CSV file");
    if (auto status = cli.parse(argc, argv)) return status;
    if (options.steps != 0 && options.steps < 4)
        throw cachebook::UsageError("--steps: at least 4 sizes per octave (or 0)");
    if (!options.csv_path.empty()) cachebook::check_writable(options.csv_path);
    options.quick = cli.quick();
    return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch08_cliff", [&] {
        cachebook::Cli cli("ch08_cliff",
                           "Chapter 8: find the cache levels, their latencies and the line size by timing alone");
        ch08::Options options;
        if (auto status = parse(cli, options, argc, argv)) return *status;
        const auto setup = ch08::set_up(options);
        cachebook::Report report("Chapter 8 · Finding the cache cliffs by timing alone");
        ch08::experiment_section(report, options, setup);
        const auto ghz = ch08::clock_ghz(options);
        ch08::clock_section(report, ghz);
        const auto curves = ch08::sweep(options, setup);
        ch08::curve_section(report, options, curves, ghz);
        const auto cliffs = ch08::find_cliffs(setup, curves);
        ch08::cliffs_section(report, curves, cliffs);
        const auto found = ch08::find_levels(setup, curves, cliffs);
        ch08::levels_section(report, setup, found, ghz, ch08::first_cliff_of(setup, options.quick));
        ch08::wrong_method_section(report, setup, curves, cliffs);
        ch08::line_size_section(report, ch08::measure_line_sizes(options));
        ch08::pages_section(report, options, setup, curves);
        // The second page: loads in flight, read bandwidth, the memory mountain; then the price of a miss.
        const auto sizes = ch08::level_sizes(setup);
        const auto chases = ch08::measure_chases(sizes, options);
        ch08::chases_section(report, chases, ch08::ChasesExperiment(sizes.memory).run(options.quick),
                             ch08::where_memory_set(setup));
        ch08::levels_bandwidth_section(report, ch08::measure_levels(sizes, options), chases);
        ch08::mountain_section(report, ch08::measure_mountain(sizes.memory, options));
        ch08::amat_section(report, ch08::price_a_miss(options, setup, curves, found), ch08::amat_matrix_side(options));
        if (!options.csv_path.empty()) ch08::write_csv(options.csv_path, setup, curves);
        ch08::record_run_time(report, setup);
        report.save(cli.json_path());
        return 0;
    });
}
