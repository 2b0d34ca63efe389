#include "cachebook/walks.hpp"

#include <fmt/format.h>

#include <set>

#include "cachebook/trace.hpp"

namespace cachebook {

// [snippet: sums]
// GCC's -O3 may interchange these loops, which would erase the difference we measure (clang
// does not interchange loops, and has no such attribute).
#if defined(__clang__)
#define NO_LOOP_INTERCHANGE
#else
#define NO_LOOP_INTERCHANGE __attribute__((optimize("no-loop-interchange")))
#endif
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

// [snippet: strided columns]
NO_LOOP_INTERCHANGE long long sum_columns(const int* a, std::size_t rows, std::size_t cols, std::size_t leading) {
    long long s = 0;
    for (std::size_t j = 0; j < cols; ++j)
        for (std::size_t i = 0; i < rows; ++i) s += a[i * leading + j];  // next element: `leading` ints on
    return s;
}
// [end: strided columns]

BlockSets block_sets(const CacheConfig& cache, std::uint64_t first_byte, std::size_t rows, std::size_t row_bytes,
                     std::size_t stride_bytes) {
    std::set<std::uint64_t> lines;
    std::set<std::size_t> sets;
    for (std::size_t i = 0; i < rows; ++i) {
        const std::uint64_t start = first_byte + i * stride_bytes;
        for (std::uint64_t line = start / cache.line_bytes; line <= (start + row_bytes - 1) / cache.line_bytes;
             ++line) {
            lines.insert(line);
            sets.insert(static_cast<std::size_t>(line % cache.sets));
        }
    }
    return {lines.size(), {sets.begin(), sets.end()}, sets.size() * cache.ways};
}

std::string set_list(const std::vector<std::size_t>& sets) {
    if (sets.size() > 8 && sets[1] - sets[0] > 1) {  // many scattered sets: the first two and the last
        return fmt::format("{}, {}, ..., {}", sets[0], sets[1], sets.back());
    }
    std::string text;
    for (std::size_t k = 0; k < sets.size();) {
        std::size_t end = k;  // the run sets[k], sets[k] + 1, ... ends at sets[end]
        while (end + 1 < sets.size() && sets[end + 1] == sets[end] + 1) ++end;
        text += fmt::format("{}{}", text.empty() ? "" : ", ",
                            end == k ? fmt::format("{}", sets[k]) : fmt::format("{}-{}", sets[k], sets[end]));
        k = end + 1;
    }
    return text;
}

OrderMisses compare_orders(std::size_t n, const CacheConfig& config, std::size_t elem) {
    // Both walks read the same addresses; only the order differs.
    const auto at = [&](std::size_t i, std::size_t j) {  // the address of a[i][j]
        return row_major_address(0, i, j, n, elem);
    };
    Cache row(config), column(config);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) row.access(at(i, j));
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) column.access(at(i, j));
    return {row.total().misses, column.total().misses};
}

}  // namespace cachebook
