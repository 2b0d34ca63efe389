// The conditions of a run (common/include/cachebook/conditions.hpp), read from made-up /proc and
// /sys trees: each item a reader should fix is found, with its fix, and a tree that says nothing
// gives "unknown" items, never a failure.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include "cachebook/conditions.hpp"
#include "cachebook/machine.hpp"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& root, const std::string& file, const std::string& text) {
    fs::create_directories((root / file).parent_path());
    std::ofstream(root / file) << text;
}

std::map<std::string, cachebook::Condition> by_item(const std::vector<cachebook::Condition>& list) {
    std::map<std::string, cachebook::Condition> out;
    for (const auto& c : list) out[c.item] = c;
    return out;
}

fs::path fresh_root(const std::string& name) {
    const fs::path root = fs::temp_directory_path() / ("cachebook-conditions-" + name);
    fs::remove_all(root);
    fs::create_directories(root);
    return root;
}

// A made-up /proc and /sys tree, as a machine set up for measuring has it; a test changes the
// files it needs.
struct Tree {
    std::string governor = "performance";
    std::string boost_file = "sys/devices/system/cpu/intel_pstate/no_turbo", boost = "1";
    std::string thp = "always [madvise] never";
    std::string loadavg = "0.00 0.00 0.00 1/100 1";
    std::string meminfo = "MemAvailable: 8388608 kB";
    std::string cpu_flags = "fpu sse2 avx2";
    std::string perf_event_paranoid;  // no file when empty
    bool one_core = false;            // every usable cpu a hardware thread of one core, or each its own

    // Writes the tree under a fresh root named `name` and returns the root.
    fs::path write_as(const std::string& name) const {
        const fs::path root = fresh_root(name);
        write(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", governor + "\n");
        write(root, boost_file, boost + "\n");
        write(root, "sys/kernel/mm/transparent_hugepage/enabled", thp + "\n");
        write(root, "proc/loadavg", loadavg + "\n");
        write(root, "proc/meminfo", meminfo + "\n");
        write(root, "proc/cpuinfo", "processor\t: 0\nflags\t\t: " + cpu_flags + "\n");
        if (!perf_event_paranoid.empty())
            write(root, "proc/sys/kernel/perf_event_paranoid", perf_event_paranoid + "\n");
        const std::string all = fmt::format("0-{}", cachebook::nth_usable_cpu(cachebook::usable_cpus() - 1));
        for (int i = 0; cachebook::nth_usable_cpu(i) >= 0; ++i) {
            const int cpu = cachebook::nth_usable_cpu(i);
            write(root, fmt::format("sys/devices/system/cpu/cpu{}/topology/thread_siblings_list", cpu),
                  (one_core ? all : std::to_string(cpu)) + "\n");
        }
        return root;
    }
};

}  // namespace

TEST_CASE("a machine set up badly for measuring: every condition found, with its fix", "[conditions]") {
    Tree bad;
    bad.governor = "powersave";
    bad.boost_file = "sys/devices/system/cpu/cpufreq/boost";
    bad.thp = "always madvise [never]";
    bad.loadavg = "9.00 8.00 7.00 3/200 12345";
    bad.meminfo = "MemTotal: 1000000 kB\nMemFree: 100000 kB\nMemAvailable: 524288 kB";
    bad.cpu_flags = "fpu sse2 hypervisor avx2";
    bad.perf_event_paranoid = "2";
    bad.one_core = true;
    auto c = by_item(cachebook::run_conditions(bad.write_as("bad").string()));
    CHECK(c.size() == 9);
    CHECK_FALSE(c["governor"].fit);
    CHECK(c["governor"].state == "powersave");
    CHECK(c["governor"].fix == "sudo cpupower frequency-set -g performance");
    CHECK_FALSE(c["boost"].fit);
    CHECK(c["boost"].fix == "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost");
    CHECK_FALSE(c["thp"].fit);
    CHECK(c["thp"].state == "transparent huge pages: never");
    CHECK_FALSE(c["load"].fit);
    CHECK_FALSE(c["memory"].fit);
    CHECK(c["memory"].state == "512 MiB available");
    CHECK_FALSE(c["hypervisor"].fit);
    CHECK(c["counters"].state == "perf_event_paranoid 2; the counters themselves not tried (a fixture)");
    if (cachebook::usable_cpus() >= 2) {
        CHECK_FALSE(c["smt"].fit);
        CHECK(c["smt"].state.find("hardware threads of one core") != std::string::npos);
    }
}

TEST_CASE("a machine set up for measuring passes, and Intel's no_turbo counts as boost", "[conditions]") {
    auto c = by_item(cachebook::run_conditions(Tree{}.write_as("good").string()));
    for (const char* item : {"governor", "boost", "smt", "hypervisor", "thp", "load", "memory"}) {
        INFO(item << ": " << c[item].state);
        CHECK(c[item].fit);
    }
    CHECK(c["boost"].state == "off");
    CHECK(c["memory"].state == "8 GiB available");
}

TEST_CASE("a tree that says nothing gives unknown items, and the JSON holds no number", "[conditions]") {
    const fs::path root = fresh_root("empty");
    const auto list = cachebook::run_conditions(root.string());
    auto c = by_item(list);
    for (const char* item : {"governor", "boost", "smt", "hypervisor", "thp", "load", "memory"}) {
        INFO(item);
        CHECK(c[item].state.rfind("unknown", 0) == 0);
    }
    const nlohmann::json j = cachebook::conditions_json(list);
    REQUIRE(j.size() == list.size());
    for (const auto& row : j)
        for (const auto& [key, value] : row.items()) CHECK((value.is_string() || value.is_boolean()));
}
