#pragma once
// Chapter 9 exercises. Write the bodies in starter.cpp; `make grade CH=09` scores them.
// starter.cpp is compiled with -mavx2 -mfma, so AVX2 intrinsics (<immintrin.h>) may be used;
// the grader runs exercise 1 only on a CPU that has AVX2 and FMA.
#include <cstddef>

#include "matmul.hpp"

namespace ch09_exercise {

/// Exercise 1 (step 4, the remainder loop): c[j] += a * b[j] for j in [0, count), eight
/// floats at a time with _mm256_fmadd_ps while eight remain, and the last count % 8 one
/// at a time, with a * b[j] + c[j] as a multiply and an add, as step 4 does. Nothing at
/// or beyond index `count` of b or c may be read or written.
void add_scaled_row(float a, const float* b, float* c, std::size_t count);

/// Exercise 2 (step 6, the cache blocks): choose KC, MC and NC for a micro-kernel of
/// mr x nr floats from the cache sizes in bytes (0 = unknown: assume 32 KiB, 256 KiB and
/// 8 MiB). KC: the largest multiple of 8 (at least 16) with a KC x nr sliver of B in three
/// quarters of L1 (l1 / 4 * 3 bytes). MC: the largest multiple of mr (at least mr) with an
/// MC x KC block of A in three quarters of L2 (l2 / 4 * 3 bytes). NC: the largest multiple of nr with a KC x NC panel
/// of B in half of L3, at least nr and at most the largest multiple of nr not above 4096.
ch09::Blocking choose_blocks(std::size_t l1, std::size_t l2, std::size_t l3, std::size_t mr, std::size_t nr);

/// Exercise 3 (Amdahl's law, read backwards): the share p of the work that runs in parallel,
/// given the measured `speedup` on `workers` workers (workers >= 2), from
/// speedup = 1 / ((1 - p) + p / workers). A speed-up below 1 gives 0 and one above `workers`
/// gives 1: a share is never negative or more than all of the work.
double parallel_share(double speedup, int workers);

/// Exercise 4 (the kernel, scored for speed): C = A x B for n x n row-major floats, on one
/// core, overwriting C, as fast as you can: any loop order, tiling or intrinsics, any order of
/// summation, as long as every element is within the rounding bound of the exact product that
/// the chapter's checks use. The cases check the result; the instructor's performance score
/// simulates its misses in a small cache and times it beside the reference solution.
void multiply(const float* a, const float* b, float* c, std::size_t n);

}  // namespace ch09_exercise
