// Chapter 6's experiment, second part: the hand-off, the queue and the lock timed, and the hardware counters.
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "lab.hpp"

namespace ch06 {

// ---------------------------------------------------------------- the hand-off

double handoff_once(int cpu_a, int cpu_b, std::uint64_t round_trips) {
    struct alignas(64) Line {
        std::atomic<std::uint64_t> turn{0};
    };
    auto line = std::make_unique<Line>();
    return run_released(2, {cpu_a, cpu_b}, [&](int me) { hand_off(line->turn, me, round_trips); });
}

double handoff_ns(int cpu_a, int cpu_b, std::uint64_t round_trips, int runs) {
    handoff_once(cpu_a, cpu_b, round_trips / 10 + 1);
    double best = 0;
    for (int r = 0; r < runs; ++r) {
        const double seconds = handoff_once(cpu_a, cpu_b, round_trips);
        best = r == 0 ? seconds : std::min(best, seconds);
    }
    return best * 1e9 / (2.0 * static_cast<double>(round_trips));
}

std::string against_transfer_range(double cycles) {
    if (cycles < kNotesTransferCycles[0]) return "below";
    return cycles <= kNotesTransferCycles[1] ? "inside" : "above";
}

double clock_now_ghz(bool quick) {
    return cachebook::estimate_clock_ghz(quick ? 0.005 : 0.02).value_or(0.0);
}

std::optional<double> cycles_at(double ns, double ghz) {
    if (ghz <= 0) return std::nullopt;
    return ns * ghz;
}

// ---------------------------------------------------------------- a queue and a lock

PairRun queue_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t items) {
    const std::size_t line = this_machine_line().bytes;
    LineBuffer indices(2 * line, line);
    auto* head = indices.make<std::atomic<std::uint64_t>>(0);
    auto* tail =
        indices.make<std::atomic<std::uint64_t>>(second_field_offset(spacing, offsetof(QueueIndices, tail), line));
    std::vector<long> ring(kQueueRing);
    std::atomic<std::uint64_t> sum{0};
    std::vector<double> cpu_seconds;
    const QueueEnds queue{*head, *tail, ring, items};
    const double seconds = run_released(
        2, cpus, [&](int me) { me == 0 ? produce(queue) : sum.store(consume(queue)); }, &cpu_seconds);
    if (sum.load() != items * (items + 1) / 2) throw std::runtime_error("queue: the consumer's sum came out wrong");
    return PairRun{seconds, *std::min_element(cpu_seconds.begin(), cpu_seconds.end()) / seconds};
}

PairRun lock_once(Spacing spacing, const std::vector<int>& cpus, std::uint64_t sections, std::uint64_t writes) {
    const std::size_t line = this_machine_line().bytes;
    LineBuffer buffer(2 * line, line);
    std::atomic<bool>* locked = nullptr;
    volatile long* value = nullptr;  // volatile: every write in the section really happens
    if (spacing == Spacing::Packed) {
        auto* guarded = buffer.make<GuardedCounters>(0);
        locked = &guarded->locked;
        value = guarded->value;
    } else {  // the lock on one line, the values one line later
        locked = buffer.make<std::atomic<bool>>(0);
        value = buffer.make<std::array<long, 4>>(line)->data();
    }
    std::vector<double> cpu_seconds;
    const double seconds = run_released(
        2, cpus, [&](int) { hold_and_write(*locked, value, sections, writes); }, &cpu_seconds);
    for (std::uint64_t j = 0; j < 4; ++j)
        if (static_cast<std::uint64_t>(value[j]) != 2 * sections * (writes / 4 + (j < writes % 4 ? 1 : 0)))
            throw std::runtime_error("lock: a guarded value came out wrong");
    return PairRun{seconds, *std::min_element(cpu_seconds.begin(), cpu_seconds.end()) / seconds};
}

std::string case_key(Case c) {
    return c == Case::Queue ? "queue" : "lock";
}

std::uint64_t case_operations(Case c, bool quick) {
    // Short runs, so that some of them fit into one time slice of both threads on a busy machine.
    return (c == Case::Queue ? 50'000u : 10'000u) / (quick ? 4u : 1u);
}

CaseTiming time_case(Case c, const std::vector<int>& cpus, std::uint64_t operations, int runs) {
    auto once = [&](Spacing spacing, std::uint64_t n) {
        return c == Case::Queue ? queue_once(spacing, cpus, n) : lock_once(spacing, cpus, n, kLockWrites);
    };
    CaseTiming timing;
    once(Spacing::Padded, operations / 10 + 1);  // warm-up
    // Alternate, so drift of the machine hits both alike; keep only runs in which
    // both threads ran throughout (a thread switched out leaves the other alone
    // with the line, or spinning), trying up to three times as often as asked.
    for (int attempt = 0; attempt < 3 * runs && timing.counted() < static_cast<std::size_t>(runs); ++attempt) {
        for (auto [spacing, into] :
             {std::pair{Spacing::Packed, &timing.packed}, std::pair{Spacing::Padded, &timing.padded}}) {
            const PairRun run = once(spacing, operations);
            if (run.together()) into->runs.push_back(run.seconds);
        }
        ++timing.attempts;
    }
    return timing;
}

// ---------------------------------------------------------------- hardware counters

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
