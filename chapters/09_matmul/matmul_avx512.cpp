// The AVX-512 micro-kernels of step 6, compiled with -mavx512f; they run only after
// isa_supported(Isa::Avx512) said yes. They share micro_kernel.hpp with the AVX2 ones.
#include "kernels.hpp"
#include "micro_kernel.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace ch09::detail {

#if defined(__AVX512F__)
// [snippet: avx512_kernels]
namespace {

// An AVX-512 register holds sixteen floats: the same operations as Avx2's, twice as wide.
struct Avx512 {
    using reg = __m512;
    static constexpr std::size_t width = 16;
    static reg zero() { return _mm512_setzero_ps(); }
    static reg load(const float* p) { return _mm512_loadu_ps(p); }
    static void store(float* p, reg r) { _mm512_storeu_ps(p, r); }
    static reg broadcast(float x) { return _mm512_set1_ps(x); }
    static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
};

}  // namespace

IsaKernels avx512_kernels() {
    // 32 zmm registers: 12x32 keeps 24 accumulators + 2 of B + 1 of A; 14x32 uses 31.
    // The default also prefetches the packed A and B 8 steps ahead (micro_kernel's Ahead).
    // No step 4 of its own: an AVX-512 CPU runs AVX2's.
    return {nullptr,
            {
                {"avx512 12x32", Isa::Avx512, 12, 32, &micro_kernel<Avx512, 12, 2, true, 8>},
                {"avx512 14x32", Isa::Avx512, 14, 32, &micro_kernel<Avx512, 14, 2>},
                {"avx512 6x32", Isa::Avx512, 6, 32, &micro_kernel<Avx512, 6, 2>},
                {"avx512 8x48", Isa::Avx512, 8, 48, &micro_kernel<Avx512, 8, 3>},
                {"avx512 12x32 no C prefetch", Isa::Avx512, 12, 32, &micro_kernel<Avx512, 12, 2, false, 8>},
                {"avx512 12x32 no A, B prefetch", Isa::Avx512, 12, 32, &micro_kernel<Avx512, 12, 2, true, 0>},
            },
            &fma_peak_loop<Avx512>};
}
// [end: avx512_kernels]

// [snippet: avx512_build]
bool avx512_built() {
    return true;
}
#else
bool avx512_built() {
    return false;
}
IsaKernels avx512_kernels() {
    return {};
}
#endif
// [end: avx512_build]

}  // namespace ch09::detail
