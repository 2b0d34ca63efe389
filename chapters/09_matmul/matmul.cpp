// Chapter 9's lesson beside the per-instruction-set kernels (matmul_*.cpp): the peak formula,
// the tile from L1, steps 4 and 5, the roofline's intensities, and step 6's packing, blocks
// and loops around the micro-kernel. The chapter shows this file whole, in order.
#include "matmul.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "cachebook/spin_barrier.hpp"
#include "cachebook/tile_rule.hpp"
#include "kernels.hpp"

namespace ch09 {

// [snippet: formula_peak]
double formula_peak_gflops(int cores, double ghz, int width, int fma_ports) {
    return double(cores) * ghz * (2.0 * width * fma_ports);  // an FMA is a multiply and an add
}
// [end: formula_peak]

// [snippet: tile_from_l1]
std::size_t tile_from_l1(std::size_t l1_bytes) {
    // Chapter 4's rule, 3 T^2 S <= 3/4 L1, on floats; at least one vector of eight floats.
    return std::max<std::size_t>(8, cachebook::rule_tile(l1_bytes, sizeof(float)));
}
// [end: tile_from_l1]

// [snippet: tiled_simd_choice]
void matmul_tiled_simd(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile, Isa isa) {
    if (tile == 0) throw std::invalid_argument("tile must be at least 1");
    if (isa == Isa::Scalar) return matmul_tiled(a, b, c, s, rows, tile);  // the fallback
    // kernels_of checks that this build and CPU can run them; an AVX-512 CPU runs the AVX2 kernel too.
    detail::kernels_of(isa == Isa::Neon ? Isa::Neon : Isa::Avx2).tiled(a, b, c, s, rows, tile);
}
// [end: tiled_simd_choice]

// [snippet: threaded]
void run_threads(int threads, const std::function<void(int)>& body) {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back([&body, t] { body(t); });
    body(0);  // thread 0 is the caller
    for (auto& th : pool) th.join();
}

void matmul_threaded(const float* a, const float* b, float* c, Shape s, std::size_t tile, Isa isa, int threads) {
    if (threads < 1) throw std::invalid_argument("threads must be at least 1");
    const std::size_t parts = std::min<std::size_t>(static_cast<std::size_t>(threads), std::max<std::size_t>(s.m, 1));
    const std::size_t rows_per_thread = (s.m + parts - 1) / parts;
    // Each thread writes only its own rows of C and only reads A and B: no locks needed.
    run_threads(static_cast<int>(parts), [&](int t) {
        const std::size_t begin = std::min(s.m, static_cast<std::size_t>(t) * rows_per_thread);
        const std::size_t end = std::min(s.m, begin + rows_per_thread);
        if (begin < end) matmul_tiled_simd(a, b, c, s, {begin, end}, tile, isa);
    });
}
// [end: threaded]

// [snippet: intensity]
// FLOPs per byte brought from memory, for matrices much larger than every cache.
double intensity_naive(std::size_t line_bytes) {
    return 2.0 / double(line_bytes);  // every multiply-add brings a new line of B (a column walk)
}
double intensity_ikj() {
    return 2.0 / sizeof(float);  // every multiply-add reads one new float of B; a row of C stays cached
}
double intensity_tiled(std::size_t tile) {
    // B is read once per strip of `tile` rows of C: 4 K N M / T bytes for 2 M N K FLOPs.
    return double(tile) / 2.0;
}
double intensity_blis(Shape s, Blocking blocks) {
    // A read once per panel of nc columns, B once, C read and written once per kc slice.
    const double m = double(s.m), n = double(s.n), k = double(s.k);
    const double panels = std::ceil(n / double(blocks.nc)), slices = std::ceil(k / double(blocks.kc));
    const double bytes = sizeof(float) * (m * k * panels + k * n + 2.0 * m * n * slices);
    return s.flops() / bytes;
}
// [end: intensity]

// [snippet: packing]
namespace {

#if defined(__SSE2__)
constexpr bool kTransposeInRegisters = true;
// Four rows of four floats of A (lda apart) into four groups of four of the sliver (mr apart),
// transposed in registers: four loads and four stores where a float at a time takes sixteen.
void pack_a_4x4(const float* a, std::size_t lda, float* out, std::size_t mr) {
    __m128 r0 = _mm_loadu_ps(a), r1 = _mm_loadu_ps(a + lda), r2 = _mm_loadu_ps(a + 2 * lda),
           r3 = _mm_loadu_ps(a + 3 * lda);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);  // now r0 holds column 0 of the four rows, and so on
    _mm_storeu_ps(out, r0);
    _mm_storeu_ps(out + mr, r1);
    _mm_storeu_ps(out + 2 * mr, r2);
    _mm_storeu_ps(out + 3 * mr, r3);
}
#else
constexpr bool kTransposeInRegisters = false;  // no SSE (not x86-64): a float at a time
void pack_a_4x4(const float*, std::size_t, float*, std::size_t) {}
#endif

}  // namespace

void pack_a(const float* a, std::size_t lda, std::size_t mc, std::size_t kc, std::size_t mr, float* out) {
    constexpr std::size_t kStep = 16;           // one cache line of each row of A per round
    for (std::size_t r = 0; r < mc; r += mr) {  // one sliver of mr rows: for each p, mr values in a row
        const std::size_t h = std::min(mr, mc - r);
        // A round reads one line from each of the mr rows and writes kStep rows of the sliver:
        // walking all mr rows per column p instead would touch mr lines for every 4 bytes.
        for (std::size_t p0 = 0; p0 < kc; p0 += kStep) {
            const std::size_t p_end = std::min(kc, p0 + kStep);
            std::size_t i = 0;
            if (kTransposeInRegisters && p_end - p0 == kStep)  // rows four by four, columns four by four
                for (; i + 4 <= h; i += 4)
                    for (std::size_t p = p0; p < p_end; p += 4)
                        pack_a_4x4(a + (r + i) * lda + p, lda, out + p * mr + i, mr);
            for (; i < h; ++i)  // the rest, a float at a time
                for (std::size_t p = p0; p < p_end; ++p) out[p * mr + i] = a[(r + i) * lda + p];
            for (; i < mr; ++i)  // pad the last sliver
                for (std::size_t p = p0; p < p_end; ++p) out[p * mr + i] = 0.0f;
        }
        out += mr * kc;
    }
}

void pack_b(const float* b, std::size_t ldb, std::size_t kc, std::size_t nc, std::size_t nr, float* out) {
    constexpr std::size_t kRows = 8;  // rows of B read together, each from start to end
    // Rows of B are read a few at a time across all slivers: each row is then read in order,
    // as the hardware prefetcher expects, instead of nr floats from each of kc rows in turn.
    for (std::size_t p0 = 0; p0 < kc; p0 += kRows) {
        const std::size_t p_end = std::min(kc, p0 + kRows);
        for (std::size_t s = 0; s < nc; s += nr) {  // sliver s: for each p, nr values in a row
            const std::size_t w = std::min(nr, nc - s);
            for (std::size_t p = p0; p < p_end; ++p) {
                float* dst = out + s * kc + p * nr;
                std::memcpy(dst, b + p * ldb + s, w * sizeof(float));
                std::fill(dst + w, dst + nr, 0.0f);  // pad the last sliver
            }
        }
    }
}
// [end: packing]

// [snippet: derive_blocking]
Blocking derive_blocking(std::size_t l1, std::size_t l2, std::size_t l3, std::size_t mr, std::size_t nr) {
    constexpr std::size_t f = sizeof(float);
    if (l1 == 0) l1 = 32 * 1024;  // unknown caches: common sizes
    if (l2 == 0) l2 = 256 * 1024;
    if (l3 == 0) l3 = 8 * 1024 * 1024;
    Blocking b;
    // A kc x nr sliver of B stays in L1 while the micro-kernel sweeps it across the mc rows:
    // three quarters of L1 (the rest for the sliver of A and the block of C passing through).
    b.kc = std::max<std::size_t>(16, (l1 / 4 * 3) / (nr * f) / 8 * 8);
    // An mc x kc block of A stays in L2 while the macro-kernel reuses it for every sliver of B:
    // three quarters of L2 (the rest for the slivers of B and the lines of C).
    b.mc = std::max(mr, (l2 / 4 * 3) / (b.kc * f) / mr * mr);
    // A kc x nc panel of B stays in L3 while every block of A passes it: half of L3, at most 4096 columns.
    b.nc = std::clamp<std::size_t>((l3 / 2) / (b.kc * f) / nr * nr, nr, std::max<std::size_t>(nr, 4096 / nr * nr));
    return b;
}
// [end: derive_blocking]

// [snippet: block_candidates]
std::vector<Blocking> block_candidates(Blocking rule, std::size_t mr) {
    // The rule fills 3/4 of a cache with one operand, but the others pass through the same
    // cache and the replacement policy is not perfect; so try smaller blocks too, and a
    // slightly deeper KC: every micro-kernel call pays for loading and storing its block of C
    // once, and a deeper KC spreads that cost over more FMAs.
    std::vector<Blocking> out;
    for (std::size_t kc : {rule.kc / 2, rule.kc * 3 / 4, rule.kc, rule.kc * 5 / 4})
        for (std::size_t mc : {rule.mc / 4, rule.mc / 2, rule.mc})
            out.push_back({std::max(mr, mc / mr * mr), std::max<std::size_t>(8, kc / 8 * 8), rule.nc});
    return out;
}
// [end: block_candidates]

namespace {

// [snippet: macro_kernel]
std::size_t round_up(std::size_t x, std::size_t to) {
    return (x + to - 1) / to * to;
}

std::size_t ceil_div(std::size_t x, std::size_t y) {
    return (x + y - 1) / y;
}

// Loops 2 and 1 around the micro-kernel: one packed block of A (mcur x kcur) against the
// packed panel of B (kcur x ncur), into the block of C at `c`. The sliver of B stays in L1
// while loop 1 runs it past every sliver of A; the block of A stays in L2 throughout.
void macro_kernel(const MicroKernel& kernel, std::size_t mcur, std::size_t ncur, std::size_t kcur,
                  const float* a_packed, const float* b_packed, float* c, std::size_t ldc, bool accumulate,
                  float* edge) {
    const std::size_t mr = kernel.mr, nr = kernel.nr;
    for (std::size_t jr = 0; jr < ncur; jr += nr)        // loop 2: slivers of B
        for (std::size_t ir = 0; ir < mcur; ir += mr) {  // loop 1: slivers of A
            const std::size_t h = std::min(mr, mcur - ir), w = std::min(nr, ncur - jr);
            float* cij = c + ir * ldc + jr;
            const float* ap = a_packed + ir * kcur;
            const float* bp = b_packed + jr * kcur;
            if (h == mr && w == nr) {
                kernel.fn(kcur, ap, bp, cij, ldc, accumulate);
            } else {  // edge of C: the full block into `edge`, then only the part that exists
                kernel.fn(kcur, ap, bp, edge, nr, false);
                for (std::size_t i = 0; i < h; ++i)
                    for (std::size_t j = 0; j < w; ++j)
                        cij[i * ldc + j] = (accumulate ? cij[i * ldc + j] : 0.0f) + edge[i * nr + j];
            }
        }
}
// [end: macro_kernel]

// [snippet: packing_buffers]
// A packing buffer on 2 MiB pages where the system allows it (Linux's transparent huge pages):
// the packed panel and block then take a few TLB entries instead of hundreds, which leaves
// room for the pages of C that the micro-kernel walks down, one per row.
Buffer packing_buffer(std::size_t floats) {
    return make_page_buffer(floats, cachebook::PageSize::Huge);  // only a hint: 4 KiB pages work the same
}

// Buffer `slot` of step 6 on this thread, at least `floats` long. Kept from one call to the
// next, as the libraries keep theirs: a fresh buffer costs a page fault per page, every call.
float* kept_buffer(std::size_t slot, std::size_t floats) {
    struct Kept {
        Buffer buffer;
        std::size_t floats = 0;
    };
    thread_local std::vector<Kept> kept;
    if (kept.size() <= slot) kept.resize(slot + 1);
    if (kept[slot].floats < floats) kept[slot] = {packing_buffer(floats), floats};
    return kept[slot].buffer.get();
}
// [end: packing_buffers]

}  // namespace

// [snippet: blis]
std::size_t block_rows(std::size_t m, std::size_t mc, std::size_t mr, int parts) {
    // The rows of C are cut into blocks of equal height, at most mc and as many as a multiple
    // of the threads, so that no thread is left with a short last block.
    const std::size_t blocks = round_up(ceil_div(m, std::max(mr, mc / mr * mr)), static_cast<std::size_t>(parts));
    return round_up(ceil_div(m, blocks), mr);
}

void matmul_blis(const float* a, const float* b, float* c, Shape s, const MicroKernel& kernel, Blocking blocks,
                 int threads) {
    detail::require_isa(kernel.isa);
    if (threads < 1) throw std::invalid_argument("threads must be at least 1");
    const std::size_t m = s.m, n = s.n, k = s.k, mr = kernel.mr, nr = kernel.nr;
    if (m == 0 || n == 0) return;
    if (k == 0) return std::fill(c, c + m * n, 0.0f);
    // The kc-deep slices are made equal: with a fixed KC the last one could be a few steps
    // deep, and each call on it would pay for a block of C for almost no arithmetic.
    const std::size_t kc = ceil_div(k, ceil_div(k, std::max<std::size_t>(blocks.kc, 1)));
    const std::size_t nc = std::min(std::max(nr, blocks.nc / nr * nr), round_up(n, nr));
    const int parts = static_cast<int>(std::min(static_cast<std::size_t>(threads), ceil_div(m, mr)));
    // Loop 3 is the one the threads divide: each thread packs its own blocks of A, which stay
    // in its own core's L2.
    const std::size_t mc = block_rows(m, blocks.mc, mr, parts);
    const std::size_t blocks_m = ceil_div(m, mc);
    // The panel of B is packed once, by all threads together, and shared. Two panels
    // alternate, so a thread that finishes early packs the next one while the others compute.
    float* panels[2] = {kept_buffer(0, kc * nc), kept_buffer(1, kc * nc)};
    std::atomic<std::size_t> next_block[2] = {0, 0};  // blocks of rows taken so far, per panel
    // The threads meet once per slice, when its panel is packed: a barrier that sleeps would
    // pay a wake-up every time (on a virtual machine, a trip through the host).
    cachebook::SpinBarrier panel_ready(parts);

    std::vector<float*> a_blocks;  // one per thread: the block of A it works on
    for (int t = 0; t < parts; ++t) a_blocks.push_back(kept_buffer(2 + std::size_t(t), mc * kc));

    detail::run_on_pool(parts, [&](int t) {
        float* a_packed = a_blocks[std::size_t(t)];  // private to thread t
        std::vector<float> edge(mr * nr);            // a partial block of C is computed here first
        std::size_t slice = 0;
        for (std::size_t jc = 0; jc < n; jc += nc) {  // loop 5: panels of nc columns
            const std::size_t ncur = std::min(nc, n - jc);
            for (std::size_t pc = 0; pc < k; pc += kc, ++slice) {  // loop 4: kc-deep slices
                const std::size_t kcur = std::min(kc, k - pc);
                float* b_packed = panels[slice % 2];
                // Each thread packs its own run of slivers of the panel.
                const std::size_t slivers = ceil_div(ncur, nr),
                                  per = ceil_div(slivers, static_cast<std::size_t>(parts));
                const std::size_t first = std::min(slivers, per * static_cast<std::size_t>(t)) * nr;
                const std::size_t last = std::min(ncur, first + per * nr);
                if (first < last) pack_b(b + pc * n + jc + first, n, kcur, last - first, nr, b_packed + first * kcur);
                // This panel's counter was last used two slices ago, which every thread has left.
                if (t == 0) next_block[slice % 2].store(0, std::memory_order_relaxed);
                panel_ready.arrive_and_wait();
                // Loop 3: blocks of mc rows, taken in turn, so a thread slowed by other work on
                // its core takes fewer of them instead of holding up the others.
                for (std::size_t blk; (blk = next_block[slice % 2].fetch_add(1)) < blocks_m;) {
                    const std::size_t ic = blk * mc;
                    if (ic >= m) break;
                    const std::size_t mcur = std::min(mc, m - ic);
                    pack_a(a + ic * k + pc, k, mcur, kcur, mr, a_packed);
                    macro_kernel(kernel, mcur, ncur, kcur, a_packed, b_packed, c + ic * n + jc, n, pc > 0, edge.data());
                }
            }
        }
    });
}
// [end: blis]

}  // namespace ch09
