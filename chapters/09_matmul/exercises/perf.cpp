// The performance score of exercise 4 (tools/teaching/perf.py; the instructor's copy only, like
// held_back.cpp): C = A x B for n x n floats three ways: the reference, the chapter's tiled kernel
// (step 3, 64 x 64 tiles); the baseline, the chapter's naive loop (step 1); and the submission.
#include <cstring>
#include <string>
#include <vector>

#include "exercise.hpp"
#include "lab.hpp"
#include "matmul.hpp"
#include "perf_probe.hpp"

namespace {

std::size_t n = 0;
struct Matrices {
    std::vector<float> a, b, c;
};
Matrices versions[4];  // in the order of perf_probe::Which

Matrices& of(perf_probe::Which which) {
    return versions[static_cast<int>(which)];
}

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

void prepare(bool traced, Which which) {
    n = traced ? 32 : 256;  // three 4 KiB matrices through the model's 2 KiB cache; 768 KiB timed
    Matrices& m = of(which);
    m.a.assign(n * n, 0.0f);
    m.b.assign(n * n, 0.0f);
    m.c.assign(n * n, 0.0f);
    ch09::fill_random(m.a.data(), m.a.size(), 1);
    ch09::fill_random(m.b.data(), m.b.size(), 2);
}

void vary(Which which, std::uint32_t seed) {
    Matrices& m = of(which);
    ch09::fill_random(m.a.data(), m.a.size(), seed);
    ch09::fill_random(m.b.data(), m.b.size(), seed ^ 0x9e3779b9u);
}

void run(Which which) {
    const ch09::Shape s{n, n, n};
    Matrices& m = of(which);
    if (which == Which::Reference || which == Which::ReferenceAgain)
        ch09::matmul_tiled(m.a.data(), m.b.data(), m.c.data(), s, {0, n}, 64);
    if (which == Which::Baseline) ch09::matmul_naive(m.a.data(), m.b.data(), m.c.data(), s, {0, n});
    if (which == Which::Submission) ch09_exercise::multiply(m.a.data(), m.b.data(), m.c.data(), n);
}

std::string result(Which which) {  // the product, whole
    const std::vector<float>& c = of(which).c;
    return {reinterpret_cast<const char*>(c.data()), c.size() * sizeof(float)};
}

std::string result_problem(const std::string& submitted) {
    const Matrices& m = of(Which::Reference);  // on the inputs the submission was given
    if (submitted.size() != m.c.size() * sizeof(float)) return "multiply's product has the wrong size";
    std::vector<float> c(m.c.size());
    std::memcpy(c.data(), submitted.data(), submitted.size());
    const ch09::Shape s{n, n, n};
    const ch09::RowRange rows{0, n};
    const bool right = ch09::check_rows(c.data(), s, rows, ch09::reference_rows(m.a.data(), m.b.data(), s, rows),
                                        ch09::abs_product_rows(m.a.data(), m.b.data(), s, rows))
                           .matches;
    return right ? "" : "multiply's product of the timed run is off by more than rounding";
}

}  // namespace perf_probe
