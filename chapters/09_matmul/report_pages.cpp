// Chapter 9's section on step 6 and the TLB, printed for main.cpp: the TLB entries the CPU
// reports, their reach with each page size, the pages of C one sliver of B walks, and the
// measured claim that C on 4 KiB pages slows step 6 down.
#include <fmt/format.h>

#include "cachebook/claim.hpp"
#include "cachebook/report.hpp"
#include "lab_pages.hpp"

namespace ch09 {
namespace {

using cachebook::Value;

constexpr std::size_t kSmallPage = 4096, kHugePage = std::size_t{2} << 20;

std::string entries_text(const std::optional<std::size_t>& small, const std::optional<std::size_t>& huge) {
    auto one = [](const std::optional<std::size_t>& e) { return e ? fmt::format("{}", *e) : std::string("-"); };
    return fmt::format("{} for 4 KiB pages, {} for 2 MiB", one(small), one(huge));
}

Value tlb_line(const TlbEntries& t) {
    if (!t.unknown_reason.empty()) return Value::unknown("pages.tlb", "unknown: " + t.unknown_reason);
    auto json = [](const std::optional<std::size_t>& e) { return e ? nlohmann::json(*e) : nlohmann::json(); };
    const nlohmann::json recorded = {{"l1_small", json(t.small[0])},
                                     {"l1_huge", json(t.huge[0])},
                                     {"l2_small", json(t.small[1])},
                                     {"l2_huge", json(t.huge[1])}};
    return Value::measured_as("pages.tlb", recorded,
                              fmt::format("level 1 {}; level 2 {} (cpuid leaf 0x18)",
                                          entries_text(t.small[0], t.huge[0]), entries_text(t.small[1], t.huge[1])));
}

// "256 KiB / 8 MiB": the reach of each level with pages of `page` bytes.
Value reach_cell(const std::string& key, const std::array<std::optional<std::size_t>, 2>& entries, std::size_t page) {
    if (!entries[0] && !entries[1]) return Value::unknown(key, "-");
    auto one = [&](const std::optional<std::size_t>& e) {
        return e ? cachebook::size_text(tlb_reach(*e, page)) : std::string("-");
    };
    const nlohmann::json recorded = {{"l1", entries[0] ? nlohmann::json(tlb_reach(*entries[0], page)) : nullptr},
                                     {"l2", entries[1] ? nlohmann::json(tlb_reach(*entries[1], page)) : nullptr}};
    return Value::measured_as(key, recorded, one(entries[0]) + " / " + one(entries[1]));
}

Value huge_bytes_cell(const std::string& key, const PagesRun& r, std::size_t huge_bytes) {
    if (r.c_bytes == 0) return Value::unknown(key, "-");
    return Value::measured_as(
        key, huge_bytes, fmt::format("{} of {}", cachebook::size_text(huge_bytes), cachebook::size_text(r.c_bytes)));
}

}  // namespace

void pages_section(cachebook::Report& report, const PagesRun& r, const TlbEntries& tlb) {
    report.section("Step 6 and the TLB: C on 4 KiB pages against 2 MiB pages (N = {}, one thread)",
                   Value::measured("pages.n", r.n));
    report.line("  data TLB entries: {}", tlb_line(tlb));
    report.line("  micro-kernel timed: {} (without a prefetch of C where it has such a twin)",
                Value::measured("pages.kernel", r.kernel));
    report.line("  loop 1 runs one sliver of B down MC = {} rows of C, each row {} further on",
                Value::measured("pages.mc", r.mc),
                Value::measured_as("pages.row_bytes", r.n * sizeof(float), cachebook::size_text(r.n * sizeof(float))));
    auto table = report.table({"", "C on 4 KiB pages", "C on 2 MiB pages"});
    table.row({Value::exact("", std::string("TLB reach, level 1 / level 2")),
               reach_cell("pages.reach_small", tlb.small, kSmallPage),
               reach_cell("pages.reach_huge", tlb.huge, kHugePage)});
    table.row({Value::exact("", std::string("pages of C one sliver of B walks")),
               Value::measured("pages.walked_small", r.walked_small), Value::measured("", r.walked_huge)});
    table.row({Value::exact("", std::string("of C on 2 MiB pages (the kernel's count)")),
               huge_bytes_cell("pages.huge_bytes_small", r, r.huge_bytes_small),
               huge_bytes_cell("pages.huge_bytes_huge", r, r.huge_bytes_huge)});
    table.print();
    cachebook::report_claim(report, "pages", "step 6 with C on 2 MiB pages / on 4 KiB pages", r.claim);
}

}  // namespace ch09
