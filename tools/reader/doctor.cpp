// doctor: is this machine fit to measure on? One line per condition (conditions.hpp), one
// for where each cache figure comes from and one for the NUMA nodes, with what an unfit item
// does to the chapters' measurements and the command that fixes it where one exists ("?": this
// machine does not say), then the machine's profile (profile.hpp: a probe of a few seconds). It
// only reads and times; exit status 0 whatever it finds (2 on a bad argument).
#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "cachebook/cli.hpp"
#include "cachebook/conditions.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/profile.hpp"
#include "cachebook/report.hpp"

namespace {

std::string condition_line(const cachebook::Condition& c) {
    const bool unknown = c.state.rfind("unknown", 0) == 0;
    std::string line = fmt::format("{:<5} {:<11} {}", unknown ? "?" : c.fit ? "ok" : "note", c.item, c.state);
    if (!c.effect.empty()) line += ": " + c.effect;
    if (!c.fix.empty()) line += fmt::format(" (fix: {})", c.fix);
    return line;
}

// "L1d 48 KiB (hwloc), L2 2 MiB (hwloc), ..., lines of 64 B (hwloc)", or why none is known.
std::string caches_line(const cachebook::Machine& m) {
    std::string text;
    for (const auto& c : m.caches) {
        if (c.type == "Instruction") continue;
        text += fmt::format("{}{} {} ({})", text.empty() ? "" : ", ", c.name(), cachebook::size_text(c.size_bytes),
                            cachebook::source_name(c.source));
    }
    if (text.empty()) return fmt::format("{:<5} {:<11} {}", "note", "caches", m.why_unknown("every cache size"));
    const auto line = m.line_bytes();
    text += line ? fmt::format(", lines of {} B ({})", *line, cachebook::source_name(m.line_source()))
                 : ", line size unknown";
    return fmt::format("{:<5} {:<11} {}", "ok", "caches", text);
}

// The NUMA nodes sysfs lists (node0, node1, ...): more than one means memory at two distances.
std::string numa_line(const std::string& root) {
    const std::filesystem::path dir = root + "/sys/devices/system/node";
    std::error_code error;
    int nodes = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name.size() > 4 && name.rfind("node", 0) == 0 &&
            name.find_first_not_of("0123456789", 4) == std::string::npos)
            ++nodes;
    }
    if (error || nodes == 0) return fmt::format("{:<5} {:<11} unknown: {} lists no node", "?", "numa", dir.string());
    if (nodes == 1) return fmt::format("{:<5} {:<11} 1 node (sysfs): all memory at one distance", "ok", "numa");
    return fmt::format(
        "{:<5} {:<11} {} nodes (sysfs): memory on another node is slower; pin a measurement's cpus "
        "and memory to one (fix: numactl --cpunodebind=0 --membind=0 PROGRAM)",
        "note", "numa", nodes);
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("doctor", [&] {
        cachebook::Cli cli("doctor", "Is this machine fit to measure on? One line per condition, with its fix.");
        std::string root;
        cli.add_string("--root", root, "Read /proc and /sys below this directory (a test fixture)");
        if (auto status = cli.parse(argc, argv)) return *status;
        if (!root.empty() && !std::filesystem::is_directory(root))
            throw cachebook::UsageError("--root: '" + root + "' is not a directory");
        const auto conditions = cachebook::run_conditions(root);
        const cachebook::Machine& m = cachebook::machine();
        fmt::print("doctor: {}, {} usable cpus\n", cachebook::cpu_model(), cachebook::usable_cpus());
        for (const auto& c : conditions) fmt::print("{}\n", condition_line(c));
        fmt::print("{}\n", caches_line(m));
        fmt::print("{}\n", numa_line(root));
        // make share runs the doctor first: the profile it measures is the one the chapters read.
        const cachebook::Profile profile = cachebook::shared_profile();
        fmt::print(
            "profile: what each level costs here, measured in {:.1f} s ({}; each figure the best of its runs, ± "
            "the median's distance from it)\n",
            profile.probe_seconds, profile.origin);
        for (const auto& line : cachebook::profile_lines(profile)) fmt::print("  {}\n", line);
        if (!cli.json_path().empty())
            cachebook::write_json(cli.json_path(), {{"conditions", cachebook::conditions_json(conditions)},
                                                    {"machine", cachebook::machine_json(m)},
                                                    {"profile", cachebook::profile_json(profile)}});
        return 0;
    });
}
