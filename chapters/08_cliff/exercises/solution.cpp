// Chapter 8 exercises: reference answers.
#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "exercise.hpp"

namespace ch08_exercise {

std::vector<std::uint32_t> random_cycle(std::size_t n, std::uint64_t seed) {
    // Sattolo: like Fisher-Yates, but j < i, so no slot keeps its place and one cycle results.
    std::vector<std::uint32_t> next(n);
    for (std::size_t i = 0; i < n; ++i) next[i] = static_cast<std::uint32_t>(i);
    std::mt19937_64 rng(seed);
    for (std::size_t i = n; i-- > 1;) {
        std::uniform_int_distribution<std::size_t> pick(0, i - 1);
        std::swap(next[i], next[pick(rng)]);
    }
    return next;
}

std::optional<std::size_t> line_size(const std::vector<std::size_t>& strides, const std::vector<double>& probe_ns) {
    if (strides.size() != probe_ns.size() || probe_ns.size() < 2) return std::nullopt;
    const auto [lo_it, hi_it] = std::minmax_element(probe_ns.begin(), probe_ns.end());
    const double lo = *lo_it, hi = *hi_it;
    if (!(lo > 0) || hi < 1.5 * lo) return std::nullopt;
    const double cut = std::sqrt(lo * hi);
    if (probe_ns.front() <= cut) return std::nullopt;
    std::optional<std::size_t> line;
    for (std::size_t i = probe_ns.size(); i-- > 0;) {
        if (probe_ns[i] > cut) break;
        line = strides[i];
    }
    return line;
}

}  // namespace ch08_exercise
