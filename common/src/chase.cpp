#include "cachebook/chase.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "cachebook/measure.hpp"

namespace cachebook {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t v, std::size_t to) {
    return (v + to - 1) / to * to;
}

// splitmix64: small, fast, and the same everywhere.
std::uint64_t next_random(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

}  // namespace

std::uint64_t uniform_below(std::uint64_t& state, std::uint64_t bound) {
    if (bound == 0) throw std::invalid_argument("uniform_below: bound must be at least 1");
    // Reject the few values that would make `x % bound` favour small results.
    const std::uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        const std::uint64_t x = next_random(state);
        if (x >= threshold) return x % bound;
    }
}

// [snippet: sattolo]
std::vector<std::uint32_t> single_cycle(std::size_t n, std::uint64_t seed) {
    if (n > std::size_t{UINT32_MAX}) throw std::invalid_argument("single_cycle: at most 2^32 - 1 slots");
    std::vector<std::uint32_t> next(n);
    for (std::size_t i = 0; i < n; ++i) next[i] = static_cast<std::uint32_t>(i);
    std::uint64_t state = seed;
    // Fisher-Yates would draw j from [0, i]; drawing from [0, i) instead
    // (Sattolo) never lets an element stay put, and the result is one cycle.
    for (std::size_t i = n; i-- > 1;) {
        const auto j = static_cast<std::size_t>(uniform_below(state, i));
        std::swap(next[i], next[j]);
    }
    return next;
}
// [end: sattolo]

std::vector<std::uint32_t> random_permutation(std::size_t n, std::uint64_t seed) {
    if (n > std::size_t{UINT32_MAX}) throw std::invalid_argument("random_permutation: at most 2^32 - 1 slots");
    std::vector<std::uint32_t> p(n);
    std::iota(p.begin(), p.end(), std::uint32_t{0});
    std::uint64_t state = seed;
    for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[uniform_below(state, i)]);
    return p;
}

bool is_single_cycle(std::span<const std::uint32_t> next) {
    const std::size_t n = next.size();
    if (n == 0) return false;
    std::vector<bool> seen(n, false);
    std::size_t at = 0;
    for (std::size_t step = 0; step < n; ++step) {
        if (seen[at]) return false;  // came back early: more than one cycle
        seen[at] = true;
        if (next[at] >= n) return false;
        at = next[at];
    }
    return at == 0;
}

bool huge_pages_available() {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;
    if (!std::getline(in, s)) return false;
    return s.find("[always]") != std::string::npos || s.find("[madvise]") != std::string::npos;
}

std::string huge_pages_unavailable_reason() {
#if !defined(__linux__)
    return "this system is not Linux; the book asks for huge pages only through Linux's transparent huge pages";
#else
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;
    if (!std::getline(in, s))
        return "this kernel has no transparent huge pages (no /sys/kernel/mm/transparent_hugepage)";
    if (s.find("[never]") != std::string::npos) return "transparent huge pages are set to never on this system";
    return huge_pages_available() ? "" : fmt::format("transparent huge pages are set to '{}'", s);
#endif
}

bool advise_pages(void* p, std::size_t bytes, PageSize pages) {
#if defined(MADV_HUGEPAGE) && defined(MADV_NOHUGEPAGE)
    return madvise(p, bytes, pages == PageSize::Huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) == 0;
#else
    (void)p, (void)bytes, (void)pages;
    return false;
#endif
}

PageBuffer::PageBuffer(std::size_t bytes, PageSize pages) : bytes_(bytes), pages_(pages) {
    if (bytes == 0) throw std::invalid_argument("PageBuffer: size must be at least 1 byte");
    // Map 2 MiB more than needed, so an aligned start exists inside.
    const std::size_t aligned_bytes = round_up(bytes, kHugePage);
    map_bytes_ = aligned_bytes + kHugePage;
    void* m = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        throw std::runtime_error(fmt::format("mmap of {} bytes failed: {}", map_bytes_, std::strerror(errno)));
    map_ = static_cast<std::byte*>(m);
    const auto addr = reinterpret_cast<std::uintptr_t>(map_);
    data_ = map_ + (round_up(addr, kHugePage) - addr);
    // The advice may be refused (no THP in this kernel); the buffer still works with 4 KiB pages.
    (void)advise_pages(data_, aligned_bytes, pages);
    std::memset(data_, 0, bytes_);  // fault every page in now, not inside a timed loop
}

PageBuffer::PageBuffer(PageBuffer&& other) noexcept
    : map_(std::exchange(other.map_, nullptr)),
      map_bytes_(std::exchange(other.map_bytes_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      pages_(other.pages_) {}

PageBuffer::~PageBuffer() {
    if (map_ != nullptr) munmap(map_, map_bytes_);
}

std::size_t PageBuffer::huge_page_bytes() const {
    return cachebook::huge_page_bytes(data_, bytes_);
}

std::size_t huge_page_bytes(const void* p, std::size_t bytes) {
    const auto lo = reinterpret_cast<std::uintptr_t>(p);
    const auto hi = lo + bytes;
    std::ifstream in("/proc/self/smaps");
    std::string line;
    bool inside = false;
    std::size_t total = 0;
    while (std::getline(in, line)) {
        // A mapping header looks like "7f12a000-7f12c000 rw-p ..."; field lines like "AnonHugePages:  2048 kB".
        const auto dash = line.find('-');
        const auto space = line.find(' ');
        if (dash != std::string::npos && space != std::string::npos && dash < space && line.find(':') > space) {
            try {
                const auto start = static_cast<std::uintptr_t>(std::stoull(line.substr(0, dash), nullptr, 16));
                const auto end =
                    static_cast<std::uintptr_t>(std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16));
                inside = start < hi && end > lo;
            } catch (...) {
                inside = false;
            }
            continue;
        }
        if (inside && line.rfind("AnonHugePages:", 0) == 0) {
            std::istringstream fields(line.substr(14));
            std::size_t kib = 0;
            fields >> kib;
            total += kib * 1024;
        }
    }
    return std::min(total, bytes);
}

const void* link_chase(const PageBuffer& buf, std::size_t nodes, std::size_t node_bytes, std::uint64_t seed) {
    if (node_bytes < sizeof(void*) || node_bytes % sizeof(void*) != 0)
        throw std::invalid_argument(
            fmt::format("link_chase: node size {} is not a multiple of {}", node_bytes, sizeof(void*)));
    if (nodes == 0 || nodes > buf.size() / node_bytes)
        throw std::invalid_argument(
            fmt::format("link_chase: {} nodes of {} bytes do not fit in {} bytes", nodes, node_bytes, buf.size()));
    const std::vector<std::uint32_t> next = single_cycle(nodes, seed);
    std::byte* base = buf.data();
    for (std::size_t i = 0; i < nodes; ++i) {
        void* target = base + static_cast<std::size_t>(next[i]) * node_bytes;
        std::memcpy(base + i * node_bytes, &target, sizeof target);
    }
    return base;
}

// [snippet: chase]
const void* chase(const void* start, std::size_t hops) {
    const void* p = start;
    // Unrolled by eight so the loop counter costs nothing next to the loads;
    // each load still waits for the one before.
    std::size_t i = 0;
    for (; i + 8 <= hops; i += 8) {
        p = *static_cast<const void* const*>(p);
        p = *static_cast<const void* const*>(p);
        p = *static_cast<const void* const*>(p);
        p = *static_cast<const void* const*>(p);
        p = *static_cast<const void* const*>(p);
        p = *static_cast<const void* const*>(p);
        p = *static_cast<const void* const*>(p);
        p = *static_cast<const void* const*>(p);
    }
    for (; i < hops; ++i) p = *static_cast<const void* const*>(p);
    return p;
}
// [end: chase]

double chase_ns_per_hop(const void* start, std::size_t hops, std::size_t warmup_hops, int runs) {
    if (hops == 0 || runs < 1) throw std::invalid_argument("chase_ns_per_hop: hops and runs must be at least 1");
    const void* p = start;
    double best = 1e300;
    // Warm up before every run: on a shared core another program may
    // have run in between and evicted the working set.
    for (int r = 0; r < runs; ++r) best = std::min(best, chase_run_ns(p, hops, warmup_hops));
    return best;
}

double chase_run_ns(const void*& at, std::size_t hops, std::size_t warmup_hops) {
    if (hops == 0) throw std::invalid_argument("chase_run_ns: hops must be at least 1");
    at = chase(at, warmup_hops);
    const auto t0 = Clock::now();
    at = chase(at, hops);
    const double seconds = seconds_since(t0);
    do_not_optimize(at);
    return seconds / static_cast<double>(hops) * 1e9;
}

}  // namespace cachebook
