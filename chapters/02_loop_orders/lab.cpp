#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "cachebook/cpu_time.hpp"
#include "cachebook/trace.hpp"

namespace ch02 {

std::optional<cachebook::CacheConfig> cache_geometry(const std::optional<cachebook::CacheInfo>& c) {
    if (c && c->line_bytes < 8) return std::nullopt;  // the chapter's walks need a line of a double at least
    return cachebook::cache_config(c);
}

std::vector<MatrixReadRow> matrix_read_table(const cachebook::CacheConfig& cache,
                                             const std::vector<std::size_t>& sizes) {
    std::vector<MatrixReadRow> rows;
    for (std::size_t n : sizes) rows.push_back(matrix_read_row(cache, n));
    return rows;
}

std::vector<NotesMatrixRead> notes_matrix_reads() {
    return {{16, 32, 32}, {32, 128, 1024}, {48, 288, 2304}, {73, 667, 4573}};
}

std::vector<GeometryTrial> geometry_trials() {
    const auto notes = notes_matrix_reads();
    std::vector<GeometryTrial> trials;
    for (std::size_t ways = 1; ways <= 64; ways *= 2) {
        GeometryTrial t{cachebook::CacheConfig::from_capacity(4096, ways, 64), {}, true};
        for (const auto& row : notes) {
            t.misses.push_back(cachebook::compare_orders(row.n, t.cache, 8));
            t.matches_notes = t.matches_notes && t.misses.back().row == row.row && t.misses.back().column == row.column;
        }
        trials.push_back(t);
    }
    return trials;
}

std::vector<std::uint64_t> matrix_walk(std::size_t n, bool by_columns) {
    std::vector<std::uint64_t> addresses;
    addresses.reserve(n * n);
    for (std::size_t outer = 0; outer < n; ++outer)
        for (std::size_t inner = 0; inner < n; ++inner)
            addresses.push_back(by_columns ? cachebook::row_major_address(0, inner, outer, n, 8)
                                           : cachebook::row_major_address(0, outer, inner, n, 8));
    return addresses;
}

std::vector<WalkKinds> walk_kinds(const cachebook::CacheConfig& cache) {
    std::vector<WalkKinds> walks;
    for (const auto& notes : notes_matrix_reads()) {
        for (const bool by_columns : {false, true}) {
            const std::vector<std::uint64_t> addresses = matrix_walk(notes.n, by_columns);
            WalkKinds w{notes.n, by_columns, cachebook::classify_misses(cache, addresses), 0,
                        cachebook::optimal_misses(cache, addresses)};
            w.fully_associative =
                static_cast<std::uint64_t>(static_cast<std::int64_t>(w.kinds.compulsory) + w.kinds.capacity);
            walks.push_back(w);
        }
    }
    return walks;
}

std::size_t physical_sets_bound(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t leading,
                                std::size_t elem, std::size_t page) {
    std::set<std::uint64_t> lines, offsets;  // the column's lines, and their line numbers inside a page
    for (std::size_t i = 0; i < rows; ++i) {
        const std::uint64_t line = i * leading * elem / cache.line_bytes;
        lines.insert(line);
        offsets.insert(line % (page / cache.line_bytes));
    }
    const std::size_t per_offset = std::max<std::size_t>(1, cache.sets * cache.line_bytes / page);
    return std::min(lines.size(), std::min(cache.sets, offsets.size() * per_offset));
}

std::vector<int> sum_input(std::size_t n) {
    std::vector<int> a(n * n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) a[i * n + j] = static_cast<int>((i + j) % 10);
    return a;
}

SumTiming time_sums(std::size_t n, int runs) {
    const std::vector<int> a = sum_input(n);  // written before timing: no page faults inside
    SumTiming t;
    t.n = n;
    t.row_sum = sum_by_rows(a.data(), n);
    t.column_sum = sum_by_columns(a.data(), n);
    // Alternate the two so that a noisy moment hurts both alike. The row sum
    // is short enough for one preemption to spoil it, so it runs four times a round.
    for (int r = 0; r < runs; ++r) {
        for (int k = 0; k < 4; ++k) {
            const double start = cachebook::thread_cpu_seconds();
            const long long s = sum_by_rows(a.data(), n);
            t.row.runs.push_back(cachebook::thread_cpu_seconds() - start);
            cachebook::do_not_optimize(s);
        }
        const double start = cachebook::thread_cpu_seconds();
        const long long s = sum_by_columns(a.data(), n);
        t.column.runs.push_back(cachebook::thread_cpu_seconds() - start);
        cachebook::do_not_optimize(s);
    }
    return t;
}

SumPrice price_sums(std::size_t n) {
    SumPrice p;
    p.profile = cachebook::shared_profile();
    p.machine = cachebook::priced_machine(p.profile);
    if (!p.machine.usable()) return p;
    p.row = cachebook::predict_walk(p.machine,
                                    {cachebook::row_walk(n), sizeof(int), false, true, {}, 1, cachebook::kRowSumCore});
    p.column = cachebook::predict_walk(
        p.machine, {cachebook::column_walk(n), sizeof(int), false, false, {}, 1, cachebook::kColumnSumCore});
    return p;
}

namespace {

// What the model leaves out that these sums meet.
constexpr const char* kSumsLeftOut =
    "the TLB (a column's every element lies on another page), the prefetchers, and other programs sharing L3";

}  // namespace

std::vector<cachebook::PricedClaim> sum_priced(const SumPrice& price, const SumTiming& timing) {
    const auto elements = static_cast<double>(timing.n * timing.n);
    std::vector<cachebook::PricedClaim> claims = {
        {"row_ns", "ns an element, row by row", {}, {}, "", timing.row.min() / elements * 1e9, kSumsLeftOut, ""},
        {"column_ns",
         "ns an element, column by column",
         {},
         {},
         "",
         timing.column.min() / elements * 1e9,
         kSumsLeftOut,
         ""},
        {"column_over_row", "column / row", {}, {}, "", timing.ratio(), kSumsLeftOut, ""}};
    if (!price.row || !price.column) {
        for (auto& c : claims) c.why_not = price.machine.why_not;
        return claims;
    }
    const auto per_element = [elements](const cachebook::Prediction& p) { return p.ns / elements; };
    claims[0].predicted = per_element(price.row->overlapped);
    claims[0].predicted_added = per_element(price.row->added);
    claims[0].bottleneck = price.row->overlapped.bottleneck;
    claims[1].predicted = per_element(price.column->overlapped);
    claims[1].predicted_added = per_element(price.column->added);
    claims[1].bottleneck = price.column->overlapped.bottleneck;
    claims[2].predicted = price.column->overlapped.ns / price.row->overlapped.ns;
    claims[2].predicted_added = price.column->added.ns / price.row->added.ns;
    claims[2].bottleneck = "column " + claims[1].bottleneck + ", row " + claims[0].bottleneck;
    return claims;
}

cachebook::ClaimResult sum_claim(const SumTiming& timing, const std::optional<cachebook::CacheConfig>& l2,
                                 double max_noise) {
    const std::size_t rounds = timing.column.runs.size();
    cachebook::ClaimResult no_verdict{timing.ratio(), 0, kSumThreshold, cachebook::Verdict::inconclusive, ""};
    if (l2) {
        const auto column = column_footprint(*l2, timing.n, timing.n, sizeof(int));
        if (column.capacity >= column.lines) {
            no_verdict.reason =
                fmt::format("this machine's L2 keeps all {} lines of a column: no effect to show", column.lines);
            return no_verdict;
        }
    }
    if (rounds < 2 || timing.row.runs.size() != 4 * rounds) {
        no_verdict.reason = "one round of runs gives no control: run at least two";
        return no_verdict;
    }
    std::vector<double> row;  // the fastest of each round's four row runs
    for (std::size_t r = 0; r < rounds; ++r)
        row.push_back(*std::min_element(timing.row.runs.begin() + static_cast<std::ptrdiff_t>(4 * r),
                                        timing.row.runs.begin() + static_cast<std::ptrdiff_t>(4 * r + 4)));
    return cachebook::decide(timing.column.runs, row, {kSumThreshold, static_cast<int>(rounds), max_noise});
}

double ConflictRun::power_min() const {
    return *std::min_element(power_runs.begin(), power_runs.end());
}
double ConflictRun::padded_min() const {
    return *std::min_element(padded_runs.begin(), padded_runs.end());
}

namespace {
// kConflictRows rows of kConflictCols ints, `stride` bytes apart, in a page-aligned buffer.
struct StridedArray {
    std::vector<int> storage;
    const int* first = nullptr;
    std::size_t leading = 0;  // ints from row to row
    explicit StridedArray(std::size_t stride) : leading(stride / sizeof(int)) {
        const std::size_t page_ints = kConflictStride / sizeof(int);
        storage.assign(kConflictRows * leading + page_ints, 0);
        const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
        const std::size_t skip = (kConflictStride - address % kConflictStride) % kConflictStride / sizeof(int);
        for (std::size_t i = 0; i < kConflictRows; ++i)
            for (std::size_t j = 0; j < kConflictCols; ++j)
                storage[skip + i * leading + j] = static_cast<int>((i + j) % 10);
        first = storage.data() + skip;
    }
    [[nodiscard]] long long sum(int passes) const {
        long long s = 0;
        for (int p = 0; p < passes; ++p) s += cachebook::sum_columns(first, kConflictRows, kConflictCols, leading);
        return s;
    }
};

double timed_sum(const StridedArray& a, int passes) {
    const double start = cachebook::thread_cpu_seconds();
    cachebook::do_not_optimize(a.sum(passes));
    return cachebook::thread_cpu_seconds() - start;
}
}  // namespace

ConflictRun time_conflict(int runs, int passes) {
    const StridedArray power(kConflictStride), padded(kConflictStride + kConflictPad);
    ConflictRun r;
    r.power_sum = power.sum(1);  // also the untimed first pass of each
    r.padded_sum = padded.sum(1);
    for (int k = 0; k < runs; ++k) {
        r.power_runs.push_back(timed_sum(power, passes));
        r.padded_runs.push_back(timed_sum(padded, passes));
    }
    return r;
}

namespace {

// The conflict's column sum as the model sees it: the first kConflictCols columns, each down its rows.
cachebook::Walk conflict_walk(std::size_t stride) {
    return [stride](cachebook::Hierarchy& h) {
        for (std::size_t j = 0; j < kConflictCols; ++j)
            for (std::size_t i = 0; i < kConflictRows; ++i) h.access(i * stride + j * sizeof(int));
    };
}

}  // namespace

ConflictPrice price_conflict() {
    ConflictPrice p;
    p.machine = cachebook::priced_machine(cachebook::shared_profile());
    if (!p.machine.usable()) return p;
    for (auto [stride, out] :
         {std::pair{kConflictStride, &p.power}, std::pair{kConflictStride + kConflictPad, &p.padded}})
        *out = cachebook::predict_walk(
            p.machine, {conflict_walk(stride), sizeof(int), false, false, {}, 1, cachebook::kColumnSumCore});
    return p;
}

std::vector<cachebook::PricedClaim> conflict_priced(const ConflictPrice& price, const ConflictRun& run, int passes) {
    const double loads = static_cast<double>(kConflictRows * kConflictCols), timed = loads * passes;
    return cachebook::padded_claims(
        {"conflict", "the conflict's column sum", "a page apart", "a page and a line apart", "a load", price.power,
         price.padded, loads, loads, run.power_min() * 1e9 / timed, run.padded_min() * 1e9 / timed,
         "the prefetchers, and the loads of other columns a line brings", price.machine.why_not});
}

cachebook::ClaimResult conflict_claim(const ConflictRun& run, const std::optional<cachebook::CacheConfig>& l1,
                                      double max_noise) {
    cachebook::ClaimResult no_verdict{0, 0, kConflictThreshold, cachebook::Verdict::inconclusive, ""};
    if (!l1) {
        no_verdict.reason = "this machine reports no L1d geometry: nothing says whether a column conflicts";
        return no_verdict;
    }
    const auto column = column_footprint(*l1, kConflictRows, kConflictStride / sizeof(int), sizeof(int));
    if (column.capacity >= column.lines) {
        no_verdict.reason = fmt::format(
            "this machine's L1d keeps all {} lines of a column at the power-of-two stride: "
            "no effect to show",
            column.lines);
        return no_verdict;
    }
    if (run.power_runs.size() < 2) {
        no_verdict.reason = "one run gives no control: run at least two";
        return no_verdict;
    }
    return cachebook::decide(run.power_runs, run.padded_runs,
                             {kConflictThreshold, static_cast<int>(run.power_runs.size()), max_noise});
}

nlohmann::json to_json(const ColumnWalk& w) {
    return {{"rows", w.rows},
            {"cols_walked", w.cols_walked},
            {"leading", w.leading},
            {"row_bytes", w.leading * w.elem},
            {"column_lines", w.column.lines},
            {"column_sets", w.column.sets},
            {"column_capacity", w.column.capacity},
            {"misses_per_column", w.misses_per_column},
            {"total", w.total}};
}

std::string first_columns(const std::vector<std::uint64_t>& misses, std::size_t count) {
    std::string text;
    for (std::size_t j = 0; j < misses.size() && j < count; ++j) text += fmt::format("{}{}", j ? " " : "", misses[j]);
    return text;
}

nlohmann::json cache_json(const cachebook::CacheConfig& cache) {
    return {{"bytes", cache.capacity_bytes()},
            {"kib", cache.capacity_bytes() / 1024},
            {"sets", cache.sets},
            {"ways", cache.ways},
            {"line_bytes", cache.line_bytes},
            {"lines", cache.lines()}};
}

}  // namespace ch02
