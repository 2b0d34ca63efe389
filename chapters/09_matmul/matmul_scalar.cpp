// Steps 1 to 3 and the scalar fallbacks. This file is compiled with -fno-tree-vectorize so
// that these steps are what the chapter says they are: one float per instruction. (At -O3
// the compiler would turn the i-k-j inner loop into 4-float SSE code by itself.)
#include <algorithm>
#include <cstring>

#include "kernels.hpp"
#include "micro_kernel.hpp"
#include "tiled_loop.hpp"

namespace ch09 {

// [snippet: naive]
void matmul_naive(const float* a, const float* b, float* c, Shape s, RowRange rows) {
    const std::size_t n = s.n, k = s.k;
    for (std::size_t i = rows.begin; i < rows.end; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (std::size_t p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];  // b: down a column
            c[i * n + j] = sum;
        }
}
// [end: naive]

// [snippet: transpose_trick]
void transpose(const float* b, float* bt, std::size_t k, std::size_t n) {
    constexpr std::size_t tile = 32;  // tiled, so neither walk strides through memory a float at a time
    for (std::size_t pp = 0; pp < k; pp += tile)
        for (std::size_t jj = 0; jj < n; jj += tile)
            for (std::size_t p = pp; p < std::min(pp + tile, k); ++p)
                for (std::size_t j = jj; j < std::min(jj + tile, n); ++j) bt[j * k + p] = b[p * n + j];
}

void matmul_naive_bt(const float* a, const float* bt, float* c, Shape s, RowRange rows) {
    const std::size_t n = s.n, k = s.k;
    for (std::size_t i = rows.begin; i < rows.end; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (std::size_t p = 0; p < k; ++p) sum += a[i * k + p] * bt[j * k + p];  // both along rows
            c[i * n + j] = sum;
        }
}
// [end: transpose_trick]

// [snippet: ikj]
void matmul_ikj(const float* a, const float* b, float* c, Shape s, RowRange rows) {
    const std::size_t n = s.n, k = s.k;
    for (std::size_t i = rows.begin; i < rows.end; ++i) {
        std::memset(c + i * n, 0, n * sizeof(float));
        for (std::size_t p = 0; p < k; ++p) {
            const float aip = a[i * k + p];  // loaded once, used for the whole j loop
            for (std::size_t j = 0; j < n; ++j) c[i * n + j] += aip * b[p * n + j];
        }
    }
}
// [end: ikj]

// [snippet: tiled]
void matmul_tiled(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile) {
    detail::tiled_loop(a, b, c, s, rows, tile, [](float* c_row, const float* b_row, float aip, std::size_t count) {
        for (std::size_t j = 0; j < count; ++j) c_row[j] += aip * b_row[j];  // step 2's inner loop
    });
}
// [end: tiled]

// [snippet: scalar_kernels]
namespace detail {
namespace {

struct Scalar {
    using reg = float;
    static constexpr std::size_t width = 1;
    static reg zero() { return 0.0f; }
    static reg load(const float* p) { return *p; }
    static void store(float* p, reg r) { *p = r; }
    static reg broadcast(float x) { return x; }
    static reg fma(reg a, reg b, reg c) { return a * b + c; }
    static reg add(reg a, reg b) { return a + b; }
};

}  // namespace

// No step 4 here: without a vector kernel step 4 falls back to step 3. The peak's loop does a
// multiply and an add where the others do one FMA.
IsaKernels scalar_kernels() {
    return {nullptr,
            {
                {"scalar 4x4", Isa::Scalar, 4, 4, &micro_kernel<Scalar, 4, 4>},
                {"scalar 2x2", Isa::Scalar, 2, 2, &micro_kernel<Scalar, 2, 2>},
                {"scalar 1x1", Isa::Scalar, 1, 1, &micro_kernel<Scalar, 1, 1>},
                {"scalar 4x4 no C prefetch", Isa::Scalar, 4, 4, &micro_kernel<Scalar, 4, 4, false>},
            },
            &fma_peak_loop<Scalar>};
}
// [end: scalar_kernels]
}  // namespace detail
}  // namespace ch09
