// Steps 1 to 3 and the scalar fallbacks. This file is compiled with -fno-tree-vectorize so
// that these steps are what the chapter says they are: one float per instruction. (At -O3
// the compiler would turn the i-k-j inner loop into 4-float SSE code by itself.)
#include <algorithm>
#include <cstring>

#include "cachebook/measure.hpp"
#include "kernels.hpp"
#include "micro_kernel.hpp"

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
    const std::size_t n = s.n, k = s.k;
    for (std::size_t i = rows.begin; i < rows.end; ++i) std::memset(c + i * n, 0, n * sizeof(float));
    for (std::size_t ii = rows.begin; ii < rows.end; ii += tile)
        for (std::size_t kk = 0; kk < k; kk += tile)
            for (std::size_t jj = 0; jj < n; jj += tile) {
                const std::size_t i_max = std::min(ii + tile, rows.end);
                const std::size_t k_max = std::min(kk + tile, k);
                const std::size_t j_max = std::min(jj + tile, n);
                for (std::size_t i = ii; i < i_max; ++i)  // step 2's i-k-j, inside one tile
                    for (std::size_t p = kk; p < k_max; ++p) {
                        const float aip = a[i * k + p];
                        for (std::size_t j = jj; j < j_max; ++j) c[i * n + j] += aip * b[p * n + j];
                    }
            }
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

std::vector<MicroKernel> scalar_micro_kernels() {
    return {
        {"scalar 4x4", Isa::Scalar, 4, 4, &micro_kernel<Scalar, 4, 4>},
        {"scalar 2x2", Isa::Scalar, 2, 2, &micro_kernel<Scalar, 2, 2>},
        {"scalar 1x1", Isa::Scalar, 1, 1, &micro_kernel<Scalar, 1, 1>},
        {"scalar 4x4 no C prefetch", Isa::Scalar, 4, 4, &micro_kernel<Scalar, 4, 4, false>},
    };
}

double fma_loop_scalar(std::size_t iterations) {
    constexpr int chains = 12;
    float acc[chains];
    for (int i = 0; i < chains; ++i) acc[i] = float(i);
    const float scale = 0.999999f, shift = 1e-6f;
    for (std::size_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
        for (int i = 0; i < chains; ++i) acc[i] = acc[i] * scale + shift;  // a multiply and an add
    }
    float sum = 0;
    for (int i = 0; i < chains; ++i) sum += acc[i];
    cachebook::do_not_optimize(sum);
    return double(iterations) * chains * 2;
}

// [end: scalar_kernels]
}  // namespace detail
}  // namespace ch09
