// Chapter 6's hardware counters: perf stat's cache-misses and LLC-load-misses around a race,
// counted with perf_event_open, or why there are none.
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "lab.hpp"

namespace ch06 {

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

std::pair<CounterReading, CounterReading> count_race_misses(const std::vector<int>& cpus, std::uint64_t increments) {
    CounterReading packed, padded;
    if (cpus.size() < 2) {
        packed.why_not = padded.why_not = "needs 2 cpus";
        return {packed, padded};
    }
    for (auto [reading, spacing] : {std::pair{&packed, Spacing::Packed}, std::pair{&padded, Spacing::Padded}})
        *reading = count_misses(  // a structured binding is captured by copy: clang allows no other
            [&, spacing = spacing] { race_once(Op::AtomicFetchAdd, spacing, 2, cpus, increments); });
    return {packed, padded};
}

}  // namespace ch06
