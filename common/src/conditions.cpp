#include "cachebook/conditions.hpp"

#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "cachebook/machine.hpp"

namespace cachebook {
namespace {

std::optional<std::string> first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return std::nullopt;
    return line;
}

std::optional<std::string> whole_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// "0-1,4" -> {0, 1, 4}; empty on anything else.
std::set<int> cpu_list(const std::string& text) {
    std::set<int> cpus;
    std::stringstream parts(text);
    for (std::string part; std::getline(parts, part, ',');) {
        int a = 0, b = 0;
        char dash = 0;
        std::istringstream one(part);
        if (!(one >> a)) return {};
        if (one >> dash >> b && dash == '-')
            for (int c = a; c <= b; ++c) cpus.insert(c);
        else
            cpus.insert(a);
    }
    return cpus;
}

Condition cpus_condition() {
    const int n = usable_cpus();
    if (n >= 2) return {"cpus", fmt::format("{} cpus usable", n), true, "", ""};
    return {"cpus", "1 cpu usable", false,
            "the two-core races of chapters 6 and 9 cannot run: they are skipped, with the reason",
            "run on a machine, or give the virtual machine, two or more cpus"};
}

Condition governor_condition(const std::string& root) {
    const auto g = first_line(root + "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    if (!g)
        return {"governor", "unknown: no cpufreq in sysfs (in a virtual machine the host sets the clock)", true, "",
                ""};
    if (*g == "performance") return {"governor", *g, true, "", ""};
    return {"governor", *g, false,
            "the clock rises only under load: the first runs of a measurement are slower, and short runs "
            "differ from long ones",
            "sudo cpupower frequency-set -g performance"};
}

Condition boost_condition(const std::string& root) {
    const auto boost = first_line(root + "/sys/devices/system/cpu/cpufreq/boost");
    const auto no_turbo = first_line(root + "/sys/devices/system/cpu/intel_pstate/no_turbo");
    if (!boost && !no_turbo) return {"boost", "unknown: sysfs does not say", true, "", ""};
    const bool on = boost ? *boost == "1" : *no_turbo == "0";
    if (!on) return {"boost", "off", true, "", ""};
    return {"boost", "on", false,
            "turbo makes the clock depend on load and heat: two runs of the same code can differ by the clock",
            boost ? "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost"
                  : "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"};
}

Condition smt_condition(const std::string& root) {
    std::set<int> usable;
    for (int i = 0, cpu = nth_usable_cpu(0); cpu >= 0; cpu = nth_usable_cpu(++i)) usable.insert(cpu);
    std::string shared;
    bool reported = false;
    for (int cpu : usable) {
        const auto list =
            first_line(fmt::format("{}/sys/devices/system/cpu/cpu{}/topology/thread_siblings_list", root, cpu));
        if (!list) continue;
        reported = true;
        for (int sibling : cpu_list(*list))
            if (sibling > cpu && usable.count(sibling) != 0 && shared.empty())
                shared = fmt::format("cpus {} and {}", cpu, sibling);
    }
    if (!reported) return {"smt", "unknown: sysfs reports no thread siblings", true, "", ""};
    if (shared.empty())
        return {"smt",
                "each usable cpu is a core of its own, as the system reports it (a virtual machine may not know)", true,
                "", ""};
    return {"smt", shared + " are hardware threads of one core", false,
            "they share one L1 and L2: a two-thread race on them runs on one core, and false sharing looks cheap",
            "taskset -c with one cpu per core (lscpu -e lists the cores)"};
}

Condition hypervisor_condition(const std::string& root) {
    const auto cpuinfo = whole_file(root + "/proc/cpuinfo");
    const auto type = first_line(root + "/sys/hypervisor/type");
    const bool flagged = cpuinfo && cpuinfo->find(" hypervisor") != std::string::npos;
    if (!cpuinfo && !type) return {"hypervisor", "unknown: /proc/cpuinfo is not readable", true, "", ""};
    if (!flagged && !type) return {"hypervisor", "none reported", true, "", ""};
    return {"hypervisor", type ? "a virtual machine (" + *type + ")" : "a virtual machine", false,
            "other guests share the host: times vary from run to run, and hardware counters are often hidden", ""};
}

// Opens a counter of retired instructions for this process, as perf would; the errno on failure.
int open_instruction_counter() {
    perf_event_attr attr{};
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0) return errno;
    ::close(static_cast<int>(fd));
    return 0;
}

Condition counters_condition(const std::string& root) {
    const auto paranoid = first_line(root + "/proc/sys/kernel/perf_event_paranoid");
    const std::string level = paranoid ? "perf_event_paranoid " + *paranoid : "perf_event_paranoid unreadable";
    if (!root.empty()) return {"counters", level + "; the counters themselves not tried (a fixture)", true, "", ""};
    const int error = open_instruction_counter();
    if (error == 0) return {"counters", "readable (" + level + ")", true, "", ""};
    const std::string effect = "chapters 6 and 7 show the model's counts and cachegrind's in place of the counters";
    if (error == EACCES || error == EPERM)
        return {"counters", "not allowed (" + level + ")", false, effect, "sudo sysctl kernel.perf_event_paranoid=1"};
    return {"counters", fmt::format("none: the kernel offers no hardware counters here ({})", level), false, effect,
            ""};
}

Condition thp_condition(const std::string& root) {
    const auto line = first_line(root + "/sys/kernel/mm/transparent_hugepage/enabled");
    if (!line) return {"thp", "unknown: no transparent huge pages in sysfs", true, "", ""};
    const auto open = line->find('['), close = line->find(']');
    const std::string mode =
        open != std::string::npos && close > open ? line->substr(open + 1, close - open - 1) : *line;
    if (mode != "never") return {"thp", "transparent huge pages: " + mode, true, "", ""};
    return {"thp", "transparent huge pages: never", false, "chapter 8's chase on 2 MiB pages gets 4 KiB pages",
            "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled"};
}

Condition load_condition(const std::string& root) {
    const auto line = first_line(root + "/proc/loadavg");
    double load = 0;
    if (!line || !(std::istringstream(*line) >> load))
        return {"load", "unknown: /proc/loadavg is not readable", true, "", ""};
    const int cpus = usable_cpus();
    const std::string state = fmt::format("{:.2f} runnable over the last minute, on {} usable cpus", load, cpus);
    if (load < 0.5 * cpus) return {"load", state, true, "", ""};
    return {"load", state, false,
            "other programs compete for the cpus: measured ratios scatter, and the book's measured checks may "
            "call their verdict inconclusive",
            "wait, or stop what else runs: top lists it"};
}

Condition memory_condition(const std::string& root) {
    std::ifstream in(root + "/proc/meminfo");
    std::string key;
    std::size_t kib = 0;
    while (in >> key) {
        if (key == "MemAvailable:" && in >> kib) break;
        in.ignore(256, '\n');
    }
    if (kib == 0) return {"memory", "unknown: /proc/meminfo gives no MemAvailable", true, "", ""};
    const std::string state = size_text(kib * 1024) + " available";
    if (kib >= 1024 * 1024) return {"memory", state, true, "", ""};
    return {"memory", state, false,
            "the largest chapters allocate a few hundred MiB: they may swap, or refuse to start, and say so",
            "close other programs"};
}

}  // namespace

std::vector<Condition> run_conditions(const std::string& root) {
    return {cpus_condition(),    governor_condition(root),   boost_condition(root),
            smt_condition(root), hypervisor_condition(root), counters_condition(root),
            thp_condition(root), load_condition(root),       memory_condition(root)};
}

nlohmann::json conditions_json(const std::vector<Condition>& conditions) {
    nlohmann::json out = nlohmann::json::array();
    for (const Condition& c : conditions)
        out.push_back({{"item", c.item}, {"state", c.state}, {"fit", c.fit}, {"effect", c.effect}, {"fix", c.fix}});
    return out;
}

}  // namespace cachebook
