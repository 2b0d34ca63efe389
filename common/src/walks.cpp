#include "cachebook/walks.hpp"

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
