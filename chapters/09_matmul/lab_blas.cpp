// Step 7: two production libraries. OpenBLAS is linked when the build found it
// (CACHEBOOK_HAVE_OPENBLAS); BLIS is loaded at run time with dlopen, where it is installed.
#include <dlfcn.h>

#include <cstdint>
#include <stdexcept>

#include "matmul.hpp"

#if defined(CACHEBOOK_HAVE_OPENBLAS)
#include <cblas.h>
#endif

namespace ch09 {

#if defined(CACHEBOOK_HAVE_OPENBLAS)
bool blas_available() {
    return true;
}

std::string blas_corename() {
    const char* name = openblas_get_corename();
    return name ? name : "";
}

// [snippet: blas]
void matmul_blas(const float* a, const float* b, float* c, Shape s, int threads) {
    openblas_set_num_threads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k), 1.0f, a, int(s.k), b, int(s.n),
                0.0f, c, int(s.n));
}
// [end: blas]
#else
bool blas_available() {
    return false;
}
std::string blas_corename() {
    return "";
}
void matmul_blas(const float*, const float*, float*, Shape, int) {
    throw std::logic_error("this build has no BLAS (OpenBLAS was not found when it was configured)");
}
#endif

// ---- BLIS, loaded at run time -----------------------------------------------------------
//
// Both libraries define cblas_sgemm, so they cannot both be linked into one program.
// BLIS is therefore opened with dlopen, and called through its own interface (bli_sgemm),
// whose names OpenBLAS does not share. Its integer type is checked before any call.
namespace {

using dim_t = std::int64_t;      // BLIS's dim_t and inc_t in a 64-bit build (checked below)
constexpr int kNoTranspose = 0;  // BLIS_NO_TRANSPOSE
using SgemmFn = void (*)(int, int, dim_t, dim_t, dim_t, const float*, const float*, dim_t, dim_t, const float*, dim_t,
                         dim_t, const float*, float*, dim_t, dim_t);

struct BlisLibrary {
    SgemmFn sgemm = nullptr;
    void (*set_threads)(dim_t) = nullptr;
    std::string name, why_not;
};

template <class F>
F symbol(void* handle, const char* name) {
    return reinterpret_cast<F>(dlsym(handle, name));
}

BlisLibrary open_blis() {
    BlisLibrary lib;
    void* handle = nullptr;
    for (const char* file : {"libblis.so.4", "libblis.so"})
        if ((handle = dlopen(file, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (handle == nullptr) {
        lib.why_not = "BLIS is not installed (Debian: libblis-dev)";
        return lib;
    }
    auto int_size = symbol<std::int64_t (*)()>(handle, "bli_info_get_int_type_size");
    auto version = symbol<const char* (*)()>(handle, "bli_info_get_version_str");
    auto arch_id = symbol<int (*)()>(handle, "bli_arch_query_id");
    auto arch_name = symbol<const char* (*)(int)>(handle, "bli_arch_string");
    lib.sgemm = symbol<SgemmFn>(handle, "bli_sgemm");
    lib.set_threads = symbol<void (*)(dim_t)>(handle, "bli_thread_set_num_threads");
    if (!int_size || !version || !arch_id || !arch_name || !lib.sgemm || !lib.set_threads) {
        lib.sgemm = nullptr;
        lib.why_not = "the BLIS found lacks functions this program calls";
    } else if (int_size() != 64) {
        lib.sgemm = nullptr;
        lib.why_not =
            "the BLIS found uses " + std::to_string(int_size()) + "-bit integers; this program calls it with 64";
    } else {
        lib.name = std::string("BLIS ") + version() + ", " + arch_name(arch_id());
    }
    return lib;  // the handle stays open for the life of the program
}

const BlisLibrary& blis_library() {
    static const BlisLibrary lib = open_blis();
    return lib;
}

}  // namespace

bool blis_lib_available() {
    return blis_library().sgemm != nullptr;
}
std::string blis_lib_name() {
    return blis_library().name;
}
std::string blis_lib_unavailable_reason() {
    return blis_library().why_not;
}

// [snippet: blis_lib]
void matmul_blis_lib(const float* a, const float* b, float* c, Shape s, int threads) {
    const auto& lib = blis_library();
    if (lib.sgemm == nullptr) throw std::logic_error("BLIS cannot run: " + lib.why_not);
    lib.set_threads(threads);
    const float one = 1.0f, zero = 0.0f;
    // Row-major: the stride between rows is the row length, between columns 1.
    lib.sgemm(kNoTranspose, kNoTranspose, dim_t(s.m), dim_t(s.n), dim_t(s.k), &one, a, dim_t(s.k), 1, b, dim_t(s.n), 1,
              &zero, c, dim_t(s.n), 1);
}
// [end: blis_lib]

}  // namespace ch09
