// Chapter 9 exercises: the reference answers (not handed out).
#if defined(__x86_64__)
#include <immintrin.h>  // AVX2 intrinsics; exercise 1 runs only on x86-64
#endif

#include <algorithm>
#include <stdexcept>

#include "exercise.hpp"

namespace ch09_exercise {

#if defined(__AVX2__) && defined(__FMA__)
void add_scaled_row(float a, const float* b, float* c, std::size_t count) {
    const __m256 av = _mm256_set1_ps(a);
    std::size_t j = 0;
    for (; j + 8 <= count; j += 8)  // j + 8 <= count, not j < count: the last group must be whole
        _mm256_storeu_ps(c + j, _mm256_fmadd_ps(av, _mm256_loadu_ps(b + j), _mm256_loadu_ps(c + j)));
    for (; j < count; ++j) c[j] += a * b[j];  // the remaining count % 8 floats
}
#else
void add_scaled_row(float, const float*, float*, std::size_t) {  // the grader skips exercise 1 here
    throw std::logic_error("add_scaled_row: AVX2 exercise, built for a CPU without AVX2");
}
#endif

ch09::Blocking choose_blocks(std::size_t l1, std::size_t l2, std::size_t l3, std::size_t mr, std::size_t nr) {
    constexpr std::size_t f = sizeof(float);
    if (l1 == 0) l1 = 32 * 1024;
    if (l2 == 0) l2 = 256 * 1024;
    if (l3 == 0) l3 = 8 * 1024 * 1024;
    ch09::Blocking b;
    b.kc = std::max<std::size_t>(16, l1 / 4 * 3 / (nr * f) / 8 * 8);
    b.mc = std::max(mr, l2 / 4 * 3 / (b.kc * f) / mr * mr);
    const std::size_t most = std::max(nr, 4096 / nr * nr);
    b.nc = std::clamp(l3 / 2 / (b.kc * f) / nr * nr, nr, most);
    return b;
}

double parallel_share(double speedup, int workers) {
    // 1 / S = (1 - p) + p / w  =>  p (1 - 1 / w) = 1 - 1 / S
    const double p = (1.0 - 1.0 / speedup) / (1.0 - 1.0 / workers);
    return std::clamp(p, 0.0, 1.0);
}

void multiply(const float* a, const float* b, float* c, std::size_t n) {
    // Tiles of 64 x 64 floats (16 KiB each), loops i-k-j inside a tile: rows of B and C are
    // walked along, a tile of B is reused by every row of A's tile, and the j loop vectorizes.
    constexpr std::size_t tile = 64;
    std::fill(c, c + n * n, 0.0f);
    for (std::size_t i0 = 0; i0 < n; i0 += tile)
        for (std::size_t k0 = 0; k0 < n; k0 += tile)
            for (std::size_t j0 = 0; j0 < n; j0 += tile)
                for (std::size_t i = i0; i < std::min(i0 + tile, n); ++i)
                    for (std::size_t k = k0; k < std::min(k0 + tile, n); ++k) {
                        const float aik = a[i * n + k];
                        for (std::size_t j = j0; j < std::min(j0 + tile, n); ++j) c[i * n + j] += aik * b[k * n + j];
                    }
}

}  // namespace ch09_exercise
