#include "loop_orders.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "cachebook/trace.hpp"

namespace ch02 {

// [snippet: per-element]
PerElement per_element(std::size_t line_bytes, std::size_t elem_bytes) {
    if (elem_bytes == 0 || line_bytes % elem_bytes != 0)
        throw std::invalid_argument("per_element: a line must hold whole elements");
    const std::size_t b = line_bytes / elem_bytes;
    return {line_bytes, elem_bytes, b, 1.0 / static_cast<double>(b), 1.0};
}
// [end: per-element]

// [snippet: matrix-read-cache]
CacheConfig matrix_read_cache() {
    return CacheConfig{8, 8, 64};
}
// [end: matrix-read-cache]

// [snippet: footprint]
ColumnFootprint column_footprint(const CacheConfig& cache,
                                 std::size_t rows,     // rows of the matrix
                                 std::size_t leading,  // elements from row to row
                                 std::size_t elem) {   // bytes per element
    std::set<std::uint64_t> lines, sets;
    for (std::size_t i = 0; i < rows; ++i) {
        const auto address = cachebook::row_major_address(0, i, 0, leading, elem);
        const std::uint64_t line = address / cache.line_bytes;
        lines.insert(line);
        // The set index: the line number modulo the number of sets.
        sets.insert(line % cache.sets);
    }
    return {lines.size(), sets.size(), sets.size() * cache.ways};
}
// [end: footprint]

// [snippet: matrix-read-row]
MatrixReadRow matrix_read_row(const CacheConfig& cache, std::size_t n) {
    MatrixReadRow r;
    r.n = n;
    r.matrix_bytes = static_cast<std::uint64_t>(n) * n * 8;
    r.fits = r.matrix_bytes <= cache.capacity_bytes();
    r.column = column_footprint(cache, n, n, 8);
    r.misses = cachebook::compare_orders(n, cache, 8);
    return r;
}
// [end: matrix-read-row]

// [snippet: l1]
CacheConfig l1_32kib() {
    return CacheConfig::from_capacity(32 * 1024, 8, 64);
}
// [end: l1]

// [snippet: column-walk]
ColumnWalk column_walk(const CacheConfig& config,
                       std::size_t rows,         // rows of the matrix
                       std::size_t cols_walked,  // columns walked, from column 0
                       std::size_t leading,      // elements from row to row
                       std::size_t elem) {       // bytes per element
    const auto footprint = column_footprint(config, rows, leading, elem);
    ColumnWalk w{rows, cols_walked, leading, elem, footprint, {}, 0};
    cachebook::Cache cache(config);
    std::uint64_t before = 0, seen = 0;
    const auto read = [&](std::uint64_t address) {
        cache.access(address);
        if (++seen % rows == 0) {  // a column is done
            w.misses_per_column.push_back(cache.total().misses - before);
            before = cache.total().misses;
        }
    };
    cachebook::for_each_column_walk(rows, cols_walked, leading, elem, read);
    w.total = cache.total().misses;
    return w;
}
// [end: column-walk]

// [snippet: trap]
std::vector<ColumnWalk> power_of_two_trap(const CacheConfig& cache,
                                          std::size_t n,              // n x n doubles
                                          std::size_t cols_walked) {  // from column 0
    // One line of doubles, at least one double when a line is shorter than that.
    const std::size_t line_of_doubles = std::max<std::size_t>(cache.line_bytes / 8, 1);
    std::vector<ColumnWalk> out;
    for (std::size_t leading : {n, n + 1, n + line_of_doubles})
        out.push_back(column_walk(cache, n, cols_walked, leading, 8));
    return out;
}
// [end: trap]

}  // namespace ch02
