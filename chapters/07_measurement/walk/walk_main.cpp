// ch07_walk MODE N: fills an N x N int array (64-byte aligned) row by row, then
// walks it: MODE "row" or "column" runs that sum, "none" only fills. Run under
// cachegrind or perf; "none" is the baseline to subtract.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sum_kernel.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "ch07_walk: usage: ch07_walk none|row|column N\n");
        return 2;
    }
    const std::string mode = argv[1];
    char* end = nullptr;
    const long n = std::strtol(argv[2], &end, 10);
    if ((mode != "none" && mode != "row" && mode != "column") || *end != '\0' || n < 1 || n > 16384) {
        std::fprintf(stderr, "ch07_walk: error: expected none|row|column and N from 1 to 16384\n");
        return 2;
    }
    const auto size = static_cast<std::size_t>(n);
    const std::size_t bytes = (size * size * sizeof(int) + 63) / 64 * 64;
    int* a = static_cast<int*>(std::aligned_alloc(64, bytes));
    if (a == nullptr) {
        std::fprintf(stderr, "ch07_walk: error: cannot allocate %zu bytes\n", bytes);
        return 2;
    }
    for (std::size_t i = 0; i < size * size; ++i) a[i] = static_cast<int>(i % 10);
    long long s = 0;
    if (mode == "row") s = ch07::o2::sum_rows(a, size);
    if (mode == "column") s = ch07::o2::sum_columns(a, size);
    std::printf("%s %ld: sum %lld\n", mode.c_str(), n, s);
    std::free(a);
    return 0;
}
