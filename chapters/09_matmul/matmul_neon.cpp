// The NEON (Advanced SIMD) kernels of steps 4 to 6, for 64-bit ARM. Every aarch64 CPU has
// NEON, so this file needs no extra flag there; its functions still run only after
// isa_supported(Isa::Neon) said yes. On other machines it holds no kernel.
// A NEON register holds four floats (128 bits), and aarch64 has 32 of them.
#include <utility>

#include "kernels.hpp"
#include "micro_kernel.hpp"
#include "tiled_loop.hpp"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace ch09::detail {

#if defined(__aarch64__) && defined(__ARM_NEON)
// [snippet: tiled_neon]
namespace {

// A NEON register holds four floats; these are the operations the shared loops ask of it.
struct Neon {
    using reg = float32x4_t;
    static constexpr std::size_t width = 4;
    static reg zero() { return vdupq_n_f32(0.0f); }
    static reg load(const float* p) { return vld1q_f32(p); }
    static void store(float* p, reg r) { vst1q_f32(p, r); }
    static reg broadcast(float x) { return vdupq_n_f32(x); }            // x in all four lanes
    static reg fma(reg a, reg b, reg c) { return vfmaq_f32(c, a, b); }  // c + a * b, rounded once
    static reg add(reg a, reg b) { return vaddq_f32(a, b); }
};

}  // namespace
// [end: tiled_neon]

namespace {

// [snippet: micro_kernel_neon]
// Row I of the block: acc[I][v] += a[I] * b[v] for every vector v of B. a[I] is lane I % 4 of
// the A register I / 4, and vfmaq_laneq_f32 multiplies by that lane directly: no broadcast.
template <std::size_t I, std::size_t NV>
inline void fma_row(float32x4_t (&acc)[NV], const float32x4_t (&bv)[NV], const float32x4_t* av) {
#pragma GCC unroll 4
    for (std::size_t v = 0; v < NV; ++v) acc[v] = vfmaq_laneq_f32(acc[v], bv[v], av[I / 4], I % 4);
}

template <std::size_t NV, std::size_t... I>
inline void fma_rows(float32x4_t (&acc)[sizeof...(I)][NV], const float32x4_t (&bv)[NV], const float32x4_t* av,
                     std::index_sequence<I...>) {
    (fma_row<I, NV>(acc[I], bv, av), ...);
}

// An MR x (4 NV) block of C lives in MR * NV registers for the whole kc loop: each step loads
// NV vectors of B and MR / 4 vectors of A, and does MR * NV FMAs. 8 x 12 holds 24 accumulators,
// 3 of B and 2 of A: 29 of the 32 registers.
template <std::size_t MR, std::size_t NV, bool PrefetchC = true>
void neon_kernel(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc, bool accumulate) {
    static_assert(MR % 4 == 0, "A is loaded four rows to a register");
    constexpr std::size_t NR = NV * 4;
    if constexpr (PrefetchC) {  // as the x86 kernels do: rows of C are far apart, no prefetcher guesses them
#pragma GCC unroll 16
        for (std::size_t i = 0; i < MR; ++i) {
            __builtin_prefetch(c + i * ldc, 1);
            __builtin_prefetch(c + i * ldc + NR - 1, 1);
        }
    }
    float32x4_t acc[MR][NV];
#pragma GCC unroll 16
    for (std::size_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < NV; ++v) acc[i][v] = vdupq_n_f32(0.0f);
    for (std::size_t p = 0; p < kc; ++p) {
        float32x4_t bv[NV], av[MR / 4];
#pragma GCC unroll 4
        for (std::size_t v = 0; v < NV; ++v) bv[v] = vld1q_f32(b + v * 4);
#pragma GCC unroll 4
        for (std::size_t q = 0; q < MR / 4; ++q) av[q] = vld1q_f32(a + q * 4);
        fma_rows<NV>(acc, bv, av, std::make_index_sequence<MR>{});
        a += MR;  // packed A: MR values per k
        b += NR;  // packed B: NR values per k
    }
#pragma GCC unroll 16
    for (std::size_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < NV; ++v) {
            float* dst = c + i * ldc + v * 4;
            vst1q_f32(dst, accumulate ? vaddq_f32(vld1q_f32(dst), acc[i][v]) : acc[i][v]);
        }
}
// [end: micro_kernel_neon]

}  // namespace

// [snippet: neon_kernels]
// Step 4 and the peak's loop are the shared templates with V = Neon; step 6's kernels its own.
IsaKernels neon_kernels() {
    return {&tiled_simd<Neon>,
            {
                {"neon 8x12", Isa::Neon, 8, 12, &neon_kernel<8, 3>},
                {"neon 12x8", Isa::Neon, 12, 8, &neon_kernel<12, 2>},
                {"neon 8x8", Isa::Neon, 8, 8, &neon_kernel<8, 2>},
                {"neon 4x16", Isa::Neon, 4, 16, &neon_kernel<4, 4>},
                {"neon 4x4", Isa::Neon, 4, 4, &neon_kernel<4, 1>},
                {"neon 8x12 no C prefetch", Isa::Neon, 8, 12, &neon_kernel<8, 3, false>},
            },
            &fma_peak_loop<Neon>};
}
// [end: neon_kernels]

// [snippet: neon_build]
bool neon_built() {
    return true;
}
#else
bool neon_built() {
    return false;
}
IsaKernels neon_kernels() {
    return {};
}
#endif
// [end: neon_build]

}  // namespace ch09::detail
