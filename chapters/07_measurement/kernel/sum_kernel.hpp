#pragma once
// The chapter 2 loops, compiled twice from sum_kernel.cpp: once with -O0 and
// once with -O2 (chapters/07_measurement/chapter.cmake), into two namespaces.

#include <cstddef>
#include <cstdint>

namespace ch07 {
namespace o0 {
std::int64_t sum_rows(const int* a, std::size_t n);     // a[i][j], j inner: along the rows
std::int64_t sum_columns(const int* a, std::size_t n);  // a[j][i]: down the columns
}  // namespace o0
namespace o2 {
std::int64_t sum_rows(const int* a, std::size_t n);
std::int64_t sum_columns(const int* a, std::size_t n);
}  // namespace o2
}  // namespace ch07
