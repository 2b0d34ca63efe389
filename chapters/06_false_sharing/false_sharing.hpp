#pragma once
// Chapter 6: false sharing. The layouts, the MESI model runs and the threads' loops the chapter teaches.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cachebook/coherence.hpp"
#include "cachebook/machine.hpp"

namespace ch06 {

// [snippet: counters]
// Two counters, each written by one thread only. Nothing is shared...
struct Counters {
    long thread0_count;
    long thread1_count;
};

// ...except the line: pad each counter out to a line of its own, by hand,
struct CountersCharPad {
    long thread0_count;
    char pad0[64 - sizeof(long)];
    long thread1_count;
    char pad1[64 - sizeof(long)];
};

// or let the compiler do it.
struct CountersAligned {
    alignas(64) long thread0_count;
    alignas(64) long thread1_count;
};
// [end: counters]

// [snippet: portable_api]
/// CountersPortable (false_sharing.cpp) as this compiler laid it out, and the
/// two interference sizes of its target.
struct PortableLayout {
    std::size_t size = 0, align = 0, thread0_offset = 0, thread1_offset = 0;
    std::size_t destructive = 0, constructive = 0;
};
PortableLayout portable_layout();
// [end: portable_api]

// [snippet: padding_line]
/// The line size the run-time padding uses, and where it came from.
struct PaddingLine {
    std::size_t bytes = 0;
    std::string source;       // the machine module's source ("sysfs", "hwloc", ...), or "default"
    std::string why_default;  // empty when the machine reported its line size
};
/// The line size `machine` reports; when it reports none, the compiler's
/// std::hardware_destructive_interference_size for this target, with the reason.
PaddingLine padding_line(const cachebook::Machine& machine);

/// Zeroed memory that starts on a line boundary of a size known only at run
/// time; objects are placed in it at byte offsets chosen at run time.
class LineBuffer {
public:
    /// `bytes` rounded up to whole lines; `line_bytes` a power of two (else std::invalid_argument).
    LineBuffer(std::size_t bytes, std::size_t line_bytes);
    /// Starts the life of a T{} at `offset` (inside the buffer, aligned for T) and returns it.
    template <class T>
    T* make(std::size_t offset) {
        static_assert(std::is_trivially_destructible_v<T>, "the buffer never runs destructors");
        check_room(offset, sizeof(T), alignof(T));
        return ::new (static_cast<void*>(bytes_.get() + offset)) T{};
    }
    [[nodiscard]] const std::byte* data() const { return bytes_.get(); }

private:
    void check_room(std::size_t offset, std::size_t size, std::size_t align) const;
    struct Free {
        void operator()(std::byte* p) const { std::free(p); }
    };
    std::unique_ptr<std::byte, Free> bytes_;
    std::size_t size_ = 0;
};
// [end: padding_line]

// [snippet: runtime_padding]
enum class Spacing { Packed, Padded };

/// One counter per thread, `stride` bytes apart in a line-aligned buffer: packed,
/// the stride is sizeof(Counter); padded, it is the line size read at run time,
/// so each counter starts a line of its own on whatever machine runs this.
template <class Counter>
class CounterSlots {
public:
    CounterSlots(std::size_t count, Spacing spacing, std::size_t line_bytes)
        : stride_(spacing == Spacing::Packed ? sizeof(Counter) : line_bytes), buffer_(count * stride_, line_bytes) {
        for (std::size_t i = 0; i < count; ++i) slots_.push_back(buffer_.make<Counter>(i * stride_));
    }
    Counter& operator[](std::size_t i) { return *slots_.at(i); }
    [[nodiscard]] std::size_t stride() const { return stride_; }

private:
    std::size_t stride_;
    LineBuffer buffer_;
    std::vector<Counter*> slots_;
};
// [end: runtime_padding]

// [snippet: worker_state]
// Each worker updates only workers[i]; 24-byte elements still share lines.
struct WorkerState {
    int worker_id;         // set once
    long items_processed;  // ++ per item, by its own worker
    long errors;           // rare
};

// Aligning the type rounds its size up to a whole line.
struct alignas(64) WorkerStateAligned {
    int worker_id;
    long items_processed;
    long errors;
};
// [end: worker_state]

// [snippet: stats]
// Request handlers update their own element; a monitor sums them all.
struct Stats {
    long requests;
    long bytes_sent;
    long errors;
};
struct alignas(64) StatsAligned {
    long requests;
    long bytes_sent;
    long errors;
};

inline constexpr int kHandlers = 4;

// The monitor's running total declared right after the array: it lands in the
// line that also holds the last handlers' counters.
struct DashboardPacked {
    Stats per_thread[kHandlers];
    long total;
};
// The total moved to a line of its own; the handlers still share lines.
struct DashboardTotalApart {
    Stats per_thread[kHandlers];
    alignas(64) long total;
};
// Every handler and the monitor on lines of their own.
struct DashboardPadded {
    StatsAligned per_thread[kHandlers];
    alignas(64) long total;
};
// [end: stats]

// [snippet: queue_lock]
// A single-producer, single-consumer ring buffer's two indices, side by side:
// the producer writes only `tail`, the consumer only `head`.
struct QueueIndices {
    std::atomic<std::uint64_t> head;  // next slot to read; written by the consumer
    std::atomic<std::uint64_t> tail;  // next slot to write; written by the producer
};

// A spinlock right beside the data it guards.
struct GuardedCounters {
    std::atomic<bool> locked;
    long value[4];  // changed only by the thread that holds `locked`
};
// [end: queue_lock]

// [snippet: model_api]
/// Two cores; core 0 increments a counter at byte 0, core 1 one at byte
/// `offset_b`, `writes_per_core` times each, in bursts of `burst` writes, on lines of `line_bytes`.
cachebook::CoherenceStats model_two_counters(std::size_t offset_b, std::uint64_t writes_per_core, std::size_t burst,
                                             std::size_t line_bytes = 64);

/// `workers` cores, worker i incrementing the field at `field_offset` of element
/// i of an array of `elem_size`-byte elements (the array starts a line),
/// `writes_per_worker` times, in bursts of `burst`.
cachebook::CoherenceStats model_workers(std::size_t elem_size, std::size_t field_offset, int workers,
                                        std::uint64_t writes_per_worker, std::size_t burst);

enum class Dashboard { Packed, TotalApart, Padded };

/// The stats example: kHandlers handler cores (0..3) and a monitor (core 4).
/// A round is one request per handler in turn (requests++, bytes_sent += n);
/// after every `pass_every` rounds the monitor reads each handler's three
/// fields and adds them into `total` (a write per handler).
struct MonitorRun {
    Dashboard layout = Dashboard::Packed;
    std::uint64_t rounds = 0, pass_every = 0, passes = 0;
    std::uint64_t total_offset = 0;  // where `total` sits
    cachebook::CoherenceStats all, handlers, monitor;
};
MonitorRun model_stats_monitor(Dashboard layout, std::uint64_t rounds, std::uint64_t pass_every);
// [end: model_api]

// [snippet: threads_api]
/// One thread's loop: `iterations` increments of its own counter.
void bump(volatile long* counter, std::uint64_t iterations);
void bump(std::atomic<long>* counter, std::uint64_t iterations);

/// Thread `me` (0 or 1) of a ping-pong on one flag: `round_trips` hand-offs each way.
void hand_off(std::atomic<std::uint64_t>& turn, int me, std::uint64_t round_trips);
/// If each move of the line stalls a core for one hand-off of `handoff_ns`, and
/// packed costs `extra_ns` more per increment than padded, the line moved about
/// once every handoff_ns / extra_ns increments; nothing when there is no extra cost.
std::optional<double> increments_per_move(double handoff_ns, double extra_ns);
// [end: threads_api]

// [snippet: cases_api]
/// Where the second hot field of a case sits, the first starting a line: at
/// `packed_offset` (where the struct puts it) or one line later (padded).
std::size_t second_field_offset(Spacing spacing, std::size_t packed_offset, std::size_t line_bytes);

/// The model's queue: a producer (core 0) and a consumer (core 1) running at
/// once, the consumer `lag` items behind, taking turns item by item. Per item
/// the producer writes a slot of a ring of `ring` longs and then `tail`; the
/// consumer reads its slot and then writes `head`; every `refresh` items each
/// reads the other's index (its cached copy is used up). `tail` sits at byte
/// 8 (packed) or one line after `head` (padded); the ring lies on lines of its own.
cachebook::CoherenceStats model_queue(Spacing spacing, std::uint64_t items, std::uint64_t ring, std::uint64_t lag,
                                      std::uint64_t refresh, std::size_t line_bytes = 64);

/// What both ends of the queue share: the two indices and a ring of kQueueRing
/// slots, through which the producer passes the numbers 1 .. `items`.
inline constexpr std::uint64_t kQueueRing = 1024;
struct QueueEnds {
    std::atomic<std::uint64_t>& head;
    std::atomic<std::uint64_t>& tail;
    std::vector<long>& ring;
    std::uint64_t items;
};
/// The producer's loop and the consumer's; consume returns the sum of what it took.
void produce(const QueueEnds& q);
std::uint64_t consume(const QueueEnds& q);

/// The model's lock: `sections` critical sections, held by core 0 and core 1
/// in turn. A section: the holder writes `locked` (acquire), then
/// `writes` times the waiter reads `locked` (it spins) and the holder writes
/// value[j % 4], then the holder writes `locked` (release). The values start
/// at byte 8 (packed) or one line after `locked` (padded).
cachebook::CoherenceStats model_lock(Spacing spacing, std::uint64_t sections, std::uint64_t writes,
                                     std::size_t line_bytes = 64);

/// One thread of the lock: `sections` times, take the lock, add 1 to the
/// guarded values `writes` times (value[j % 4]), let go.
void hold_and_write(std::atomic<bool>& locked, volatile long* value, std::uint64_t sections, std::uint64_t writes);
// [end: cases_api]

}  // namespace ch06
