// Chapter 9's plumbing under the lesson: which instruction sets this build and CPU can run,
// the lists of micro-kernels, aligned buffers and the fixed random fill.
#include "kernels.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "cachebook/chase.hpp"
#include "cachebook/machine.hpp"

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

std::vector<MicroKernel> micro_kernels(Isa isa) {
    // Even building the list runs code compiled for the isa: ask the CPU first.
    if (!isa_supported(isa)) return {};
    switch (isa) {
        case Isa::Scalar:
            return detail::scalar_micro_kernels();
        case Isa::Avx2:
            return detail::avx2_micro_kernels();
        case Isa::Avx512:
            return detail::avx512_micro_kernels();
        case Isa::Neon:
            return detail::neon_micro_kernels();
    }
    return {};
}

MicroKernel default_micro_kernel(Isa isa) {
    auto all = micro_kernels(isa);
    if (all.empty()) all = detail::scalar_micro_kernels();
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
