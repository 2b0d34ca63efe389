#include "cachebook/trace.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace cachebook {

std::vector<Cell> visit_order(std::size_t n, std::size_t tile) {
    std::vector<Cell> order;
    order.reserve(n * n);
    const std::size_t step = tile == 0 ? n : tile;
    for (std::size_t ii = 0; ii < n; ii += step)
        for (std::size_t jj = 0; jj < n; jj += step)
            for (std::size_t i = ii; i < std::min(ii + step, n); ++i)
                for (std::size_t j = jj; j < std::min(jj + step, n); ++j) order.emplace_back(i, j);
    return order;
}

namespace {

// The n x n addresses of a walk: its step (outer, inner) reads address_of(outer, inner).
template <class AddressOf>
std::vector<std::uint64_t> square_walk(std::size_t n, AddressOf address_of) {
    std::vector<std::uint64_t> t;
    t.reserve(n * n);
    for (std::size_t outer = 0; outer < n; ++outer)
        for (std::size_t inner = 0; inner < n; ++inner) t.push_back(address_of(outer, inner));
    return t;
}

}  // namespace

std::vector<std::uint64_t> row_major_trace(std::size_t n, std::size_t elem, std::uint64_t base) {
    return square_walk(n, [=](std::size_t i, std::size_t j) { return row_major_address(base, i, j, n, elem); });
}

std::vector<std::uint64_t> col_major_trace(std::size_t n, std::size_t elem, std::uint64_t base) {
    return square_walk(n, [=](std::size_t j, std::size_t i) { return row_major_address(base, i, j, n, elem); });
}

std::string_view order_name(LoopOrder o) {
    switch (o) {
        case LoopOrder::ijk:
            return "ijk";
        case LoopOrder::ikj:
            return "ikj";
        case LoopOrder::jik:
            return "jik";
        case LoopOrder::jki:
            return "jki";
        case LoopOrder::kij:
            return "kij";
        case LoopOrder::kji:
            return "kji";
    }
    return "?";
}

LoopOrder parse_order(std::string_view name) {
    for (LoopOrder o : kAllOrders)
        if (order_name(o) == name) return o;
    throw std::invalid_argument(fmt::format("unknown loop order '{}' (ijk, ikj, jik, jki, kij, kji)", name));
}

MatmulLayout MatmulLayout::packed(std::size_t n, std::size_t elem, std::size_t align) {
    const std::uint64_t bytes = static_cast<std::uint64_t>(n) * n * elem;
    const std::uint64_t rounded = (bytes + align - 1) / align * align;
    return MatmulLayout{0, rounded, 2 * rounded};
}

Counts simulate(const CacheConfig& config, const std::vector<std::uint64_t>& addresses) {
    Cache cache(config);
    for (std::uint64_t a : addresses) cache.access(a);
    return cache.total();
}

Cache abc_cache(const CacheConfig& config) {
    Cache cache(config);
    cache.add_stream("A");
    cache.add_stream("B");
    cache.add_stream("C");
    return cache;
}

}  // namespace cachebook
