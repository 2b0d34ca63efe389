#include "cachebook/walks.hpp"

#include "cachebook/trace.hpp"

namespace cachebook {

OrderMisses compare_orders(std::size_t n, const CacheConfig& config, std::size_t elem) {
    Cache row(config), column(config);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) row.access(row_major_address(0, i, j, n, elem));
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) column.access(row_major_address(0, i, j, n, elem));
    return {row.total().misses, column.total().misses};
}

}  // namespace cachebook
