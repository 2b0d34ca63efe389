// ch07_measurement: prints what chapter 7 shows, one function per numbered section (sections.cpp).
// The lesson is measurement.cpp, the experiments lab.cpp; each result is written once, through cachebook::Report.
#include <fmt/format.h>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"
#include "sections.hpp"

namespace {

using ch07::Options;

// Parses and checks the options; an exit status when the program should stop now.
std::optional<int> parse(cachebook::Cli& cli, Options& options, int argc, char** argv) {
    cli.add_int("--n", options.n, "Order of the n x n int array the rules time", 64, 16384);
    cli.add_int("--runs", options.runs, "Timed runs per measurement", 2, 100);
    cli.add_int("--threads", options.threads, "Threads for the clock rule", 2, 64);
    cli.add_int("--walk-n", options.walk_n, "Order of the array the counters count (cachegrind or perf)", 16, 4096);
    cli.add_int("--counters", options.counters, "1: run cachegrind or perf; 0: skip them", 0, 1);
    cli.add_int("--product-n", options.product_n, "Order of the matrices of the blocked product (section 5)", 64, 2048);
    if (auto status = cli.parse(argc, argv)) return status;
    options.quick = cli.quick();
    if (options.quick) {
        options.n = std::min<std::int64_t>(options.n, ch07::kQuickN);
        options.runs = std::min<std::int64_t>(options.runs, 6);
        options.walk_n = std::min<std::int64_t>(options.walk_n, 128);
        options.product_n = std::min<std::int64_t>(options.product_n, ch07::kQuickProductN);
    }
    if (options.threads > 4 * cachebook::usable_cpus())
        throw cachebook::UsageError(
            fmt::format("--threads {}: this machine lets this process use {} CPUs; "
                        "at most 4 threads per CPU are allowed",
                        options.threads, cachebook::usable_cpus()));
    cachebook::require_memory(2ull * options.size() * options.size() * sizeof(int), "--n");
    return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch07_measurement", [&] {
        cachebook::Cli cli("ch07_measurement", "Chapter 7: measuring right -- each mistake next to the right way");
        Options options;
        if (auto status = parse(cli, options, argc, argv)) return *status;
        cachebook::Report report("Chapter 7 · Measuring right");
        ch07::preface(report, options);
        ch07::clock_section(report, options);
        ch07::runs_section(report, options);
        ch07::first_touch_section(report, options);
        ch07::dead_code_section(report, options);
        ch07::optimisation_section(report, options);
        ch07::size_section(report, options);
        ch07::latency_section(report, options);
        ch07::counters_section(report, options);
        ch07::amdahl_section(report);
        ch07::checklist_section(report);
        ch07::audit_section(report, options);
        report.save(cli.json_path());
        return 0;
    });
}
