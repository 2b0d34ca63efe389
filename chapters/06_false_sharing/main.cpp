// ch06_false_sharing: prints what chapter 6 shows, one function per numbered section
// (sections.cpp, sections_measured.cpp).
// The lesson is false_sharing.cpp; the experiment lab_layouts.cpp, lab_races.cpp and lab_counters.cpp.
#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "sections.hpp"

namespace {

std::optional<int> parse(cachebook::Cli& cli, ch06::Run& run, int argc, char** argv) {
    cli.add_int("--threads", run.max_threads,
                "Largest thread count of the sweep (2, 4, 8, ... up to it; raise it to your core count)", 2, 256);
    cli.add_int("--runs", run.runs, "Runs of packed and of padded per measurement (the fastest taken)", 1, 50);
    if (auto status = cli.parse(argc, argv)) return status;
    run.quick = cli.quick();
    run.usable = cachebook::usable_cpus();
    run.first_cpu = cachebook::nth_usable_cpu(0);
    if (run.usable >= 2) run.two_cpus = {run.first_cpu, cachebook::nth_usable_cpu(1)};
    return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch06_false_sharing", [&] {
        cachebook::Cli cli("ch06_false_sharing",
                           "Chapter 6: false sharing, modelled with MESI and measured with pinned threads");
        ch06::Run run;
        if (auto status = parse(cli, run, argc, argv)) return *status;
        cachebook::Report report("Chapter 6 · False sharing");
        const auto layout = ch06::layout_facts();
        ch06::layouts_section(report, layout);
        ch06::two_counters_section(report, layout);
        ch06::runtime_padding_section(report);
        ch06::workers_section(report, layout);
        ch06::monitor_section(report);
        const auto thread_counts = ch06::sweep_counts(static_cast<int>(run.max_threads));
        cachebook::Progress progress("ch06: measuring", 6 + 2 * thread_counts.size());
        const auto two = ch06::races_section(report, run, progress);
        ch06::handoff_section(report, run, two);
        ch06::sweep_section(report, run, two, progress);
        ch06::queue_lock_section(report, run, progress);
        ch06::counters_section(report, run);
        report.save(cli.json_path());
        return 0;
    });
}
