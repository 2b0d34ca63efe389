// The AVX2 + FMA kernels of steps 4 to 6. This file alone is compiled with -mavx2 -mfma;
// its functions run only after isa_supported(Isa::Avx2) said yes. A portable build
// (CACHEBOOK_PORTABLE), or one for another architecture, compiles it without those flags:
// then it holds no kernel.
#include <cstring>
#include <stdexcept>

#include "cachebook/measure.hpp"
#include "kernels.hpp"
#include "micro_kernel.hpp"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace ch09::detail {

#if defined(__AVX2__) && defined(__FMA__)
// [snippet: fma_peak]
// Twelve independent accumulators: more than FMA latency (4-5 cycles) x FMA ports (2)
// instructions in flight, so the loop runs at the FMA units' throughput, not their latency.
double fma_loop_avx2(std::size_t iterations) {
    constexpr int chains = 12;
    __m256 acc[chains];
    for (int i = 0; i < chains; ++i) acc[i] = _mm256_set1_ps(float(i));
    const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-6f);
    for (std::size_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
        for (int i = 0; i < chains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], scale, shift);
    }
    __m256 sum = acc[0];
    for (int i = 1; i < chains; ++i) sum = _mm256_add_ps(sum, acc[i]);
    cachebook::do_not_optimize(sum);
    return double(iterations) * chains * 8 * 2;
}
// [end: fma_peak]

// [snippet: tiled_simd]
void tiled_avx2(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile) {
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
                        const __m256 av = _mm256_set1_ps(aip);  // a[i][p] in all eight lanes
                        std::size_t j = jj;
                        for (; j + 8 <= j_max; j += 8) {  // eight columns per instruction
                            const __m256 bv = _mm256_loadu_ps(b + p * n + j);
                            const __m256 cv = _mm256_loadu_ps(c + i * n + j);
                            _mm256_storeu_ps(c + i * n + j, _mm256_fmadd_ps(av, bv, cv));
                        }
                        for (; j < j_max; ++j) c[i * n + j] += aip * b[p * n + j];  // the last < 8 columns
                    }
            }
}
// [end: tiled_simd]

// [snippet: avx2_kernels]
namespace {

struct Avx2 {
    using reg = __m256;
    static constexpr std::size_t width = 8;
    static reg zero() { return _mm256_setzero_ps(); }
    static reg load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, reg r) { _mm256_storeu_ps(p, r); }
    static reg broadcast(float x) { return _mm256_set1_ps(x); }
    static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
};

}  // namespace

std::vector<MicroKernel> avx2_micro_kernels() {
    // 16 ymm registers: 6x16 keeps 12 accumulators + 2 of B + 1 of A.
    return {
        {"avx2 6x16", Isa::Avx2, 6, 16, &micro_kernel<Avx2, 6, 2>},
        {"avx2 4x24", Isa::Avx2, 4, 24, &micro_kernel<Avx2, 4, 3>},
        {"avx2 8x8", Isa::Avx2, 8, 8, &micro_kernel<Avx2, 8, 1>},
        {"avx2 4x8", Isa::Avx2, 4, 8, &micro_kernel<Avx2, 4, 1>},
        {"avx2 2x16", Isa::Avx2, 2, 16, &micro_kernel<Avx2, 2, 2>},
        {"avx2 6x16 no C prefetch", Isa::Avx2, 6, 16, &micro_kernel<Avx2, 6, 2, false>},
    };
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
void tiled_avx2(const float*, const float*, float*, Shape, RowRange, std::size_t) {
    throw std::logic_error("this build has no AVX2 kernels");
}
std::vector<MicroKernel> avx2_micro_kernels() {
    return {};
}
double fma_loop_avx2(std::size_t) {
    return 0;
}
#endif
// [end: avx2_build]

}  // namespace ch09::detail
