// Chapter 9's lab: step 6 with C on 4 KiB pages against C on 2 MiB pages, decided by the book's
// rule (cachebook/claim.hpp), and the TLB entries the CPU reports (cpuid leaf 0x18 on x86-64).
#include <fmt/format.h>

#include <algorithm>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "cachebook/chase.hpp"
#include "lab_pages.hpp"

namespace ch09 {
namespace {

constexpr std::size_t kSmallPage = 4096, kHugePage = std::size_t{2} << 20;

#if defined(__x86_64__)
// One entry of cpuid leaf 0x18 (Intel's deterministic address translation parameters): a TLB
// for data or for everything (type 1, 3 or 4) adds its entries, ways x sets, to its level.
void add_tlb_entry(unsigned subleaf, TlbEntries& out) {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    __cpuid_count(0x18, subleaf, eax, ebx, ecx, edx);
    const unsigned type = edx & 0x1f, level = (edx >> 5) & 0x7;
    if (type != 1 && type != 3 && type != 4) return;  // 2 is instructions only, 5 stores only
    if (level < 1 || level > 2) return;
    const std::size_t entries = std::size_t{ebx >> 16} * ecx;
    auto& small = out.small[level - 1];
    auto& huge = out.huge[level - 1];
    if ((ebx & 0x1) != 0) small = small.value_or(0) + entries;
    if ((ebx & 0x2) != 0) huge = huge.value_or(0) + entries;
}
#endif

}  // namespace

TlbEntries data_tlb_entries() {
    TlbEntries out;
#if defined(__x86_64__)
    if (__get_cpuid_max(0, nullptr) < 0x18) {
        out.unknown_reason = "this CPU has no cpuid leaf 0x18, where Intel CPUs list their TLBs";
        return out;
    }
    unsigned last = 0, ebx = 0, ecx = 0, edx = 0;
    __cpuid_count(0x18, 0, last, ebx, ecx, edx);
    for (unsigned sub = 0; sub <= std::min(last, 64u); ++sub) add_tlb_entry(sub, out);
    if (!out.small[0] && !out.small[1])
        out.unknown_reason = "the CPU reports no data TLB in cpuid leaf 0x18 (empty, as many hypervisors leave it)";
#else
    out.unknown_reason = "the book reads TLB entries only from x86-64's cpuid";
#endif
    return out;
}

std::size_t tlb_reach(std::size_t entries, std::size_t page_bytes) {
    return entries * page_bytes;  // the bytes the TLB can address without a page walk
}

std::size_t c_pages_walked(std::size_t mc, std::size_t n, std::size_t page_bytes) {
    // Loop 1 runs one sliver of B down mc rows of C: every row is n floats further on. Rows
    // closer together than a page share it; rows a page or more apart each take a page.
    const std::size_t row_bytes = n * sizeof(float);
    if (row_bytes >= page_bytes) return mc;
    return (mc * row_bytes + page_bytes - 1) / page_bytes + 1;  // a run of rows, and its ragged end
}

std::size_t pages_n(const Settings& o) {
    return o.quick ? kClaimN : std::min(o.n, kPagesN);  // --quick: an eighth of the FLOPs per call
}

MicroKernel pages_kernel(const MicroKernel& kernel) {
    return without_c_prefetch(kernel).value_or(kernel);
}

PagesRun c_pages_claim(std::size_t n, const MicroKernel& kernel, Blocking blocks, int runs) {
    PagesRun r;
    r.n = n;
    r.kernel = kernel.name;
    r.mc = std::min(n, block_rows(n, blocks.mc, kernel.mr, 1));  // the rows loop 1 walks, on one thread
    r.walked_small = c_pages_walked(r.mc, n, kSmallPage);
    r.walked_huge = c_pages_walked(r.mc, n, kHugePage);
    r.unavailable = cachebook::huge_pages_unavailable_reason();
    if (r.unavailable.empty() && !isa_supported(kernel.isa)) r.unavailable = isa_unavailable_reason(kernel.isa);
    r.claim.threshold = kPagesThreshold;
    if (!r.unavailable.empty()) {
        r.claim.reason = r.unavailable;
        return r;
    }
    Problem p({n, n, n}, cachebook::PageSize::Huge);
    Buffer c_small = make_page_buffer(n * n, cachebook::PageSize::Small);
    std::fill(c_small.get(), c_small.get() + n * n, 0.0f);  // first touch: the pages are chosen now
    r.c_bytes = n * n * sizeof(float);
    r.huge_bytes_small = cachebook::huge_page_bytes(c_small.get(), r.c_bytes);
    r.huge_bytes_huge = cachebook::huge_page_bytes(p.c.get(), r.c_bytes);
    if (r.huge_bytes_huge == 0) {
        r.unavailable = "the kernel gave C no 2 MiB pages when asked (none free, or the advice refused)";
        r.claim.reason = r.unavailable;
        return r;
    }
    auto step6 = [&](float* c) { matmul_blis(p.a.get(), p.b.get(), c, p.shape, kernel, blocks, 1); };
    r.claim = cachebook::measure_claim([&] { step6(p.c.get()); }, [&] { step6(c_small.get()); },
                                       cachebook::ClaimRule{kPagesThreshold, runs, kClaimMaxNoise});
    return r;
}

}  // namespace ch09
