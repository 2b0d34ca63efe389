#pragma once
/// @file spin_barrier.hpp
/// @brief A barrier whose waiting threads spin, for threads that meet many times a second.
///
/// std::barrier may put a waiting thread to sleep; waking it takes microseconds, and on a
/// virtual machine, whose idle CPU the host has descheduled, a trip through the hypervisor.
/// A spinning thread sees the last arrival at its next read of the barrier. It yields at
/// every turn, so that threads sharing one core take turns instead of spinning out their
/// time slices.

#include <atomic>
#include <thread>

namespace cachebook {

/// Threads meet at arrive_and_wait(); the last of `parties` to arrive releases the others,
/// and the barrier is ready for the next round.
class SpinBarrier {
public:
    explicit SpinBarrier(int parties) : parties_(parties) {}
    void arrive_and_wait() {
        const int gen = generation_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) == parties_ - 1) {
            arrived_.store(0, std::memory_order_relaxed);
            generation_.store(gen + 1, std::memory_order_release);
        } else {
            while (generation_.load(std::memory_order_acquire) == gen) std::this_thread::yield();
        }
    }

private:
    const int parties_;
    alignas(64) std::atomic<int> arrived_{0};
    alignas(64) std::atomic<int> generation_{0};
};

}  // namespace cachebook
