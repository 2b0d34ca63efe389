#pragma once
// Step 3's tiled loops, written once. Step 3 and each instruction set's step 4 differ only in how
// they add a[i][p] times a row of B's tile to the same row of C's tile: the row update each passes.
// Step 4's is written once too, for any vector type V (micro_kernel.hpp says what V provides).
// Everything here has internal linkage, so each file compiles its own copy with its own flags.

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "matmul.hpp"

namespace ch09::detail {
namespace {

// [snippet: tiled_loop]
// row_update(c_row, b_row, aip, count): c_row[j] += aip * b_row[j] for j in [0, count).
template <class RowUpdate>
void tiled_loop(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile,
                RowUpdate row_update) {
    const std::size_t n = s.n, k = s.k;
    for (std::size_t i = rows.begin; i < rows.end; ++i) std::memset(c + i * n, 0, n * sizeof(float));
    for (std::size_t ii = rows.begin; ii < rows.end; ii += tile)
        for (std::size_t kk = 0; kk < k; kk += tile)
            for (std::size_t jj = 0; jj < n; jj += tile) {
                const std::size_t i_max = std::min(ii + tile, rows.end);
                const std::size_t k_max = std::min(kk + tile, k);
                const std::size_t j_max = std::min(jj + tile, n);
                for (std::size_t i = ii; i < i_max; ++i)  // step 2's i-k-j, inside one tile
                    for (std::size_t p = kk; p < k_max; ++p)
                        row_update(c + i * n + jj, b + p * n + jj, a[i * k + p], j_max - jj);
            }
}
// [end: tiled_loop]

// [snippet: tiled_simd_loop]
// Step 4 for a vector type V: step 3's loops, each row update V::width columns per instruction
// while a whole vector fits (j + width <= count, not j < count: a vector loop that ran on would
// read and write past the row's end), then the last few columns one at a time.
template <class V>
void tiled_simd(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile) {
    tiled_loop(a, b, c, s, rows, tile, [](float* c_row, const float* b_row, float aip, std::size_t count) {
        const typename V::reg av = V::broadcast(aip);  // a[i][p] in every lane
        std::size_t j = 0;
        for (; j + V::width <= count; j += V::width)  // c += a * b on V::width columns, one rounding
            V::store(c_row + j, V::fma(av, V::load(b_row + j), V::load(c_row + j)));
        for (; j < count; ++j) c_row[j] += aip * b_row[j];  // the last < V::width columns
    });
}
// [end: tiled_simd_loop]

}  // namespace
}  // namespace ch09::detail
