#include "loop_orders.hpp"

#include <set>
#include <stdexcept>

#include "cachebook/trace.hpp"

namespace ch02 {

PerElement per_element(std::size_t line_bytes, std::size_t elem_bytes) {
    if (elem_bytes == 0 || line_bytes % elem_bytes != 0)
        throw std::invalid_argument("per_element: the line must hold a whole number of elements");
    const std::size_t b = line_bytes / elem_bytes;
    return {line_bytes, elem_bytes, b, 1.0 / static_cast<double>(b), 1.0};
}

// [snippet: footprint]
ColumnFootprint column_footprint(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t leading,
                                 std::size_t elem) {
    std::set<std::uint64_t> lines, sets;
    for (std::size_t i = 0; i < rows; ++i) {
        const std::uint64_t line = cachebook::row_major_address(0, i, 0, leading, elem) / cache.line_bytes;
        lines.insert(line);
        sets.insert(line % cache.sets);  // the set index: the line number modulo the number of sets
    }
    return {lines.size(), sets.size(), sets.size() * cache.ways};
}
// [end: footprint]

std::optional<cachebook::CacheConfig> cache_geometry(const std::optional<cachebook::CacheInfo>& c) {
    if (!c || c->ways == 0 || c->line_bytes < 8) return std::nullopt;
    try {
        return cachebook::CacheConfig::from_capacity(c->size_bytes, c->ways, c->line_bytes);
    } catch (const std::invalid_argument&) {
        return std::nullopt;  // a size that is no whole number of sets of power-of-two count
    }
}

cachebook::CacheConfig matrix_read_cache() {
    return cachebook::CacheConfig{8, 8, 64};
}

MatrixReadRow matrix_read_row(const cachebook::CacheConfig& cache, std::size_t n) {
    MatrixReadRow r;
    r.n = n;
    r.matrix_bytes = static_cast<std::uint64_t>(n) * n * 8;
    r.fits = r.matrix_bytes <= cache.capacity_bytes();
    r.column = column_footprint(cache, n, n, 8);
    r.misses = cachebook::compare_orders(n, cache, 8);
    return r;
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

cachebook::CacheConfig l1_32kib() {
    return cachebook::CacheConfig::from_capacity(32 * 1024, 8, 64);
}

// [snippet: column-walk]
ColumnWalk column_walk(const cachebook::CacheConfig& config, std::size_t rows, std::size_t cols_walked,
                       std::size_t leading, std::size_t elem) {
    ColumnWalk w{rows, cols_walked, leading, elem, column_footprint(config, rows, leading, elem), {}, 0};
    cachebook::Cache cache(config);
    std::uint64_t before = 0, seen = 0;
    cachebook::for_each_column_walk(rows, cols_walked, leading, elem, [&](std::uint64_t address) {
        cache.access(address);
        if (++seen % rows == 0) {  // a column is done
            w.misses_per_column.push_back(cache.total().misses - before);
            before = cache.total().misses;
        }
    });
    w.total = cache.total().misses;
    return w;
}
// [end: column-walk]

std::vector<ColumnWalk> power_of_two_trap(const cachebook::CacheConfig& cache, std::size_t n, std::size_t cols_walked) {
    const std::size_t line_of_doubles = cache.line_bytes / 8 == 0 ? 1 : cache.line_bytes / 8;
    std::vector<ColumnWalk> out;
    for (std::size_t leading : {n, n + 1, n + line_of_doubles})
        out.push_back(column_walk(cache, n, cols_walked, leading, 8));
    return out;
}

std::vector<int> sum_input(std::size_t n) {
    std::vector<int> a(n * n);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) a[i * n + j] = static_cast<int>((i + j) % 10);
    return a;
}

// GCC's -O3 may interchange these loops, which would erase the difference we measure (clang
// does not interchange loops, and has no such attribute).
#if defined(__clang__)
#define NO_LOOP_INTERCHANGE
#else
#define NO_LOOP_INTERCHANGE __attribute__((optimize("no-loop-interchange")))
#endif
// [snippet: sums]
NO_LOOP_INTERCHANGE long long sum_by_rows(const int* a, std::size_t n) {
    long long s = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) s += a[i * n + j];  // next element: 4 bytes on
    return s;
}

NO_LOOP_INTERCHANGE long long sum_by_columns(const int* a, std::size_t n) {
    long long s = 0;
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) s += a[i * n + j];  // next element: a whole row on
    return s;
}
// [end: sums]

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
            const auto start = cachebook::Clock::now();
            const long long s = sum_by_rows(a.data(), n);
            t.row.runs.push_back(cachebook::seconds_since(start));
            cachebook::do_not_optimize(s);
        }
        const auto start = cachebook::Clock::now();
        const long long s = sum_by_columns(a.data(), n);
        t.column.runs.push_back(cachebook::seconds_since(start));
        cachebook::do_not_optimize(s);
    }
    return t;
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

}  // namespace ch02
