// Hardware counters: perf_event_open in this process, perf stat as a child, and why neither counts.
#include "cachebook/perf_counters.hpp"

#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cachebook/measure.hpp"

namespace cachebook {

std::string why_no_counters(int err, int paranoid) {
    switch (err) {
        case ENOENT:
        case EOPNOTSUPP:
        case ENODEV:
            return fmt::format("this machine exposes no hardware counters (perf_event_open: {})", std::strerror(err));
        case EACCES:
        case EPERM:
            return fmt::format("not allowed for this user (perf_event_open: {}; kernel.perf_event_paranoid = {})",
                               std::strerror(err), paranoid);
        case ENOSYS:
            return "this kernel has no perf events (perf_event_open: not implemented)";
        default:
            return fmt::format("perf_event_open failed: {}", std::strerror(err));
    }
}

namespace {

int perf_paranoid() {
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    int level = -99;
    return (in >> level) ? level : -99;
}

// Opens one user-space counter for this process and the threads it starts later; -errno on failure.
int open_counter(std::uint32_t type, std::uint64_t config) {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = type;
    attr.config = config;
    attr.disabled = 1;
    attr.inherit = 1;  // count the race's threads too (their counts arrive when they exit)
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    return fd < 0 ? -errno : static_cast<int>(fd);
}

}  // namespace

CounterReading count_misses(const std::function<void()>& work) {
    CounterReading reading;
    // The events perf names cache-misses and LLC-load-misses.
    const int misses = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES);
    const int llc = open_counter(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
                                                         (PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
    if (misses < 0 || llc < 0) {
        reading.why_not = why_no_counters(misses < 0 ? -misses : -llc, perf_paranoid());
        for (int fd : {misses, llc})
            if (fd >= 0) close(fd);
        work();  // the work still runs, so a caller's timing or checks see it
        return reading;
    }
    for (int fd : {misses, llc}) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    work();
    for (int fd : {misses, llc}) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    std::uint64_t counts[2] = {0, 0};
    const bool read_both = read(misses, &counts[0], sizeof(std::uint64_t)) == sizeof(std::uint64_t) &&
                           read(llc, &counts[1], sizeof(std::uint64_t)) == sizeof(std::uint64_t);
    close(misses);
    close(llc);
    if (!read_both) {
        reading.why_not = "the counters opened but could not be read";
        return reading;
    }
    reading.available = true;
    reading.cache_misses = counts[0];
    reading.llc_load_misses = counts[1];
    return reading;
}

// ---- From the perf tool ------------------------------------------------------------------------

std::string_view perf_state_name(PerfState s) {
    switch (s) {
        case PerfState::NotInstalled:
            return "perf is not installed";
        case PerfState::NoPermission:
            return "perf may not open counters here (permission)";
        case PerfState::NotSupported:
            return "perf reports the event as <not supported>";
        case PerfState::Works:
            return "perf counts the event";
    }
    return "unknown";
}

PerfState parse_perf_probe(const std::string& output, int status) {
    if (status == 127 || output.find("not found") != std::string::npos) return PerfState::NotInstalled;
    if (output.find("<not supported>") != std::string::npos) return PerfState::NotSupported;
    if (output.find("<not counted>") != std::string::npos) return PerfState::NotSupported;
    if (output.find("ermission") != std::string::npos || output.find("paranoid") != std::string::npos ||
        output.find("Access to performance monitoring") != std::string::npos)
        return PerfState::NoPermission;
    if (status != 0) return PerfState::NotSupported;
    // -x, lines start with the count: "12345,,cache-misses,..."
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) return PerfState::Works;
    return PerfState::NotSupported;
}

std::optional<std::uint64_t> parse_perf_count(const std::string& output, const std::string& event) {
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);) {
        const auto comma = line.find(',');
        if (comma == std::string::npos || line.find("," + event) == std::string::npos) continue;
        const std::string count = line.substr(0, comma);
        if (count.empty() || !std::all_of(count.begin(), count.end(), [](char c) { return std::isdigit(c) != 0; }))
            return std::nullopt;
        return std::stoull(count);
    }
    return std::nullopt;
}

PerfProbe probe_perf(const std::string& event) {
    const auto which = cachebook::run_command("command -v perf 2>&1");
    if (which.status != 0) return {PerfState::NotInstalled, "no perf on PATH"};
    const auto result = cachebook::run_command(fmt::format("perf stat -x, -e {} -- true 2>&1", event));
    PerfProbe probe{parse_perf_probe(result.output, result.status), ""};
    std::istringstream in(result.output);
    for (std::string line; std::getline(in, line);)
        if (line.find(event) != std::string::npos || probe.detail.empty()) probe.detail = line;
    return probe;
}

}  // namespace cachebook
