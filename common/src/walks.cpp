#include "cachebook/walks.hpp"

#include "cachebook/trace.hpp"

namespace cachebook {

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
