// Step 7: cblas_sgemm, when the build found OpenBLAS (CACHEBOOK_HAVE_OPENBLAS).
#include <stdexcept>

#include "matmul.hpp"

#if defined(CACHEBOOK_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace ch09 {

#if defined(CACHEBOOK_HAVE_OPENBLAS)
bool blas_available() { return true; }

std::string blas_corename() {
    const char* name = openblas_get_corename();
    return name ? name : "";
}

// [snippet: blas]
void matmul_blas(const float* a, const float* b, float* c, Shape s, int threads) {
    openblas_set_num_threads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k), 1.0f, a, int(s.k), b,
                int(s.n), 0.0f, c, int(s.n));
}
// [end: blas]
#else
bool blas_available() { return false; }
std::string blas_corename() { return ""; }
void matmul_blas(const float*, const float*, float*, Shape, int) {
    throw std::logic_error("this build has no BLAS (OpenBLAS was not found when it was configured)");
}
#endif

}  // namespace ch09
