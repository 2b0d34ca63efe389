// Chapter 6: the MESI model runs, the padding sized at run time, and the loops the threads run.
#include "false_sharing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ch06 {

// [snippet: model_two_counters]
cachebook::CoherenceStats model_two_counters(std::size_t offset_b, std::uint64_t writes_per_core, std::size_t burst,
                                             std::size_t line_bytes) {
    using cachebook::AccessKind;
    // An increment needs the line owned: one write access per ++.
    std::vector<std::vector<cachebook::CoreAccess>> streams(2);
    streams[0].assign(writes_per_core, {0, AccessKind::Write});
    streams[1].assign(writes_per_core, {offset_b, AccessKind::Write});
    cachebook::CoherenceModel model(2, line_bytes);
    model.run(cachebook::interleave(streams, burst));
    return model.total();
}
// [end: model_two_counters]

// [snippet: portable]
#ifdef __cpp_lib_hardware_interference_size
constexpr std::size_t kDestructive = std::hardware_destructive_interference_size;
constexpr std::size_t kConstructive = std::hardware_constructive_interference_size;
#else
constexpr std::size_t kDestructive = 64;  // the common line size, where the library does not say
constexpr std::size_t kConstructive = 64;
#endif

// C++17: the distance that keeps two objects from interfering, from the compiler.
struct CountersPortable {
    alignas(kDestructive) long thread0_count;
    alignas(kDestructive) long thread1_count;
};
// [end: portable]

// [snippet: portable_layout]
PortableLayout portable_layout() {
    return {sizeof(CountersPortable),
            alignof(CountersPortable),
            offsetof(CountersPortable, thread0_count),
            offsetof(CountersPortable, thread1_count),
            kDestructive,
            kConstructive};
}
// [end: portable_layout]

// [snippet: padding_line_cpp]
static bool power_of_two(std::size_t n) {
    return n != 0 && (n & (n - 1)) == 0;
}

PaddingLine padding_line(const cachebook::Machine& machine) {
    if (const auto line = machine.line_bytes(); line && power_of_two(*line))
        return {*line, cachebook::source_name(machine.line_source()), ""};
    const std::string why =
        machine.line_bytes()
            ? fmt::format("the machine reports a line of {} bytes, not a power of two", *machine.line_bytes())
            : machine.why_unknown("the line size");
    return {kDestructive, "default",
            why + "; padding falls back to the compiler's std::hardware_destructive_interference_size"};
}

LineBuffer::LineBuffer(std::size_t bytes, std::size_t line_bytes) {
    if (!power_of_two(line_bytes))
        throw std::invalid_argument(fmt::format("LineBuffer: a line of {} bytes is not a power of two", line_bytes));
    const std::size_t align = std::max(line_bytes, alignof(std::max_align_t));  // both powers of two
    size_ = std::max<std::size_t>(1, (bytes + align - 1) / align) * align;      // aligned_alloc's rule
    auto* raw = static_cast<std::byte*>(std::aligned_alloc(align, size_));
    if (raw == nullptr) throw std::bad_alloc();
    std::memset(raw, 0, size_);
    bytes_.reset(raw);
}

void LineBuffer::check_room(std::size_t offset, std::size_t size, std::size_t align) const {
    if (offset % align != 0 || offset > size_ || size > size_ - offset)
        throw std::out_of_range(fmt::format("LineBuffer: {} bytes at offset {} do not fit in {} (alignment {})", size,
                                            offset, size_, align));
}
// [end: padding_line_cpp]

// [snippet: model_workers]
cachebook::CoherenceStats model_workers(std::size_t elem_size, std::size_t field_offset, int workers,
                                        std::uint64_t writes_per_worker, std::size_t burst) {
    std::vector<std::vector<cachebook::CoreAccess>> streams(static_cast<std::size_t>(workers));
    for (int w = 0; w < workers; ++w)
        streams[static_cast<std::size_t>(w)].assign(
            writes_per_worker,
            {static_cast<std::uint64_t>(w) * elem_size + field_offset, cachebook::AccessKind::Write});
    cachebook::CoherenceModel model(workers);
    model.run(cachebook::interleave(streams, burst));
    return model.total();
}
// [end: model_workers]

// [snippet: monitor_setup]
// One layout D of the dashboard: the field offsets come from the compiler.
template <class D>
static MonitorRun run_dashboard(Dashboard layout, std::uint64_t rounds, std::uint64_t pass_every) {
    using cachebook::AccessKind;
    constexpr std::size_t elem = sizeof(D::per_thread[0]);
    constexpr std::size_t requests = offsetof(Stats, requests), bytes = offsetof(Stats, bytes_sent),
                          errors = offsetof(Stats, errors);
    static_assert(offsetof(StatsAligned, requests) == requests && offsetof(StatsAligned, bytes_sent) == bytes &&
                  offsetof(StatsAligned, errors) == errors);
    constexpr std::uint64_t total = offsetof(D, total);
    constexpr int monitor = kHandlers;

    MonitorRun run;
    run.layout = layout;
    run.rounds = rounds;
    run.pass_every = pass_every;
    run.total_offset = total;
    cachebook::CoherenceModel model(kHandlers + 1);
    // [end: monitor_setup]
    // [snippet: monitor_stream]
    for (std::uint64_t r = 1; r <= rounds; ++r) {
        for (int h = 0; h < kHandlers; ++h) {  // one request per handler
            const std::uint64_t base = static_cast<std::uint64_t>(h) * elem;
            model.access(h, base + requests, AccessKind::Write);
            model.access(h, base + bytes, AccessKind::Write);
        }
        if (r % pass_every == 0) {  // the monitor's pass: total += every field of every handler
            ++run.passes;
            for (int h = 0; h < kHandlers; ++h) {
                const std::uint64_t base = static_cast<std::uint64_t>(h) * elem;
                for (std::size_t field : {requests, bytes, errors})
                    model.access(monitor, base + field, AccessKind::Read);
                model.access(monitor, total, AccessKind::Write);
            }
        }
    }
    // [end: monitor_stream]
    // [snippet: monitor_counts]
    run.all = model.total();
    run.monitor = model.of_core(monitor);
    for (int h = 0; h < kHandlers; ++h) run.handlers += model.of_core(h);
    return run;
}

MonitorRun model_stats_monitor(Dashboard layout, std::uint64_t rounds, std::uint64_t pass_every) {
    if (pass_every == 0) throw std::invalid_argument("model_stats_monitor: pass_every must be at least 1");
    switch (layout) {
        case Dashboard::Packed:
            return run_dashboard<DashboardPacked>(layout, rounds, pass_every);
        case Dashboard::TotalApart:
            return run_dashboard<DashboardTotalApart>(layout, rounds, pass_every);
        case Dashboard::Padded:
            return run_dashboard<DashboardPadded>(layout, rounds, pass_every);
    }
    throw std::invalid_argument("model_stats_monitor: unknown layout");
}
// [end: monitor_counts]

// [snippet: bump]
// `x = x + 1` on a volatile is one load and one store per iteration (C++20
// deprecates `++` on volatile; this is the same thing).
void bump(volatile long* counter, std::uint64_t iterations) {
    for (std::uint64_t i = 0; i < iterations; ++i) *counter = *counter + 1;
}
// A read-modify-write that must own the line: a `lock`-prefixed instruction on x86.
void bump(std::atomic<long>* counter, std::uint64_t iterations) {
    for (std::uint64_t i = 0; i < iterations; ++i) counter->fetch_add(1, std::memory_order_relaxed);
}
// [end: bump]

// [snippet: handoff]
// Thread 0 waits for an even value and writes the next odd one; thread 1
// the reverse. Every write must reach the other core before it can answer.
void hand_off(std::atomic<std::uint64_t>& turn, int me, std::uint64_t round_trips) {
    const auto parity = static_cast<std::uint64_t>(me);
    for (std::uint64_t k = parity; k < 2 * round_trips; k += 2) {
        while (turn.load(std::memory_order_acquire) != k) {
        }
        turn.store(k + 1, std::memory_order_release);
    }
}
// [end: handoff]

// [snippet: increments_per_move]
std::optional<double> increments_per_move(double handoff_ns, double extra_ns) {
    if (extra_ns <= 0) return std::nullopt;
    return handoff_ns / extra_ns;
}
// [end: increments_per_move]

// [snippet: queue_model]
std::size_t second_field_offset(Spacing spacing, std::size_t packed_offset, std::size_t line_bytes) {
    return spacing == Spacing::Packed ? packed_offset : line_bytes;
}

cachebook::CoherenceStats model_queue(Spacing spacing, std::uint64_t items, std::uint64_t ring, std::uint64_t lag,
                                      std::uint64_t refresh, std::size_t line_bytes) {
    using cachebook::AccessKind;
    if (ring == 0 || refresh == 0 || lag >= ring)
        throw std::invalid_argument("model_queue: ring and refresh at least 1, lag below the ring");
    const std::uint64_t head = 0, tail = second_field_offset(spacing, offsetof(QueueIndices, tail), line_bytes);
    const std::uint64_t slots = 4 * line_bytes;  // the ring starts well clear of both indices
    auto slot = [&](std::uint64_t i) { return slots + (i % ring) * sizeof(long); };
    cachebook::CoherenceModel model(2, line_bytes);
    for (std::uint64_t step = 0; step < items + lag; ++step) {
        if (step < items) {  // the producer's item `step`
            if (step % refresh == 0) model.access(0, head, AccessKind::Read);
            model.access(0, slot(step), AccessKind::Write);
            model.access(0, tail, AccessKind::Write);
        }
        if (step >= lag) {  // the consumer's item, `lag` behind
            const std::uint64_t item = step - lag;
            if (item % refresh == 0) model.access(1, tail, AccessKind::Read);
            model.access(1, slot(item), AccessKind::Read);
            model.access(1, head, AccessKind::Write);
        }
    }
    return model.total();
}
// [end: queue_model]

// [snippet: queue_threads]
void produce(const QueueEnds& q) {
    std::uint64_t head_seen = 0;  // the consumer's index, as last read
    for (std::uint64_t t = 0; t < q.items; ++t) {
        while (t - head_seen == kQueueRing) head_seen = q.head.load(std::memory_order_acquire);  // full
        q.ring[t % kQueueRing] = static_cast<long>(t + 1);
        q.tail.store(t + 1, std::memory_order_release);
    }
}

std::uint64_t consume(const QueueEnds& q) {
    std::uint64_t tail_seen = 0, total = 0;  // the producer's index, as last read
    for (std::uint64_t h = 0; h < q.items; ++h) {
        while (h == tail_seen) tail_seen = q.tail.load(std::memory_order_acquire);  // empty
        total += static_cast<std::uint64_t>(q.ring[h % kQueueRing]);
        q.head.store(h + 1, std::memory_order_release);
    }
    return total;
}
// [end: queue_threads]

// [snippet: lock_model]
cachebook::CoherenceStats model_lock(Spacing spacing, std::uint64_t sections, std::uint64_t writes,
                                     std::size_t line_bytes) {
    using cachebook::AccessKind;
    const std::uint64_t locked = 0, values = second_field_offset(spacing, offsetof(GuardedCounters, value), line_bytes);
    cachebook::CoherenceModel model(2, line_bytes);
    for (std::uint64_t s = 0; s < sections; ++s) {
        const int holder = static_cast<int>(s % 2), waiter = 1 - holder;
        model.access(holder, locked, AccessKind::Write);  // acquire
        for (std::uint64_t j = 0; j < writes; ++j) {
            model.access(waiter, locked, AccessKind::Read);  // the waiter spins on the lock
            model.access(holder, values + (j % 4) * sizeof(long), AccessKind::Write);
        }
        model.access(holder, locked, AccessKind::Write);  // release
    }
    return model.total();
}
// [end: lock_model]

// [snippet: lock_threads]
void hold_and_write(std::atomic<bool>& locked, volatile long* value, std::uint64_t sections, std::uint64_t writes) {
    for (std::uint64_t s = 0; s < sections; ++s) {
        while (locked.exchange(true, std::memory_order_acquire))
            while (locked.load(std::memory_order_relaxed)) {
            }  // spin on a read until the holder lets go
        for (std::uint64_t j = 0; j < writes; ++j) value[j % 4] = value[j % 4] + 1;
        locked.store(false, std::memory_order_release);
    }
}
// [end: lock_threads]

}  // namespace ch06
