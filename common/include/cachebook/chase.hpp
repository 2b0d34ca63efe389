#pragma once
/// @file chase.hpp
/// @brief Pointer chasing: a random single-cycle permutation, memory with a
/// chosen page size, and a dependent chase through it.
///
/// A chase `p = *p` cannot overlap two loads (the next address is the value
/// of the last load) and, over a random cycle, gives the prefetcher nothing to
/// guess. So its time per hop is the latency of wherever the data lives.

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cachebook {

/// A uniform integer in [0, bound) from a 64-bit generator state, by
/// rejection, so the result is the same with every standard library.
/// `bound` must be at least 1.
std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t bound);

/// A random cyclic permutation of 0..n-1 (Sattolo's variant of the
/// Fisher-Yates shuffle, seeded): `next[i]` is the slot after slot i, and
/// following `next` from any slot visits all n slots once before returning.
/// n = 0 gives an empty vector; n = 1 gives {0}.
std::vector<std::uint32_t> single_cycle(std::size_t n, std::uint64_t seed);

/// True when following `next` from slot 0 visits every slot exactly once and
/// comes back to 0 after next.size() steps (every entry must be in range).
bool is_single_cycle(std::span<const std::uint32_t> next);

/// Which pages back a PageBuffer.
enum class PageSize {
    Small,  ///< 4 KiB pages (madvise MADV_NOHUGEPAGE)
    Huge,   ///< transparent huge pages where the kernel grants them (madvise MADV_HUGEPAGE)
};

/// True when the kernel offers transparent huge pages to a program that asks
/// (sysfs `transparent_hugepage/enabled` is `always` or `madvise`).
bool huge_pages_available();

/// Why a program cannot have transparent huge pages here ("transparent huge pages are set to
/// never", "this kernel has no transparent huge pages", "not Linux"), or empty when it can.
std::string huge_pages_unavailable_reason();

/// Advises the kernel to back [p, p + bytes) with the chosen page size (madvise; p and bytes
/// whole 2 MiB pages for Huge to take effect). Only a hint: false when the kernel refused it or
/// has no such advice; the memory works the same either way. Advise before the first touch.
bool advise_pages(void* p, std::size_t bytes, PageSize pages);

/// Bytes of [p, p + bytes) the kernel backs with huge pages now (AnonHugePages of
/// /proc/self/smaps); 0 when unknown.
std::size_t huge_page_bytes(const void* p, std::size_t bytes);

/// Anonymous memory from mmap, aligned to 2 MiB, advised to the chosen page
/// size and touched once (so page faults happen before any timing).
/// Unmapped on destruction. Throws std::runtime_error if mmap fails.
class PageBuffer {
public:
    PageBuffer(std::size_t bytes, PageSize pages);
    ~PageBuffer();
    PageBuffer(const PageBuffer&) = delete;
    PageBuffer& operator=(const PageBuffer&) = delete;
    PageBuffer(PageBuffer&& other) noexcept;
    PageBuffer& operator=(PageBuffer&&) = delete;

    [[nodiscard]] std::byte* data() const { return data_; }
    [[nodiscard]] std::size_t size() const { return bytes_; }
    [[nodiscard]] PageSize pages() const { return pages_; }
    /// Bytes of this buffer the kernel backs with huge pages now
    /// (AnonHugePages of /proc/self/smaps); 0 when unknown.
    [[nodiscard]] std::size_t huge_page_bytes() const;

private:
    std::byte* map_ = nullptr;
    std::size_t map_bytes_ = 0;
    std::byte* data_ = nullptr;
    std::size_t bytes_ = 0;
    PageSize pages_;
};

/// Lays a chase over the first `nodes * node_bytes` bytes of `buf`: node i
/// starts at byte i * node_bytes and its first word points to node next[i]
/// of a single_cycle(nodes, seed). Returns the start (node 0).
/// Throws std::invalid_argument if it does not fit or node_bytes < sizeof(void*).
const void* link_chase(const PageBuffer& buf, std::size_t nodes, std::size_t node_bytes, std::uint64_t seed);

/// Follows `hops` pointers from `start` and returns where it ended.
/// Every load depends on the one before it.
const void* chase(const void* start, std::size_t hops);

/// Best-of-`runs` nanoseconds per hop of a chase of `hops` hops from
/// `start`. Every run is preceded by `warmup_hops` untimed hops (which bring
/// the data back in). Short runs and many of them suit a shared, busy core:
/// the best run is the one no other program interrupted.
double chase_ns_per_hop(const void* start, std::size_t hops, std::size_t warmup_hops, int runs);
/// One such run from `at`: `warmup_hops` untimed, then `hops` timed; `at` is left where the
/// chase stopped, so the next run goes on along the cycle. Nanoseconds per timed hop.
double chase_run_ns(const void*& at, std::size_t hops, std::size_t warmup_hops);

// Index-based orders (used by chapters 5 and 7).

/// A random permutation of 0 .. n-1 (Fisher-Yates with uniform_below), fixed by `seed`.
std::vector<std::uint32_t> random_permutation(std::size_t n, std::uint64_t seed = 1);

/// Follows `hops` links from `start` and returns the slot reached. Each load
/// needs the one before it: the chase a CPU cannot overlap.
inline std::uint32_t chase(const std::uint32_t* next, std::uint32_t start, std::size_t hops) {
    std::uint32_t i = start;
    for (std::size_t h = 0; h < hops; ++h) i = next[i];
    return i;
}

}  // namespace cachebook
