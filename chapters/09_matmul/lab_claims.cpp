// Chapter 9's lab: the chapter's four measured claims, each decided by the book's rule
// (cachebook/claim.hpp): both sides timed interleaved, minima, a same-run control of each side
// against itself. The program prints the verdicts; the tests decide with the same functions.
#include <algorithm>
#include <utility>

#include "cachebook/core_share.hpp"
#include "kernels.hpp"
#include "lab.hpp"

namespace ch09 {
namespace {

// A claim this machine cannot time: inconclusive, with the reason.
cachebook::ClaimResult not_timed(double threshold, const std::string& why) {
    cachebook::ClaimResult r;
    r.threshold = threshold;
    r.verdict = cachebook::Verdict::inconclusive;
    r.reason = why;
    return r;
}

cachebook::ClaimRule rule_of(double threshold) {
    return cachebook::ClaimRule{threshold, kClaimRuns, kClaimMaxNoise};
}

RowRange first_rows(const Problem& p, std::size_t rows) {
    return {0, std::min(rows, p.shape.m)};
}

}  // namespace

cachebook::ClaimResult ikj_claim(Problem& p) {
    const RowRange rows = first_rows(p, 32);
    return cachebook::measure_claim([&] { matmul_naive(p.a.get(), p.b.get(), p.c.get(), p.shape, rows); },
                                    [&] { matmul_ikj(p.a.get(), p.b.get(), p.c.get(), p.shape, rows); },
                                    rule_of(kIkjThreshold));
}

cachebook::ClaimResult simd_claim(Problem& p, Isa isa) {
    if (isa == Isa::Scalar) return not_timed(kSimdThreshold, isa_unavailable_reason(Isa::Avx2));
    const RowRange rows = first_rows(p, 64);
    return cachebook::measure_claim(
        [&] { matmul_tiled(p.a.get(), p.b.get(), p.c.get(), p.shape, rows, kClaimTile); },
        [&] { matmul_tiled_simd(p.a.get(), p.b.get(), p.c.get(), p.shape, rows, kClaimTile, isa); },
        rule_of(kSimdThreshold));
}

cachebook::ClaimResult blis_claim(Problem& p, Isa isa, const MicroKernel& kernel, Blocking blocks) {
    if (isa == Isa::Scalar) return not_timed(kBlisThreshold, isa_unavailable_reason(Isa::Avx2));
    const RowRange all{0, p.shape.m};
    return cachebook::measure_claim(
        [&] { matmul_tiled_simd(p.a.get(), p.b.get(), p.c.get(), p.shape, all, kClaimTile, isa); },
        [&] { matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, blocks, 1); }, rule_of(kBlisThreshold));
}

cachebook::ClaimResult threads_claim(Problem& p, Isa isa, const MicroKernel& kernel, Blocking blocks, int threads,
                                     cachebook::Instruments instruments) {
    if (threads < 2) return not_timed(kThreadsThreshold, "this run uses one thread; the claim needs two");
    if (isa == Isa::Scalar) return not_timed(kThreadsThreshold, isa_unavailable_reason(Isa::Avx2));
    // Declared with two cpus: the kit gives no verdict on one usable cpu, or when the threads of the
    // calls did not each get a core of their own, as they note themselves while the hook lives (a
    // probe beside the runs cannot see two threads take turns on one core of a virtual machine).
    cachebook::CoreShares shares;
    const detail::NotingShares noting(shares);
    const cachebook::Experiment two_threads{
        "threads",
        "step 6 on 1 thread / on 2",
        [&] { matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, blocks, 1); },
        [&] { matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, kernel, blocks, 2); },
        {.runs = kClaimRuns, .quick_runs = kClaimRuns},
        {.threshold = kThreadsThreshold, .cpus = 2, .max_noise = kClaimMaxNoise}};
    return cachebook::run_experiment(two_threads, shares, false, std::move(instruments)).result;
}

Claims decide_claims(const Settings& o, Blocking blocks, cachebook::Progress& progress) {
    const std::size_t n = std::min<std::size_t>(o.n, kClaimN);
    Problem p({n, n, n});
    Claims c;
    c.n = n;
    progress.step("claims");
    c.ikj = ikj_claim(p);
    c.simd = simd_claim(p, o.isa);
    c.blis = blis_claim(p, o.isa, o.kernel, blocks);
    c.threads = threads_claim(p, o.isa, o.kernel, blocks, o.threads);
    return c;
}

}  // namespace ch09
