#pragma once
// Chapter 3 exercises. Write the bodies in starter.cpp; `make grade CH=03` scores them.
#include <cstddef>
#include <string>

namespace ch03_exercise {

/// Predicted misses per inner iteration of each matrix.
struct Misses {
    double a = 0, b = 0, c = 0;
};

/// Exercise 1 (the textbook's analysis): for a loop order such as "kij"
/// (outer, middle, inner) and `per_line` elements in a line, the misses per
/// iteration of A[i][k], B[k][j] and C[i][j]: 1/per_line where the inner
/// variable is an array's right index, 1 where it is its left index, 0 where
/// it does not appear. analytic_misses("ijk", 8) is {0.125, 1, 0}.
Misses analytic_misses(const std::string& order, std::size_t per_line);

/// Exercise 2 (another order, kij): C = A x B for n x n row-major doubles, in the kij order
/// (k outer, i middle, j inner). Overwrite C.
void matmul_kij(std::size_t n, const double* a, const double* b, double* c);

}  // namespace ch03_exercise
