#pragma once
// The register-blocked micro-kernel and the peak's FMA loop, written once for any vector type V.
// Each file that includes it compiles them for its own instruction set; everything here has
// internal linkage, so the copies never mix.
//
// V provides: using reg; static constexpr std::size_t width; zero(), load(p), store(p, r),
// broadcast(x), fma(a, b, c) = a * b + c, add(a, b).

#include <cstddef>

#include "cachebook/measure.hpp"

namespace {

// [snippet: fma_peak]
// Twelve independent accumulators: more than an FMA's latency (4 or 5 cycles) times the FMA units
// (2 on most cores) in flight, so the loop runs at the units' throughput, not their latency.
// Returns the FLOPs done: a multiply and an add per float of each FMA.
template <class V>
double fma_peak_loop(std::size_t iterations) {
    constexpr int chains = 12;
    typename V::reg acc[chains];
    for (int i = 0; i < chains; ++i) acc[i] = V::broadcast(float(i));
    const typename V::reg scale = V::broadcast(0.999999f), shift = V::broadcast(1e-6f);
    for (std::size_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
        for (int i = 0; i < chains; ++i) acc[i] = V::fma(acc[i], scale, shift);
    }
    typename V::reg sum = acc[0];
    for (int i = 1; i < chains; ++i) sum = V::add(sum, acc[i]);
    cachebook::do_not_optimize(sum);
    return double(iterations) * chains * V::width * 2;
}
// [end: fma_peak]

// [snippet: micro_kernel]
// An MR x (NV * V::width) block of C lives in MR * NV registers for the whole kc loop:
// each step loads NV vectors of B, broadcasts MR values of A, and does MR * NV FMAs.
// Ahead > 0: every step also asks for the packed A and B that step p + Ahead will read.
template <class V, std::size_t MR, std::size_t NV, bool PrefetchC = true, std::size_t Ahead = 0>
void micro_kernel(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc, bool accumulate) {
    constexpr std::size_t NR = NV * V::width;
    typename V::reg acc[MR][NV];
#pragma GCC unroll 16
    for (std::size_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < NV; ++v) acc[i][v] = V::zero();
    // One step of the kc loop: NV vectors of B, MR broadcasts of A, MR * NV FMAs.
    auto step = [&]() __attribute__((always_inline)) {
        if constexpr (Ahead > 0) {
            // The packed slivers are read strictly in order, and the sliver of A of the next
            // call follows this one in memory: so at its end these already fetch the next one.
            __builtin_prefetch(a + Ahead * MR);
            __builtin_prefetch(b + Ahead * NR);
        }
        typename V::reg bv[NV];
#pragma GCC unroll 4
        for (std::size_t v = 0; v < NV; ++v) bv[v] = V::load(b + v * V::width);
#pragma GCC unroll 16
        for (std::size_t i = 0; i < MR; ++i) {
            const typename V::reg ai = V::broadcast(a[i]);
#pragma GCC unroll 4
            for (std::size_t v = 0; v < NV; ++v) acc[i][v] = V::fma(ai, bv[v], acc[i][v]);
        }
        a += MR;  // packed A: MR values per k
        b += NR;  // packed B: NR values per k
    };
    std::size_t p = 0;
    if constexpr (PrefetchC) {
        // Ask for the block of C early: its rows are a whole row of C apart, so no prefetcher
        // guesses them, and the rest of the kc loop hides the wait. One row every few steps:
        // asking for all MR rows at once stalls the core (each row is on another page of memory).
        constexpr std::size_t steps_per_row = 4;
        for (std::size_t i = 0; i < MR && p + steps_per_row <= kc; ++i) {
            __builtin_prefetch(c + i * ldc, 1);
            __builtin_prefetch(c + i * ldc + NR - 1, 1);
            for (std::size_t s = 0; s < steps_per_row; ++s, ++p) step();
        }
    }
    for (; p < kc; ++p) step();
#pragma GCC unroll 16
    for (std::size_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (std::size_t v = 0; v < NV; ++v) {
            float* dst = c + i * ldc + v * V::width;
            V::store(dst, accumulate ? V::add(V::load(dst), acc[i][v]) : acc[i][v]);
        }
}
// [end: micro_kernel]

}  // namespace
