// Chapter 1 exercises: the reference answers (not handed out).
#include "exercise.hpp"

namespace ch01_exercise {

std::vector<std::uint64_t> col_major_trace(std::size_t n, std::size_t elem) {
    std::vector<std::uint64_t> trace;
    trace.reserve(n * n);
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) trace.push_back((i * n + j) * elem);
    return trace;
}

std::uint64_t predict_column_walk_misses(std::size_t rows, std::size_t cols, std::size_t elem, std::size_t line_bytes,
                                         std::size_t cache_lines) {
    // A column touches one line per row. If those `rows` lines fit, the next
    // columns that share them hit: one miss per line of the array. If they do
    // not fit, LRU always evicts the line needed next: every access misses.
    // (One line per row per column needs a row of at least one line; the
    // exercise guarantees rows fill whole lines.)
    const std::uint64_t lines_in_array = static_cast<std::uint64_t>(rows) * cols * elem / line_bytes;
    if (cache_lines >= rows) return lines_in_array;
    return static_cast<std::uint64_t>(rows) * cols;
}

}  // namespace ch01_exercise
