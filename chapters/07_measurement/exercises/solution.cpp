// Chapter 7 exercises: the reference answers (not handed out).
#include <numeric>

#include "exercise.hpp"

namespace ch07_exercise {

double needed_speedup(double fraction, double target) {
    // 1 / target = (1 - f) + f / s, solved for s.
    const double left = 1.0 / target - (1.0 - fraction);
    if (left <= 0.0) return 0.0;
    return fraction / left;
}

std::uint64_t predict_column_misses(std::size_t n, std::size_t elem, std::size_t sets, std::size_t ways,
                                    std::size_t line_bytes) {
    // Consecutive rows are `stride` lines apart, so one column's n lines fall
    // into sets / gcd(stride, sets) different sets, evenly.
    const std::size_t stride = n * elem / line_bytes;
    const std::size_t sets_used = sets / std::gcd(stride, sets);
    const std::size_t per_set = (n + sets_used - 1) / sets_used;
    if (per_set <= ways) return static_cast<std::uint64_t>(n) * n * elem / line_bytes;  // one miss per line
    return static_cast<std::uint64_t>(n) * n;  // LRU cycles through too many lines: every access misses
}

}  // namespace ch07_exercise
