// One source, two builds: CH07_KERNEL_NS is o0 or o2, and so are the flags.
#include "sum_kernel.hpp"

#include <algorithm>

#ifndef CH07_KERNEL_NS
#error "build this file through chapters/07_measurement/chapter.cmake"
#endif

namespace ch07::CH07_KERNEL_NS {

// [snippet: kernel]
std::int64_t sum_rows(const int* a, std::size_t n) {
    std::int64_t s = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) s += a[i * n + j];
    return s;
}

std::int64_t sum_columns(const int* a, std::size_t n) {
    std::int64_t s = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) s += a[j * n + i];  // the next access is a whole row away
    return s;
}
// [end: kernel]

// [snippet: product]
void product_naive(const double* a, const double* b, double* c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {  // the inner loop walks down a column of B
            double s = 0;
            for (std::size_t k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}

void product_blocked(const double* a, const double* b, double* c, std::size_t n, std::size_t tile) {
    std::fill(c, c + n * n, 0.0);
    for (std::size_t ii = 0; ii < n; ii += tile)  // finish a tile of C before moving on
        for (std::size_t jj = 0; jj < n; jj += tile)
            for (std::size_t kk = 0; kk < n; kk += tile)
                for (std::size_t i = ii; i < std::min(ii + tile, n); ++i)
                    for (std::size_t k = kk; k < std::min(kk + tile, n); ++k) {
                        const double aik = a[i * n + k];
                        for (std::size_t j = jj; j < std::min(jj + tile, n); ++j) c[i * n + j] += aik * b[k * n + j];
                    }
}
// [end: product]

// [snippet: prefetch]
std::int64_t sum_rows_prefetched(const int* a, std::size_t n, std::size_t distance) {
    constexpr std::size_t per_line = 64 / sizeof(int);
    std::int64_t s = 0;
    const std::size_t count = n * n;
    for (std::size_t line = 0; line < count; line += per_line) {
        if (line + distance < count) __builtin_prefetch(&a[line + distance]);  // the claimed improvement
        const std::size_t end = std::min(line + per_line, count);
        for (std::size_t k = line; k < end; ++k) s += a[k];
    }
    return s;
}
// [end: prefetch]

}  // namespace ch07::CH07_KERNEL_NS
