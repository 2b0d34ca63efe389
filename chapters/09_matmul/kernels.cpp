// Chapter 9's plumbing under the lesson: which instruction sets this build and CPU can run,
// the lists of micro-kernels, aligned buffers and the fixed random fill.
#include "kernels.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <stdexcept>
#include <thread>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "cachebook/chase.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"

namespace ch09 {

std::string isa_name(Isa isa) {
    switch (isa) {
        case Isa::Scalar:
            return "scalar";
        case Isa::Avx2:
            return "avx2";
        case Isa::Avx512:
            return "avx512";
        case Isa::Neon:
            return "neon";
    }
    return "?";
}

bool isa_supported(Isa isa) {
    const auto f = cachebook::cpu_features();
    switch (isa) {
        case Isa::Scalar:
            return true;
        case Isa::Avx2:
            return f.avx2 && f.fma && detail::avx2_built();
        case Isa::Avx512:
            return f.avx512f && f.avx2 && f.fma && detail::avx512_built();
        case Isa::Neon:
            return f.neon && detail::neon_built();
    }
    return false;
}

std::string isa_unavailable_reason(Isa isa) {
    if (isa_supported(isa)) return "";
    const auto f = cachebook::cpu_features();
    if (isa == Isa::Avx2 && !(f.avx2 && f.fma)) return "this CPU has no AVX2 + FMA";
    if (isa == Isa::Avx512 && !(f.avx512f && f.avx2 && f.fma)) return "this CPU has no AVX-512";
    if (isa == Isa::Neon && !f.neon) return "this CPU has no NEON (Advanced SIMD)";
#if defined(__x86_64__)
    return "this build has no " + isa_name(isa) + " kernels (built with -DCACHEBOOK_PORTABLE=ON for plain x86-64)";
#else
    return "this build has no " + isa_name(isa) + " kernels (built for another architecture)";
#endif
}

Isa best_isa() {
    for (Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Neon})
        if (isa_supported(isa)) return isa;
    return Isa::Scalar;
}

Isa step4_isa() {
    if (isa_supported(Isa::Avx2)) return Isa::Avx2;
    if (isa_supported(Isa::Neon)) return Isa::Neon;
    return Isa::Scalar;
}

int simd_width(Isa isa) {
    switch (isa) {
        case Isa::Avx512:
            return 16;
        case Isa::Avx2:
            return 8;
        case Isa::Neon:
            return 4;  // 128-bit registers
        case Isa::Scalar:
            break;
    }
    return 1;
}

void detail::require_isa(Isa isa) {
    if (!isa_supported(isa))
        throw std::invalid_argument("the " + isa_name(isa) + " kernels cannot run: " + isa_unavailable_reason(isa));
}

const detail::IsaKernels& detail::kernels_of(Isa isa) {
    require_isa(isa);  // even making the list runs code compiled for the isa: ask the CPU first
    switch (isa) {
        case Isa::Avx2: {
            static const IsaKernels avx2 = avx2_kernels();
            return avx2;
        }
        case Isa::Avx512: {
            static const IsaKernels avx512 = avx512_kernels();
            return avx512;
        }
        case Isa::Neon: {
            static const IsaKernels neon = neon_kernels();
            return neon;
        }
        case Isa::Scalar:
            break;
    }
    static const IsaKernels scalar = scalar_kernels();
    return scalar;
}

std::vector<MicroKernel> micro_kernels(Isa isa) {
    return isa_supported(isa) ? detail::kernels_of(isa).micro_kernels : std::vector<MicroKernel>{};
}

MicroKernel default_micro_kernel(Isa isa) {
    auto all = micro_kernels(isa);
    if (all.empty()) all = detail::kernels_of(Isa::Scalar).micro_kernels;
    return all.front();
}

std::optional<MicroKernel> without_c_prefetch(const MicroKernel& kernel) {
    for (const auto& k : micro_kernels(kernel.isa))
        if (k.name == kernel.name + " no C prefetch") return k;
    return std::nullopt;
}

Blocking machine_blocking(const MicroKernel& kernel, const cachebook::Machine& machine) {
    auto size = [&](int level) {
        const auto c = machine.data_cache(level);
        return c ? c->size_bytes : std::size_t{0};
    };
    return derive_blocking(size(1), size(2), size(3), kernel.mr, kernel.nr);
}

void AlignedFree::operator()(float* p) const {
#if defined(__linux__)
    if (mapped != 0) {
        ::munmap(p, mapped);
        return;
    }
#endif
    std::free(p);
}

Buffer make_buffer(std::size_t floats) {
    const std::size_t bytes = (std::max<std::size_t>(floats, 1) * sizeof(float) + 63) / 64 * 64;
    auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p == nullptr) throw std::bad_alloc();
    return Buffer(p);
}

Buffer make_page_buffer(std::size_t floats, cachebook::PageSize pages) {
#if defined(__linux__)
    constexpr std::size_t huge = std::size_t{2} << 20;
    const std::size_t bytes = (std::max<std::size_t>(floats, 1) * sizeof(float) + huge - 1) / huge * huge;
    // Fresh memory from mmap, never touched: the advice then decides the pages of the first touch.
    // Map one page more, and give back what lies before and after the aligned part.
    void* m = ::mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<std::uintptr_t>(m);
    const std::uintptr_t aligned = (start + huge - 1) / huge * huge;
    if (aligned > start) ::munmap(m, aligned - start);
    if (const std::uintptr_t end = start + bytes + huge; end > aligned + bytes)
        ::munmap(reinterpret_cast<void*>(aligned + bytes), end - (aligned + bytes));
    auto* p = reinterpret_cast<float*>(aligned);
    (void)cachebook::advise_pages(p, bytes, pages);  // a refused hint leaves 4 KiB pages
    return Buffer(p, AlignedFree{bytes});
#else
    (void)pages;
    return make_buffer(floats);
#endif
}

namespace {

thread_local cachebook::CoreShares* noted_shares = nullptr;  // set by a claim only (NotingShares)
void run_noting_shares(int threads, const std::function<void(int)>& body);

// [snippet: worker_pool]
// Threads kept from one call to the next, as the libraries keep theirs: starting a thread
// costs a trip through the system and the scheduler on every call. Between calls the workers
// sleep (std::atomic::wait), so they take no CPU from other programs.
class WorkerPool {
public:
    // Runs body(t) for t in [0, threads): t = 0 on the calling thread, the others on the pool's.
    void run(int threads, const std::function<void(int)>& body) {
        while (int(workers_.size()) < threads - 1)  // a new worker waits for the next round
            workers_.emplace_back([this, t = int(workers_.size()) + 1, r = round_.load()] { work(t, r); });
        body_ = &body;
        active_ = threads;
        next_round();
        body(0);
        wait_for_workers();  // every worker has seen this round: none reads body_ or active_ after
    }
    ~WorkerPool() {
        stop_ = true;
        next_round();
        for (auto& w : workers_) w.join();
    }

private:
    void next_round() {
        pending_.store(int(workers_.size()));
        round_.fetch_add(1);  // after body_, active_ and stop_: a worker that sees the round sees them
        round_.notify_all();
    }
    void wait_for_workers() {
        for (int left; (left = pending_.load()) != 0;) pending_.wait(left);
    }
    void work(int t, unsigned seen) {
        for (;;) {
            round_.wait(seen);  // sleeps until a new round starts
            seen = round_.load();
            if (stop_) return;
            if (t < active_) (*body_)(t);  // a call on fewer threads leaves this worker idle
            if (pending_.fetch_sub(1) == 1) pending_.notify_one();
        }
    }
    std::vector<std::thread> workers_;
    const std::function<void(int)>* body_ = nullptr;
    int active_ = 0;
    bool stop_ = false;
    std::atomic<unsigned> round_{0};
    std::atomic<int> pending_{0};
};

}  // namespace

// One pool per calling thread, so that two products called from two threads never share one.
void detail::run_on_pool(int threads, const std::function<void(int)>& body) {
    if (threads == 1) return body(0);
    if (noted_shares != nullptr) return run_noting_shares(threads, body);  // a claim notes each share of a core
    thread_local WorkerPool pool;
    pool.run(threads, body);
}
// [end: worker_pool]

namespace {
// Each thread of the call notes its CPU time and the wall time from the call's start to its own
// finish: its CPU clock stops while it waits for a turn on a cpu, so two threads that took turns
// on one core show it (core_share.hpp).
void run_noting_shares(int threads, const std::function<void(int)>& body) {
    const auto n = static_cast<std::size_t>(threads);
    std::vector<double> cpu_seconds(n), wall_seconds(n);
    cachebook::CoreShares* shares = std::exchange(noted_shares, nullptr);
    const auto start = cachebook::Clock::now();
    try {
        detail::run_on_pool(threads, [&](int t) {
            const double cpu_start = cachebook::thread_cpu_seconds();
            body(t);
            cpu_seconds[std::size_t(t)] = cachebook::thread_cpu_seconds() - cpu_start;
            wall_seconds[std::size_t(t)] = cachebook::seconds_since(start);
        });
    } catch (...) {
        noted_shares = shares;
        throw;
    }
    noted_shares = shares;
    shares->note(cpu_seconds, wall_seconds);
}
}  // namespace

detail::NotingShares::NotingShares(cachebook::CoreShares& shares) : previous_(std::exchange(noted_shares, &shares)) {}

detail::NotingShares::~NotingShares() {
    noted_shares = previous_;
}

namespace {
// xorshift32: the same numbers on every platform and library.
std::uint32_t next(std::uint32_t& state) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}
}  // namespace

void fill_random(float* p, std::size_t count, std::uint32_t start) {
    std::uint32_t state = start ? start : 1;
    for (std::size_t i = 0; i < count; ++i)
        p[i] = float(next(state) >> 8) * (1.0f / 8388608.0f) - 1.0f;  // 24 bits -> [-1, 1)
}

void fill_small_integers(float* p, std::size_t count, std::uint32_t start) {
    std::uint32_t state = start ? start : 1;
    for (std::size_t i = 0; i < count; ++i) p[i] = float(int(next(state) % 5) - 2);
}

}  // namespace ch09
