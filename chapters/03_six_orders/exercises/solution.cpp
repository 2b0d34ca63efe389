// Chapter 3 exercises: the reference answers (not handed out).
#include <algorithm>

#include "exercise.hpp"

namespace ch03_exercise {

Misses analytic_misses(const std::string& order, std::size_t per_line) {
    const char inner = order.at(2);
    auto rule = [&](char left, char right) {
        if (inner == right) return 1.0 / static_cast<double>(per_line);
        return inner == left ? 1.0 : 0.0;
    };
    return {rule('i', 'k'), rule('k', 'j'), rule('i', 'j')};
}

void matmul_kij(std::size_t n, const double* a, const double* b, double* c) {
    std::fill(c, c + n * n, 0.0);
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t i = 0; i < n; ++i) {
            const double r = a[i * n + k];
            for (std::size_t j = 0; j < n; ++j) c[i * n + j] += r * b[k * n + j];
        }
}

}  // namespace ch03_exercise
