// The performance score of exercise 4 (tools/teaching/perf.py; the instructor's copy only, like
// held_back.cpp): C = A x B for n x n floats three ways: the reference, the chapter's tiled kernel
// (step 3, 64 x 64 tiles); the baseline, the chapter's naive loop (step 1); and the submission.
#include <vector>

#include "exercise.hpp"
#include "lab.hpp"
#include "matmul.hpp"
#include "perf_probe.hpp"

namespace {

std::size_t n = 0;
std::vector<float> a, b, c;

}  // namespace

namespace perf_probe {

Spec spec() {
    return {"exercise 4: C = A x B, n x n floats, by multiply", {3, 4, 6}};
}

std::string check() {
    for (std::size_t size : {1u, 17u, 64u, 200u}) {
        std::vector<float> x(size * size), y(size * size), z(size * size, -1.0f);
        ch09::fill_random(x.data(), x.size(), 5);
        ch09::fill_random(y.data(), y.size(), 6);
        ch09_exercise::multiply(x.data(), y.data(), z.data(), size);
        const ch09::Shape s{size, size, size};
        const ch09::RowRange rows{0, size};
        if (!ch09::check_rows(z.data(), s, rows, ch09::reference_rows(x.data(), y.data(), s, rows),
                              ch09::abs_product_rows(x.data(), y.data(), s, rows))
                 .matches)
            return "multiply's product of " + std::to_string(size) + " x " + std::to_string(size) +
                   " is off by more than rounding";
    }
    return "";
}

void prepare(bool traced) {
    n = traced ? 32 : 256;  // three 4 KiB matrices through the model's 2 KiB cache; 768 KiB timed
    a.assign(n * n, 0.0f);
    b.assign(n * n, 0.0f);
    c.assign(n * n, 0.0f);
    ch09::fill_random(a.data(), a.size(), 1);
    ch09::fill_random(b.data(), b.size(), 2);
}

void run(Which which) {
    const ch09::Shape s{n, n, n};
    if (which == Which::Reference || which == Which::ReferenceAgain)
        ch09::matmul_tiled(a.data(), b.data(), c.data(), s, {0, n}, 64);
    if (which == Which::Baseline) ch09::matmul_naive(a.data(), b.data(), c.data(), s, {0, n});
    if (which == Which::Submission) ch09_exercise::multiply(a.data(), b.data(), c.data(), n);
}

}  // namespace perf_probe
