#pragma once
// The kernels compiled for one instruction set each (on x86-64: matmul_avx2.cpp with -mavx2
// -mfma, matmul_avx512.cpp with -mavx512f, so the rest of the build runs on any x86-64; on
// aarch64: matmul_neon.cpp). A file built for another architecture holds no kernel. Call
// them only when isa_supported() says the CPU has the instructions.

#include <cstddef>
#include <functional>
#include <vector>

#include "cachebook/core_share.hpp"
#include "matmul.hpp"

namespace ch09::detail {

/// Whether this build holds the isa's kernels (a CACHEBOOK_PORTABLE build has only the scalar ones).
bool avx2_built();
bool avx512_built();
bool neon_built();
/// Throws std::invalid_argument, saying why, when this build or CPU cannot run `isa`'s kernels.
void require_isa(Isa isa);

/// Runs body(t) for t in [0, threads): t = 0 on the calling thread, the others on a pool of
/// threads kept for the calling thread from one call to the next (step 6).
void run_on_pool(int threads, const std::function<void(int)>& body);

/// While one lives, every run_on_pool call on several threads made by the thread that made it
/// notes in `shares`, per thread of the call, its CPU time and the wall time from the call's start
/// to its own finish (the claim on two threads: threads that took turns on one core give no
/// verdict). A call on one thread races nothing and notes nothing.
class NotingShares {
public:
    explicit NotingShares(cachebook::CoreShares& shares);
    ~NotingShares();
    NotingShares(const NotingShares&) = delete;
    NotingShares& operator=(const NotingShares&) = delete;

private:
    cachebook::CoreShares* previous_;
};

void tiled_avx2(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile);
void tiled_neon(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile);
std::vector<MicroKernel> avx2_micro_kernels();
std::vector<MicroKernel> avx512_micro_kernels();  // empty when the compiler cannot build them
std::vector<MicroKernel> neon_micro_kernels();
std::vector<MicroKernel> scalar_micro_kernels();
/// FLOPs done by `iterations` rounds of the isa's independent-FMA loop.
double fma_loop_avx2(std::size_t iterations);
double fma_loop_avx512(std::size_t iterations);
double fma_loop_neon(std::size_t iterations);
double fma_loop_scalar(std::size_t iterations);

}  // namespace ch09::detail
