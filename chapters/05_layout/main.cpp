// ch05_layout: prints what chapter 5 shows, one function per numbered section (sections.cpp).
// The lesson is layout.cpp, the experiment lab*.cpp; each result is written once, through cachebook::Report.
#include <algorithm>
#include <optional>

#include "cachebook/chapter_main.hpp"
#include "sections.hpp"

namespace {

// Parses and checks the options; an exit status when the program should stop now.
std::optional<int> parse(cachebook::Cli& cli, ch05::Options& options, int argc, char** argv) {
    cli.add_int("--particles", options.particles, "Particles in the measured update loop", 1'000'000, 64'000'000);
    cli.add_int("--nodes", options.nodes, "Nodes of the measured lists", 1024, 1 << 26);
    cli.add_int("--gather", options.gather, "Elements of the prefetch gather", 1024, 1 << 27);
    cli.add_int("--runs", options.runs, "Timed runs per measurement (the minimum is reported)", 1, 100);
    cli.add_int("--stream-mib", options.stream_mib, "MiB per array for fusion and stores (0: chosen from the caches)",
                0, 4096);
    if (auto status = cli.parse(argc, argv)) return status;
    options.quick = cli.quick();
    if (options.quick) {
        options.particles = static_cast<std::int64_t>(ch05::kQuickParticles);
        options.nodes = static_cast<std::int64_t>(ch05::kQuickNodes);
        options.gather = 1 << 20;
        options.runs = std::min<std::int64_t>(options.runs, 6);
    }
    cachebook::require_memory(3ull * options.n_particles() * sizeof(ch05::Particle), "--particles");
    cachebook::require_memory(7ull * options.n_nodes() * 8, "--nodes");
    cachebook::require_memory(12ull * options.n_gather(), "--gather");
    return std::nullopt;
}

void sections(cachebook::Report& report, const ch05::Options& options) {
    ch05::particle_section(report);
    ch05::update_loop_section(report, options);
    ch05::field_order_section(report);
    ch05::straddle_section(report);
    ch05::lists_section(report, options);
    ch05::prefetch_section(report, options);
    ch05::fusion_section(report, options);
    ch05::stores_section(report, options);
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::chapter_main<ch05::Options>(
        argc, argv,
        {"ch05_layout",
         "Chapter 5: data layout -- AoS and SoA, padding, alignment, lists, prefetch, fusion and fission",
         "Chapter 5 · Data layout"},
        parse, sections);
}
