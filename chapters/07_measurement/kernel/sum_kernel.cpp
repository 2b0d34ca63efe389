// One source, two builds: CH07_KERNEL_NS is o0 or o2, and so are the flags.
#include "sum_kernel.hpp"

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

}  // namespace ch07::CH07_KERNEL_NS
