// ch07_walk MODE N, a tiny program for cachegrind and perf to count:
// - "row" or "column": fills an N x N int array (64-byte aligned) row by row and sums it
//   in that order; "none" only fills it (the baseline to subtract);
// - "ijk" ... "kji": fills two N x N double matrices and multiplies them with chapter 3's
//   code for that loop order, each matrix on lines of its own; "fill3" only fills them.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "cachebook/matmul_orders.hpp"
#include "sum_kernel.hpp"

namespace {

// Bytes rounded up to whole 64-byte lines, so that two buffers never share a line.
void* lines_of(std::size_t bytes) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (p == nullptr) {
        std::fprintf(stderr, "ch07_walk: error: cannot allocate %zu bytes\n", bytes);
        std::exit(2);
    }
    return p;
}

long long walk_ints(const std::string& mode, std::size_t n) {
    int* a = static_cast<int*>(lines_of(n * n * sizeof(int)));
    for (std::size_t i = 0; i < n * n; ++i) a[i] = static_cast<int>(i % 10);
    long long s = 0;
    if (mode == "row") s = ch07::o2::sum_rows(a, n);
    if (mode == "column") s = ch07::o2::sum_columns(a, n);
    std::free(a);
    return s;
}

double multiply(const std::string& mode, std::size_t n) {
    const auto m = cachebook::integer_valued_matrices(n);
    const std::size_t bytes = n * n * sizeof(double);
    auto* a = static_cast<double*>(lines_of(bytes));
    auto* b = static_cast<double*>(lines_of(bytes));
    auto* c = static_cast<double*>(lines_of(bytes));
    std::memcpy(a, m.a.data(), bytes);
    std::memcpy(b, m.b.data(), bytes);
    std::memset(c, 0, bytes);
    if (mode != "fill3") cachebook::matmul_in_order(cachebook::parse_order(mode), n, a, b, c);
    const double corner = c[n * n - 1];
    std::free(a);
    std::free(b);
    std::free(c);
    return corner;
}

bool is_order(const std::string& mode) {
    try {
        cachebook::parse_order(mode);
        return true;
    } catch (const std::invalid_argument&) {
        return false;
    }
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc == 3 ? argv[1] : "";
    char* end = nullptr;
    const long n = argc == 3 ? std::strtol(argv[2], &end, 10) : 0;
    const bool ints = mode == "none" || mode == "row" || mode == "column";
    const bool product = mode == "fill3" || is_order(mode);
    if (!(ints || product) || *end != '\0' || n < 1 || n > 16384 || (product && n > 1024)) {
        std::fprintf(stderr,
                     "ch07_walk: error: expected none|row|column N (1 to 16384) or fill3|ijk|...|kji N "
                     "(1 to 1024)\n");
        return 2;
    }
    const auto size = static_cast<std::size_t>(n);
    if (ints)
        std::printf("%s %ld: sum %lld\n", mode.c_str(), n, walk_ints(mode, size));
    else
        std::printf("%s %ld: C[n-1][n-1] = %.0f\n", mode.c_str(), n, multiply(mode, size));
    return 0;
}
