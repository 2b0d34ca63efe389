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

/// What one instruction set's file compiled; a file built without its flags has none of it.
struct IsaKernels {
    /// Step 4 (AVX2 and NEON; none for the others: step 3 is the scalar fallback, AVX-512 CPUs run AVX2's).
    void (*tiled)(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile) = nullptr;
    std::vector<MicroKernel> micro_kernels;  // step 6's, the default first
    /// The peak's loop of independent FMAs: the FLOPs done by `iterations` rounds.
    double (*fma_loop)(std::size_t iterations) = nullptr;
};
IsaKernels avx2_kernels();
IsaKernels avx512_kernels();
IsaKernels neon_kernels();
IsaKernels scalar_kernels();
/// The kernels of `isa`, made once; require_isa(isa) first, since making them runs the isa's code.
const IsaKernels& kernels_of(Isa isa);

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

}  // namespace ch09::detail
