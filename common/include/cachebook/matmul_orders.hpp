#pragma once
/// @file matmul_orders.hpp
/// @brief The six loop orders of C = A x B as real code (chapters 3 and 4).
///
/// Matrices are n x n doubles, row-major, in contiguous buffers.

#include <cstddef>
#include <vector>

#include "cachebook/trace.hpp"

namespace cachebook {

/// C = A x B with the triple loop in the given order. C is zeroed first.
void matmul_in_order(LoopOrder order, std::size_t n, const double* a, const double* b, double* c);

/// Two n x n matrices of small integers, A[i][j] = (i + j) % 7 and
/// B[i][j] = (i * j) % 5: every product and partial sum is an exact double,
/// so any order of the additions gives bit-identical results.
struct IntegerMatrices {
    std::vector<double> a, b;
};
IntegerMatrices integer_valued_matrices(std::size_t n);

}  // namespace cachebook
