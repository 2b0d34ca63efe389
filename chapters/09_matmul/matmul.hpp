#pragma once
// Chapter 9: one matrix multiply, C = A x B, written seven ways and measured in GFLOPS.
//
// Every step computes C (m x n) = A (m x k) * B (k x n) in single precision; all three
// matrices are row-major and dense (leading dimension = number of columns). Every step
// overwrites the rows of C it is given. A RowRange lets a step compute only some rows
// of C: the threaded steps split rows across threads, and the program times the slow
// steps on a sample of rows of the full-size problem.
//
// The lesson, which the chapter shows whole, is matmul.cpp and matmul_*.cpp (one file per
// instruction set); kernels.cpp says which instruction sets run here, lab_blas.cpp calls the
// libraries of step 7, and lab.hpp declares how the program measures all of it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/chase.hpp"
#include "cachebook/machine.hpp"

namespace ch09 {

/// C (m x n) = A (m x k) * B (k x n).
struct Shape {
    std::size_t m = 0, n = 0, k = 0;
    /// Floating-point operations of the whole product: one multiply and one add per term.
    [[nodiscard]] double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

/// Rows [begin, end) of C.
struct RowRange {
    std::size_t begin = 0, end = 0;
    [[nodiscard]] std::size_t size() const { return end - begin; }
};

/// The instruction sets the kernels are written for: AVX2 and AVX-512 on x86-64, NEON on aarch64.
enum class Isa { Scalar, Avx2, Avx512, Neon };
/// Every isa, narrowest first within each architecture.
inline constexpr Isa kAllIsas[] = {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon};
std::string isa_name(Isa isa);
/// Whether this build has the kernels written for `isa` and this CPU can run them (AVX2 kernels
/// also need FMA; a CACHEBOOK_PORTABLE build has only the scalar ones; a build for one
/// architecture has none of the other's).
bool isa_supported(Isa isa);
/// Why `isa` cannot run here ("this CPU has no AVX2 + FMA", "this build has no AVX2 kernels ..."),
/// or empty when it can.
std::string isa_unavailable_reason(Isa isa);
/// The widest instruction set this CPU supports, among those the kernels are written for.
Isa best_isa();
/// The vector isa of steps 4 and 5 on this CPU: Avx2 (also on an AVX-512 CPU), Neon, or Scalar
/// where neither runs.
Isa step4_isa();

// ---- The steps -------------------------------------------------------------------------

/// Step 1: the definition, i-j-k; the inner loop walks down a column of B.
void matmul_naive(const float* a, const float* b, float* c, Shape s, RowRange rows);
/// The B-transpose trick: naive order on a transposed copy bt (n x k) of B, so both inner walks are rows.
void matmul_naive_bt(const float* a, const float* bt, float* c, Shape s, RowRange rows);
/// bt (n x k) = transpose of b (k x n).
void transpose(const float* b, float* bt, std::size_t k, std::size_t n);
/// Step 2: i-k-j; the inner loop walks along rows of B and C.
void matmul_ikj(const float* a, const float* b, float* c, Shape s, RowRange rows);
/// Step 3: tiles of tile x tile; tile loops ii, kk, jj, then i, k, j inside a tile.
void matmul_tiled(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile);
/// Step 4: step 3 with the inner j loop in vector FMA instructions (8 floats with AVX2, 4 with
/// NEON), remainder in scalar code. `isa` Scalar runs step 3 (the fallback); Avx2 and Avx512
/// both run the AVX2 kernel; Neon the NEON one.
void matmul_tiled_simd(const float* a, const float* b, float* c, Shape s, RowRange rows, std::size_t tile, Isa isa);
/// Runs body(t) for t in [0, threads): t = 0 on the calling thread, the others on threads of their own.
void run_threads(int threads, const std::function<void(int)>& body);
/// Step 5: step 4 with the rows of C split across `threads` threads.
void matmul_threaded(const float* a, const float* b, float* c, Shape s, std::size_t tile, Isa isa, int threads);

// ---- Step 6: the BLIS structure --------------------------------------------------------

/// A register-blocked micro-kernel: computes an mr x nr block of C from a packed
/// mr x kc sliver of A and a packed kc x nr sliver of B.
struct MicroKernel {
    std::string name;  // e.g. "avx2 6x16", "neon 8x12"
    Isa isa = Isa::Scalar;
    std::size_t mr = 0, nr = 0;
    /// c[i * ldc + j] (+)= sum over p of a[p * mr + i] * b[p * nr + j]; overwrite unless `accumulate`.
    void (*fn)(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc, bool accumulate) = nullptr;
};
/// Every micro-kernel this build has for `isa` (the first is the default of that isa); none when
/// this CPU cannot run the isa.
std::vector<MicroKernel> micro_kernels(Isa isa);
/// The default micro-kernel of `isa`.
MicroKernel default_micro_kernel(Isa isa);
/// The same block without the prefetch of C (named "<name> no C prefetch"), where the build
/// has one (the default kernel of each isa); nullopt otherwise.
std::optional<MicroKernel> without_c_prefetch(const MicroKernel& kernel);

/// Cache blocks of the BLIS loops, and where they come from.
struct Blocking {
    std::size_t mc = 0, kc = 0, nc = 0;
};
/// The blocks derived from the cache sizes (bytes; 0 = unknown) for a micro-kernel of mr x nr:
/// kc: a kc x nr sliver of B fills 3/4 of L1; mc: an mc x kc block of A fills 3/4 of L2;
/// nc: a kc x nc panel of B fills half of L3, at most 4096 columns.
Blocking derive_blocking(std::size_t l1, std::size_t l2, std::size_t l3, std::size_t mr, std::size_t nr);
/// The same from the caches `machine` reports (an unknown level takes derive_blocking's common size).
Blocking machine_blocking(const MicroKernel& kernel, const cachebook::Machine& machine = cachebook::machine());
/// The blocks a short search tries around the rule's: KC of 1/2, 3/4, 1 and 5/4 of the rule's
/// times MC of 1/4, 1/2 and 1 of it (rounded to whole slivers), NC the rule's; always 12.
std::vector<Blocking> block_candidates(Blocking rule, std::size_t mr);

/// Packs rows [0, mc) x columns [0, kc) of A (leading dimension lda) into slivers of mr rows:
/// sliver r holds a[(r*mr + i) * lda + p] at out[r*mr*kc + p*mr + i], zero beyond mc.
void pack_a(const float* a, std::size_t lda, std::size_t mc, std::size_t kc, std::size_t mr, float* out);
/// Packs rows [0, kc) x columns [0, nc) of B (leading dimension ldb) into slivers of nr columns:
/// sliver s holds b[p * ldb + s*nr + j] at out[s*nr*kc + p*nr + j], zero beyond nc.
void pack_b(const float* b, std::size_t ldb, std::size_t kc, std::size_t nc, std::size_t nr, float* out);

/// The height of step 6's blocks of rows of C (loop 3) for m rows, the blocks' mc, a micro-kernel
/// of mr rows and `parts` threads: equal blocks, at most mc high, as many as a multiple of `parts`.
std::size_t block_rows(std::size_t m, std::size_t mc, std::size_t mr, int parts);
/// Step 6: packing, a macro-kernel over MC x KC x NC blocks, a register-blocked micro-kernel;
/// rows of C split across `threads` threads (each packs its own A blocks; B panels are packed
/// by all threads together and shared). The packing buffers are kept for the next call on the
/// same calling thread (a few MiB at N = 2048), and freed when that thread ends.
void matmul_blis(const float* a, const float* b, float* c, Shape s, const MicroKernel& kernel, Blocking blocks,
                 int threads);

// ---- Step 7: the library ---------------------------------------------------------------

/// Whether this build links a CBLAS (OpenBLAS).
bool blas_available();
/// The kernel OpenBLAS chose (openblas_get_corename), or "" without OpenBLAS.
std::string blas_corename();
/// cblas_sgemm on `threads` threads; throws std::logic_error when no BLAS was linked.
void matmul_blas(const float* a, const float* b, float* c, Shape s, int threads);
/// Whether BLIS could be loaded (dlopen) and called; if not, blis_lib_unavailable_reason() says why.
bool blis_lib_available();
/// "BLIS <version>, <the kernel set it chose for this CPU>", or "" when it is not available.
std::string blis_lib_name();
std::string blis_lib_unavailable_reason();
/// BLIS's sgemm on `threads` threads; throws std::logic_error when BLIS is not available.
void matmul_blis_lib(const float* a, const float* b, float* c, Shape s, int threads);

// ---- The machine -----------------------------------------------------------------------

/// Floats per vector register of the isa (1, 8, 16; NEON 4).
int simd_width(Isa isa);
/// Peak by the formula: cores x GHz x (2 FLOPs per FMA x width x FMA ports).
double formula_peak_gflops(int cores, double ghz, int width, int fma_ports);

/// FLOPs per byte of memory traffic, by a model of each step for matrices far larger than the
/// caches (the formulas are in matmul.cpp and the chapter).
double intensity_naive(std::size_t line_bytes);
double intensity_ikj();
double intensity_tiled(std::size_t tile);
double intensity_blis(Shape s, Blocking blocks);

// ---- Helpers ---------------------------------------------------------------------------

/// A float buffer aligned to 64 bytes (make_buffer), or mapped on pages of a chosen size
/// (make_page_buffer; `mapped` then holds the bytes to unmap).
struct AlignedFree {
    std::size_t mapped = 0;
    void operator()(float* p) const;
};
using Buffer = std::unique_ptr<float[], AlignedFree>;
Buffer make_buffer(std::size_t floats);
/// A float buffer of whole 2 MiB pages, mapped fresh and advised to `pages` before its first
/// touch (cachebook::advise_pages): on 2 MiB pages where the kernel grants them, on 4 KiB pages
/// otherwise. Where the system cannot map it so, a make_buffer.
Buffer make_page_buffer(std::size_t floats, cachebook::PageSize pages);
/// Fills with uniform values in [-1, 1) from a fixed starting state.
void fill_random(float* p, std::size_t count, std::uint32_t start);
/// Fills with small integers in [-2, 2]: every product and partial sum is exact in float
/// while k * 4 < 2^24, so every correct step gives exactly the reference.
void fill_small_integers(float* p, std::size_t count, std::uint32_t start);

/// Chapter 4's tile rule on floats: the largest power of two t with three t x t tiles in three quarters
/// of `l1_bytes` (3 t^2 x 4 <= 3/4 L1, cachebook::rule_tile), at least 8.
std::size_t tile_from_l1(std::size_t l1_bytes);

}  // namespace ch09
