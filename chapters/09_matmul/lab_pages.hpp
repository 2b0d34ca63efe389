#pragma once
// Chapter 9's lab, step 6 and the TLB (lab_pages.cpp, printed by report_pages.cpp): the data TLB
// the CPU reports, the pages of C one sliver of B walks, and the claim on C's pages.

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "cachebook/claim.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"

namespace ch09 {

/// Data TLB entries for 4 KiB and for 2 MiB pages, level 1 and level 2 (the second level
/// usually serves both sizes), as the CPU reports them; nullopt where it does not say.
struct TlbEntries {
    std::array<std::optional<std::size_t>, 2> small, huge;
    std::string unknown_reason;  // why no entries are known ("" when some are)
};
/// From cpuid leaf 0x18 on x86-64; elsewhere, or where the leaf is empty, none and the reason.
TlbEntries data_tlb_entries();
/// Bytes the TLB addresses without a page walk: entries x page size.
std::size_t tlb_reach(std::size_t entries, std::size_t page_bytes);
/// Pages of C that loop 1 walks for one sliver of B (mc rows, n floats apart), at most: mc when
/// a row is at least a page, otherwise the pages the mc rows span.
std::size_t c_pages_walked(std::size_t mc, std::size_t n, std::size_t page_bytes);

/// Step 6 on one thread with C on 2 MiB pages against C on 4 KiB pages, both from the same A and B.
/// The claim: C on 2 MiB pages takes at least 0.9 times as long, so 4 KiB pages cost at most about
/// 10 % (measured: 0.93x to 1.01x, the walk down C's rows hidden behind kc steps of FMAs).
inline constexpr double kPagesThreshold = 0.9;  // C on 2 MiB pages over C on 4 KiB pages
inline constexpr std::size_t kPagesN = 2048;    // C of 16 MiB: 4096 small pages, 8 huge ones
/// The N of the claim on C's pages in this run: kPagesN, or --n when smaller; kClaimN with --quick.
std::size_t pages_n(const Settings& o);
struct PagesRun {
    std::size_t n = 0, mc = 0;                              // mc: block_rows on one thread
    std::string kernel;                                     // the micro-kernel timed
    std::size_t walked_small = 0, walked_huge = 0;          // c_pages_walked with mc, each page size
    std::size_t c_bytes = 0;                                // of C; 0 when not run
    std::size_t huge_bytes_small = 0, huge_bytes_huge = 0;  // of each C on 2 MiB pages, as the kernel reports
    std::string unavailable;                                // why C cannot be put on 2 MiB pages here ("" when it was)
    cachebook::ClaimResult claim;
};
/// The kernel the claim times: the twin of `kernel` without the prefetch of C where there is one,
/// since that prefetch starts each row's page walk early and hides much of what the claim measures.
MicroKernel pages_kernel(const MicroKernel& kernel);
/// Inconclusive, with the reason, where huge pages are not offered or not granted, or the
/// kernel's isa cannot run here.
PagesRun c_pages_claim(std::size_t n, const MicroKernel& kernel, Blocking blocks, int runs = kClaimRuns);
inline constexpr int kPagesRuns = 6;  // in the program: 14 calls of step 6 at N = 2048, about 2 s
/// Prints the section on C's pages (report_pages.cpp): the TLB, its reach, the pages walked, the claim.
void pages_section(cachebook::Report& report, const PagesRun& run, const TlbEntries& tlb);

}  // namespace ch09
