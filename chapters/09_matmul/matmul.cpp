#include "matmul.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "kernels.hpp"

namespace ch09 {

std::string isa_name(Isa isa) {
    switch (isa) {
        case Isa::Scalar:
            return "scalar";
        case Isa::Avx2:
            return "avx2";
        case Isa::Avx512:
            return "avx512";
        case Isa::Neon:
            return "neon";
    }
    return "?";
}

bool isa_supported(Isa isa) {
    const auto f = cachebook::cpu_features();
    switch (isa) {
        case Isa::Scalar:
            return true;
        case Isa::Avx2:
            return f.avx2 && f.fma && detail::avx2_built();
        case Isa::Avx512:
            return f.avx512f && f.avx2 && f.fma && detail::avx512_built();
        case Isa::Neon:
            return f.neon && detail::neon_built();
    }
    return false;
}

std::string isa_unavailable_reason(Isa isa) {
    if (isa_supported(isa)) return "";
    const auto f = cachebook::cpu_features();
    if (isa == Isa::Avx2 && !(f.avx2 && f.fma)) return "this CPU has no AVX2 + FMA";
    if (isa == Isa::Avx512 && !(f.avx512f && f.avx2 && f.fma)) return "this CPU has no AVX-512";
    if (isa == Isa::Neon && !f.neon) return "this CPU has no NEON (Advanced SIMD)";
#if defined(__x86_64__)
    return "this build has no " + isa_name(isa) + " kernels (built with -DCACHEBOOK_PORTABLE=ON for plain x86-64)";
#else
    return "this build has no " + isa_name(isa) + " kernels (built for another architecture)";
#endif
}

Isa best_isa() {
    for (Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Neon})
        if (isa_supported(isa)) return isa;
    return Isa::Scalar;
}

Isa step4_isa() {
    if (isa_supported(Isa::Avx2)) return Isa::Avx2;
    if (isa_supported(Isa::Neon)) return Isa::Neon;
    return Isa::Scalar;
}

int simd_width(Isa isa) {
    switch (isa) {
        case Isa::Avx512:
            return 16;
        case Isa::Avx2:
            return 8;
        case Isa::Neon:
            return 4;  // 128-bit registers
        case Isa::Scalar:
            break;
    }
    return 1;
}

namespace {

void require_isa(Isa isa) {
    if (!isa_supported(isa))
        throw std::invalid_argument("the " + isa_name(isa) + " kernels cannot run: " + isa_unavailable_reason(isa));
}

// Runs body(t) for t in [0, threads): t = 0 on the calling thread, the rest on new threads.
template <class F>
void run_threads(int threads, F&& body) {
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(threads > 1 ? threads - 1 : 0));
    for (int t = 1; t < threads; ++t) pool.emplace_back([&body, t] { body(t); });
    body(0);
    for (auto& th : pool) th.join();
}

std::size_t round_up(std::size_t x, std::size_t to) {
    return (x + to - 1) / to * to;
}

}  // namespace

// ---- Steps 4 and 5 ----------------------------------------------------------------------

void matmul_tiled_simd(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile, Isa isa) {
    if (tile == 0) throw std::invalid_argument("tile must be at least 1");
    if (isa == Isa::Scalar) return matmul_tiled(a, b, c, s, rows, tile);  // the fallback
    if (isa == Isa::Neon) {
        require_isa(Isa::Neon);
        return detail::tiled_neon(a, b, c, s, rows, tile);
    }
    require_isa(Isa::Avx2);
    detail::tiled_avx2(a, b, c, s, rows, tile);
}

// [snippet: threaded]
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

// ---- Step 6 -----------------------------------------------------------------------------

std::vector<MicroKernel> micro_kernels(Isa isa) {
    // Even building the list runs code compiled for the isa: ask the CPU first.
    if (!isa_supported(isa)) return {};
    switch (isa) {
        case Isa::Scalar:
            return detail::scalar_micro_kernels();
        case Isa::Avx2:
            return detail::avx2_micro_kernels();
        case Isa::Avx512:
            return detail::avx512_micro_kernels();
        case Isa::Neon:
            return detail::neon_micro_kernels();
    }
    return {};
}

MicroKernel default_micro_kernel(Isa isa) {
    auto all = micro_kernels(isa);
    if (all.empty()) all = detail::scalar_micro_kernels();
    return all.front();
}

std::optional<MicroKernel> without_c_prefetch(const MicroKernel& kernel) {
    for (const auto& k : micro_kernels(kernel.isa))
        if (k.name == kernel.name + " no C prefetch") return k;
    return std::nullopt;
}

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

Blocking machine_blocking(const MicroKernel& kernel, const cachebook::Machine& machine) {
    auto size = [&](int level) {
        const auto c = machine.data_cache(level);
        return c ? c->size_bytes : std::size_t{0};
    };
    return derive_blocking(size(1), size(2), size(3), kernel.mr, kernel.nr);
}

// [snippet: packing]
void pack_a(const float* a, std::size_t lda, std::size_t mc, std::size_t kc, std::size_t mr, float* out) {
    constexpr std::size_t kStep = 16;           // one cache line of each row of A per round
    for (std::size_t r = 0; r < mc; r += mr) {  // one sliver of mr rows: for each p, mr values in a row
        const std::size_t h = std::min(mr, mc - r);
        // A round reads one line from each of the mr rows and writes kStep rows of the sliver:
        // walking all mr rows per column p instead would touch mr lines for every 4 bytes.
        for (std::size_t p0 = 0; p0 < kc; p0 += kStep) {
            const std::size_t p_end = std::min(kc, p0 + kStep);
            for (std::size_t i = 0; i < h; ++i)
                for (std::size_t p = p0; p < p_end; ++p) out[p * mr + i] = a[(r + i) * lda + p];
            for (std::size_t i = h; i < mr; ++i)  // pad the last sliver
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

namespace {

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

std::size_t ceil_div(std::size_t x, std::size_t y) {
    return (x + y - 1) / y;
}

// A packing buffer on 2 MiB pages where the system allows it (Linux's transparent huge pages):
// the packed panel and block then take a few TLB entries instead of hundreds, which leaves
// room for the pages of C that the micro-kernel walks down, one per row.
Buffer packing_buffer(std::size_t floats) {
    constexpr std::size_t huge = std::size_t{2} << 20;
    const std::size_t bytes = round_up(std::max<std::size_t>(floats, 1) * sizeof(float), huge);
    auto* p = static_cast<float*>(std::aligned_alloc(huge, bytes));
    if (p == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    ::madvise(p, bytes, MADV_HUGEPAGE);  // only a hint: without it the buffer works the same
#endif
    return Buffer(p);
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

}  // namespace

// [snippet: blis]
void matmul_blis(const float* a, const float* b, float* c, Shape s, const MicroKernel& kernel, Blocking blocks,
                 int threads) {
    require_isa(kernel.isa);
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
    // in its own core's L2. The rows of C are cut into blocks of equal height, at most mc and
    // as many as a multiple of the threads, so that no thread is left with a short last block.
    const std::size_t blocks_m = round_up(ceil_div(m, std::max(mr, blocks.mc / mr * mr)), parts);
    const std::size_t mc = round_up(ceil_div(m, blocks_m), mr);
    // The panel of B is packed once, by all threads together, and shared. Two panels
    // alternate, so a thread that finishes early packs the next one while the others compute.
    float* panels[2] = {kept_buffer(0, kc * nc), kept_buffer(1, kc * nc)};
    std::atomic<std::size_t> next_block[2] = {0, 0};  // blocks of rows taken so far, per panel
    std::barrier panel_ready(parts);

    std::vector<float*> a_blocks;  // one per thread: the block of A it works on
    for (int t = 0; t < parts; ++t) a_blocks.push_back(kept_buffer(2 + std::size_t(t), mc * kc));

    run_threads(parts, [&](int t) {
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

// ---- Checking ---------------------------------------------------------------------------

std::vector<double> reference_rows(const float* a, const float* b, Shape s, RowRange rows) {
    std::vector<double> out(rows.size() * s.n, 0.0);
    for (std::size_t i = rows.begin; i < rows.end; ++i) {
        double* ci = out.data() + (i - rows.begin) * s.n;
        for (std::size_t p = 0; p < s.k; ++p) {
            const double aip = a[i * s.k + p];
            for (std::size_t j = 0; j < s.n; ++j) ci[j] += aip * double(b[p * s.n + j]);
        }
    }
    return out;
}

std::vector<double> abs_product_rows(const float* a, const float* b, Shape s, RowRange rows) {
    std::vector<double> out(rows.size() * s.n, 0.0);
    for (std::size_t i = rows.begin; i < rows.end; ++i) {
        double* ci = out.data() + (i - rows.begin) * s.n;
        for (std::size_t p = 0; p < s.k; ++p) {
            const double aip = std::fabs(double(a[i * s.k + p]));
            for (std::size_t j = 0; j < s.n; ++j) ci[j] += aip * std::fabs(double(b[p * s.n + j]));
        }
    }
    return out;
}

double gamma_bound(std::size_t k) {
    const double u = std::ldexp(1.0, -24);
    const double ku = double(std::max<std::size_t>(k, 1)) * u;
    return ku / (1.0 - ku);
}

Check check_rows(const float* c, Shape s, RowRange rows, const std::vector<double>& ref,
                 const std::vector<double>& abs_ab) {
    Check out;
    out.matches = true;
    const double g = gamma_bound(s.k);
    for (std::size_t i = rows.begin; i < rows.end; ++i)
        for (std::size_t j = 0; j < s.n; ++j) {
            const std::size_t r = (i - rows.begin) * s.n + j;
            const double err = std::fabs(double(c[i * s.n + j]) - ref[r]);
            const double bound = g * abs_ab[r];
            const double ratio = bound > 0 ? err / bound : (err == 0 ? 0.0 : HUGE_VAL);
            if (!(ratio <= 1.0)) out.matches = false;  // also catches NaN
            out.worst_ratio = std::max(out.worst_ratio, std::isnan(ratio) ? HUGE_VAL : ratio);
            ++out.elements;
        }
    return out;
}

// ---- The machine ------------------------------------------------------------------------

double measure_fma_gflops(Isa isa, int threads, double seconds) {
    require_isa(isa);
    auto loop = [isa](std::size_t iterations) {
        switch (isa) {
            case Isa::Avx512:
                return detail::fma_loop_avx512(iterations);
            case Isa::Avx2:
                return detail::fma_loop_avx2(iterations);
            case Isa::Neon:
                return detail::fma_loop_neon(iterations);
            case Isa::Scalar:
                break;
        }
        return detail::fma_loop_scalar(iterations);
    };
    // Calibrate one run to about 10 ms, then keep the fastest of many runs: on a shared machine
    // some run goes undisturbed, and noise only ever adds time.
    std::size_t iterations = 1 << 10;
    for (;;) {
        const auto start = cachebook::Clock::now();
        loop(iterations);
        if (cachebook::seconds_since(start) > 0.01 || iterations > (std::size_t{1} << 40)) break;
        iterations *= 2;
    }
    const int runs = std::max(5, static_cast<int>(seconds / 0.01));
    double flops = 0;
    const auto timing = cachebook::time_runs(
        runs,
        [&] {
            std::vector<double> each(static_cast<std::size_t>(threads));
            run_threads(threads, [&](int t) { each[static_cast<std::size_t>(t)] = loop(iterations); });
            flops = 0;
            for (double f : each) flops += f;
        },
        0);
    return flops / timing.min() / 1e9;
}

double nominal_clock_ghz() {
    return cachebook::machine().nominal_ghz;
}

double formula_peak_gflops(int cores, double ghz, int width, int fma_ports) {
    return double(cores) * ghz * (2.0 * width * fma_ports);
}

// [snippet: triad]
double measure_triad_gbs(std::size_t floats, int threads, int runs) {
    Buffer x = make_buffer(floats), y = make_buffer(floats), z = make_buffer(floats);
    const std::size_t per = (floats + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
    auto triad = [&](float scale) {
        run_threads(threads, [&](int t) {
            const std::size_t begin = std::min(floats, per * static_cast<std::size_t>(t));
            const std::size_t end = std::min(floats, begin + per);
            for (std::size_t i = begin; i < end; ++i) x[i] = y[i] + scale * z[i];
        });
        cachebook::clobber_memory();
    };
    run_threads(threads, [&](int t) {  // first touch by the thread that will use each part
        const std::size_t begin = std::min(floats, per * static_cast<std::size_t>(t));
        const std::size_t end = std::min(floats, begin + per);
        for (std::size_t i = begin; i < end; ++i) x[i] = 0, y[i] = 1, z[i] = 2;
    });
    const auto timing = cachebook::time_runs(
        runs, [&] { triad(3.0f); }, 1);
    cachebook::do_not_optimize(x[floats / 2]);
    return 3.0 * sizeof(float) * double(floats) / timing.min() / 1e9;
}
// [end: triad]

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

// ---- Helpers ----------------------------------------------------------------------------

void AlignedFree::operator()(float* p) const {
    std::free(p);
}

Buffer make_buffer(std::size_t floats) {
    const std::size_t bytes = round_up(std::max<std::size_t>(floats, 1) * sizeof(float), 64);
    auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p == nullptr) throw std::bad_alloc();
    return Buffer(p);
}

namespace {
// xorshift32: the same numbers on every platform and library.
std::uint32_t next(std::uint32_t& state) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}
}  // namespace

void fill_random(float* p, std::size_t count, std::uint32_t start) {
    std::uint32_t state = start ? start : 1;
    for (std::size_t i = 0; i < count; ++i)
        p[i] = float(next(state) >> 8) * (1.0f / 8388608.0f) - 1.0f;  // 24 bits -> [-1, 1)
}

void fill_small_integers(float* p, std::size_t count, std::uint32_t start) {
    std::uint32_t state = start ? start : 1;
    for (std::size_t i = 0; i < count; ++i) p[i] = float(int(next(state) % 5) - 2);
}

std::size_t tile_from_l1(std::size_t l1_bytes) {
    std::size_t t = 8;
    while (3 * (2 * t) * (2 * t) * sizeof(float) <= l1_bytes) t *= 2;
    return t;
}

}  // namespace ch09
