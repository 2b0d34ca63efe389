// ch09_matmul: prints what chapter 9 shows, one function per numbered section (sections.cpp,
// report_tiles.cpp, report_pages.cpp). The steps are in matmul*.cpp (the lesson), the measuring in
// lab*.cpp; each result is written once, through cachebook::Report.
#include "cachebook/cli.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"
#include "lab_pages.hpp"
#include "sections.hpp"

namespace {

using ch09::Settings;

// Measures, then prints the sections in order: the lab measures, sections.cpp prints.
int run(const Settings& o, const std::string& json_path) {
    cachebook::Report report("Chapter 9 · The matrix multiply project");
    report.record("quick", o.quick);
    cachebook::Progress progress("ch09_matmul", 29);
    progress.step("clock");
    const ch09::MachineFacts m = ch09::machine_facts(o);
    ch09::machine_section(report, o, m);
    const ch09::Peak peak = ch09::measure_peak(o, m, progress);
    ch09::peak_section(report, o, m, peak);
    ch09::Problem p({o.n, o.n, o.n});
    progress.step("reference");
    const ch09::Reference ref(p);
    const ch09::Blocks blocks = ch09::choose_blocks(p, o, m, progress);
    const ch09::Libraries libs = ch09::run_libraries(o, m, blocks.used, progress);
    const auto runs = ch09::run_steps(p, ref, o, m, blocks.used, libs, progress);
    const ch09::Claims claims = ch09::decide_claims(o, blocks.used, progress);
    report.record("transpose_seconds", runs.transpose_seconds);
    ch09::steps_section(report, o, runs.steps, libs, peak, claims);
    ch09::tiling_study(report, p, o, m, progress);
    report.record("tile", m.tile);
    ch09::roofline_section(report, o, runs.steps, peak, ch09::find_roofs(o));
    ch09::blocks_section(report, o, m, blocks);
    ch09::libraries_section(report, o, libs, peak, claims);
    progress.step("C's pages");
    const auto pages =
        ch09::c_pages_claim(ch09::pages_n(o), ch09::pages_kernel(o.kernel), blocks.used, ch09::kPagesRuns);
    ch09::pages_section(report, pages, ch09::data_tlb_entries());
    if (o.sweep_tiles) ch09::tile_sweep(report, p, o, progress);
    if (o.sweep_threads) ch09::thread_sweep(report, p, o, m, blocks.used, progress);
    if (o.sweep_kernels) ch09::kernel_sweep(report, p, ref, o, peak, progress);
    report.save(json_path);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch09_matmul", [&] {
        cachebook::Cli cli("ch09_matmul",
                           "Chapter 9: one matrix multiply, from the definition to within reach of BLAS");
        Settings options;
        if (auto status = ch09::parse_settings(cli, options, argc, argv)) return *status;
        if (options.child) return ch09::child_main(options);
        return run(options, cli.json_path());
    });
}
