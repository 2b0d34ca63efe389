#pragma once
// The kernels whose speed depends on the optimisation level, compiled twice from
// sum_kernel.cpp: once with -O0 and once with -O2 (chapters/07_measurement/chapter.cmake),
// into two namespaces that declare the same functions.

#include <cstddef>
#include <cstdint>

namespace ch07 {
namespace o0 {
std::int64_t sum_rows(const int* a, std::size_t n);     // a[i][j], j inner: along the rows
std::int64_t sum_columns(const int* a, std::size_t n);  // a[j][i]: down the columns
// C = A x B for n x n doubles: the ijk loop, and tiles of `tile` walked ii, jj, kk (edges clipped).
void product_naive(const double* a, const double* b, double* c, std::size_t n);
void product_blocked(const double* a, const double* b, double* c, std::size_t n, std::size_t tile);
// The row sum with a software prefetch `distance` elements ahead, once per 64-byte line.
std::int64_t sum_rows_prefetched(const int* a, std::size_t n, std::size_t distance);
}  // namespace o0
namespace o2 {
std::int64_t sum_rows(const int* a, std::size_t n);
std::int64_t sum_columns(const int* a, std::size_t n);
void product_naive(const double* a, const double* b, double* c, std::size_t n);
void product_blocked(const double* a, const double* b, double* c, std::size_t n, std::size_t tile);
std::int64_t sum_rows_prefetched(const int* a, std::size_t n, std::size_t distance);
}  // namespace o2
}  // namespace ch07
