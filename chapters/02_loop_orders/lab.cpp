#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "cachebook/cpu_time.hpp"
#include "cachebook/trace.hpp"

namespace ch02 {

std::optional<cachebook::CacheConfig> cache_geometry(const std::optional<cachebook::CacheInfo>& c) {
    if (!c || c->ways == 0 || c->line_bytes < 8) return std::nullopt;
    try {
        return cachebook::CacheConfig::from_capacity(c->size_bytes, c->ways, c->line_bytes);
    } catch (const std::invalid_argument&) {
        return std::nullopt;  // a size that is no whole number of sets of power-of-two count
    }
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

double per_access(const ColumnWalk& walk) {
    return static_cast<double>(walk.total) / static_cast<double>(walk.rows * walk.cols_walked);
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
