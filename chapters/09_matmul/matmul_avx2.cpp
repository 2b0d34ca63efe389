// The AVX2 + FMA kernels of steps 4 to 6. This file alone is compiled with -mavx2 -mfma;
// its functions run only after isa_supported(Isa::Avx2) said yes. A portable build
// (CACHEBOOK_PORTABLE), or one for another architecture, compiles it without those flags:
// then it holds no kernel.
#include "kernels.hpp"
#include "micro_kernel.hpp"
#include "tiled_loop.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace ch09::detail {

#if defined(__AVX2__) && defined(__FMA__)
// [snippet: avx2_vector]
namespace {

// An AVX2 register holds eight floats; these are the operations the shared loops ask of it.
struct Avx2 {
    using reg = __m256;
    static constexpr std::size_t width = 8;
    static reg zero() { return _mm256_setzero_ps(); }
    static reg load(const float* p) { return _mm256_loadu_ps(p); }  // u: any address, not only multiples of 32
    static void store(float* p, reg r) { _mm256_storeu_ps(p, r); }
    static reg broadcast(float x) { return _mm256_set1_ps(x); }               // x in all eight lanes
    static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }  // a * b + c, rounded once
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
};

}  // namespace
// [end: avx2_vector]

// [snippet: avx2_kernels]
// Step 4, step 6's micro-kernels and the peak's loop, each the shared template with V = Avx2.
IsaKernels avx2_kernels() {
    // 16 ymm registers: 6x16 keeps 12 accumulators + 2 of B + 1 of A.
    return {&tiled_simd<Avx2>,
            {
                {"avx2 6x16", Isa::Avx2, 6, 16, &micro_kernel<Avx2, 6, 2>},
                {"avx2 4x24", Isa::Avx2, 4, 24, &micro_kernel<Avx2, 4, 3>},
                {"avx2 8x8", Isa::Avx2, 8, 8, &micro_kernel<Avx2, 8, 1>},
                {"avx2 4x8", Isa::Avx2, 4, 8, &micro_kernel<Avx2, 4, 1>},
                {"avx2 2x16", Isa::Avx2, 2, 16, &micro_kernel<Avx2, 2, 2>},
                {"avx2 6x16 no C prefetch", Isa::Avx2, 6, 16, &micro_kernel<Avx2, 6, 2, false>},
            },
            &fma_peak_loop<Avx2>};
}
// [end: avx2_kernels]

// [snippet: avx2_build]
bool avx2_built() {
    return true;
}
#else
bool avx2_built() {
    return false;
}
IsaKernels avx2_kernels() {
    return {};
}
#endif
// [end: avx2_build]

}  // namespace ch09::detail
