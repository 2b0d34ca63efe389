// The NEON (Advanced SIMD) kernels of steps 4 to 6, for 64-bit ARM. Every aarch64 CPU has
// NEON, so this file needs no extra flag there; its functions still run only after
// isa_supported(Isa::Neon) said yes. On other machines it holds no kernel.
// A NEON register holds four floats (128 bits), and aarch64 has 32 of them.
#include <cstring>
#include <stdexcept>
#include <utility>

#include "cachebook/measure.hpp"
#include "kernels.hpp"

#if defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace ch09::detail {

#if defined(__aarch64__) && defined(__ARM_NEON)
// [snippet: tiled_neon]
void tiled_neon(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile) {
    const std::size_t n = s.n, k = s.k;
    for (std::size_t i = rows.begin; i < rows.end; ++i) std::memset(c + i * n, 0, n * sizeof(float));
    for (std::size_t ii = rows.begin; ii < rows.end; ii += tile)
        for (std::size_t kk = 0; kk < k; kk += tile)
            for (std::size_t jj = 0; jj < n; jj += tile) {
                const std::size_t i_max = std::min(ii + tile, rows.end);
                const std::size_t k_max = std::min(kk + tile, k);
                const std::size_t j_max = std::min(jj + tile, n);
                for (std::size_t i = ii; i < i_max; ++i)
                    for (std::size_t p = kk; p < k_max; ++p) {
                        const float aip = a[i * k + p];
                        const float32x4_t av = vdupq_n_f32(aip);  // a[i][p] in all four lanes
                        std::size_t j = jj;
                        for (; j + 4 <= j_max; j += 4) {  // four columns per instruction
                            const float32x4_t bv = vld1q_f32(b + p * n + j);
                            const float32x4_t cv = vld1q_f32(c + i * n + j);
                            vst1q_f32(c + i * n + j, vfmaq_f32(cv, av, bv));  // cv + av * bv, one rounding
                        }
                        for (; j < j_max; ++j) c[i * n + j] += aip * b[p * n + j];  // the last < 4 columns
                    }
            }
}
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
std::vector<MicroKernel> neon_micro_kernels() {
    return {
        {"neon 8x12", Isa::Neon, 8, 12, &neon_kernel<8, 3>},
        {"neon 12x8", Isa::Neon, 12, 8, &neon_kernel<12, 2>},
        {"neon 8x8", Isa::Neon, 8, 8, &neon_kernel<8, 2>},
        {"neon 4x16", Isa::Neon, 4, 16, &neon_kernel<4, 4>},
        {"neon 4x4", Isa::Neon, 4, 4, &neon_kernel<4, 1>},
        {"neon 8x12 no C prefetch", Isa::Neon, 8, 12, &neon_kernel<8, 3, false>},
    };
}

// Twelve independent accumulators: more than FMA latency (about 4 cycles) x FMA pipes (2 to 4)
// instructions in flight, so the loop runs at the FMA units' throughput, not their latency.
double fma_loop_neon(std::size_t iterations) {
    constexpr int chains = 12;
    float32x4_t acc[chains];
    for (int i = 0; i < chains; ++i) acc[i] = vdupq_n_f32(float(i));
    const float32x4_t scale = vdupq_n_f32(0.999999f), shift = vdupq_n_f32(1e-6f);
    for (std::size_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
        for (int i = 0; i < chains; ++i) acc[i] = vfmaq_f32(shift, acc[i], scale);
    }
    float32x4_t sum = acc[0];
    for (int i = 1; i < chains; ++i) sum = vaddq_f32(sum, acc[i]);
    cachebook::do_not_optimize(sum);
    return double(iterations) * chains * 4 * 2;
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
void tiled_neon(const float*, const float*, float*, Shape, RowRange, std::size_t) {
    throw std::logic_error("this build has no NEON kernels");
}
std::vector<MicroKernel> neon_micro_kernels() {
    return {};
}
double fma_loop_neon(std::size_t) {
    return 0;
}
#endif
// [end: neon_build]

}  // namespace ch09::detail
