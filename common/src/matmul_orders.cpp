#include "cachebook/matmul_orders.hpp"

#include <algorithm>

namespace cachebook {
namespace {

// GCC's -O3 may interchange loops; the point of these functions is the order
// they are written in, so that optimization is off for them.
// Clang does not interchange loops at -O3 by default, and warns on this attribute.
#if defined(__GNUC__) && !defined(__clang__)
#define CACHEBOOK_KEEP_LOOP_ORDER __attribute__((optimize("no-loop-interchange")))
#else
#define CACHEBOOK_KEEP_LOOP_ORDER
#endif

// [snippet: inner-k]
CACHEBOOK_KEEP_LOOP_ORDER
void ijk(std::size_t n, const double* __restrict a, const double* __restrict b, double* __restrict c) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double sum = 0;  // C[i][j] stays in a register
            for (std::size_t k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];
            c[i * n + j] = sum;
        }
}
// [end: inner-k]

CACHEBOOK_KEEP_LOOP_ORDER
void jik(std::size_t n, const double* __restrict a, const double* __restrict b, double* __restrict c) {
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) {
            double sum = 0;
            for (std::size_t k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];
            c[i * n + j] = sum;
        }
}

// [snippet: inner-i]
CACHEBOOK_KEEP_LOOP_ORDER
void jki(std::size_t n, const double* __restrict a, const double* __restrict b, double* __restrict c) {
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t k = 0; k < n; ++k) {
            const double r = b[k * n + j];  // B[k][j] stays in a register
            for (std::size_t i = 0; i < n; ++i) c[i * n + j] += a[i * n + k] * r;
        }
}
// [end: inner-i]

CACHEBOOK_KEEP_LOOP_ORDER
void kji(std::size_t n, const double* __restrict a, const double* __restrict b, double* __restrict c) {
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < n; ++j) {
            const double r = b[k * n + j];
            for (std::size_t i = 0; i < n; ++i) c[i * n + j] += a[i * n + k] * r;
        }
}

CACHEBOOK_KEEP_LOOP_ORDER
void kij(std::size_t n, const double* __restrict a, const double* __restrict b, double* __restrict c) {
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t i = 0; i < n; ++i) {
            const double r = a[i * n + k];
            for (std::size_t j = 0; j < n; ++j) c[i * n + j] += r * b[k * n + j];
        }
}

// [snippet: inner-j]
CACHEBOOK_KEEP_LOOP_ORDER
void ikj(std::size_t n, const double* __restrict a, const double* __restrict b, double* __restrict c) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < n; ++k) {
            const double r = a[i * n + k];  // A[i][k] stays in a register
            for (std::size_t j = 0; j < n; ++j) c[i * n + j] += r * b[k * n + j];
        }
}
// [end: inner-j]

}  // namespace

void matmul_in_order(LoopOrder order, std::size_t n, const double* a, const double* b, double* c) {
    std::fill(c, c + n * n, 0.0);
    switch (order) {
        case LoopOrder::ijk:
            ijk(n, a, b, c);
            break;
        case LoopOrder::jik:
            jik(n, a, b, c);
            break;
        case LoopOrder::jki:
            jki(n, a, b, c);
            break;
        case LoopOrder::kji:
            kji(n, a, b, c);
            break;
        case LoopOrder::kij:
            kij(n, a, b, c);
            break;
        case LoopOrder::ikj:
            ikj(n, a, b, c);
            break;
    }
}

IntegerMatrices integer_valued_matrices(std::size_t n) {
    IntegerMatrices m{std::vector<double>(n * n), std::vector<double>(n * n)};
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            m.a[i * n + j] = static_cast<double>((i + j) % 7);
            m.b[i * n + j] = static_cast<double>((i * j) % 5);
        }
    return m;
}

}  // namespace cachebook
