# Chapter 9's build details, included from the top-level CMakeLists.txt after add_chapter.
set(ch09_dir ${CMAKE_SOURCE_DIR}/chapters/09_matmul)

# Each instruction set's kernels get their own flags, so the rest of the build stays plain
# x86-64 and the program chooses at run time (isa_supported) what this CPU can run.
# -ffp-contract=off: an FMA only where the code asks for one; a * b + c stays two roundings.
# CACHEBOOK_PORTABLE leaves the flags out: those two files then hold no kernel and only the scalar ones run.
# On aarch64 every CPU has NEON: matmul_neon.cpp needs no flag, and the x86 files hold no kernel.
set(ch09_kernel_files ${ch09_dir}/matmul_avx2.cpp ${ch09_dir}/matmul_avx512.cpp ${ch09_dir}/matmul_neon.cpp)
set_source_files_properties(${ch09_kernel_files} PROPERTIES COMPILE_OPTIONS "-ffp-contract=off")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(CACHEBOOK_X86_64 ON)
endif()
if(NOT CACHEBOOK_X86_64)
  message(STATUS "chapter 9: built for ${CMAKE_SYSTEM_PROCESSOR}; the NEON kernels where the CPU is aarch64")
elseif(CACHEBOOK_PORTABLE)
  message(STATUS "chapter 9: portable build (CACHEBOOK_PORTABLE); no AVX2 or AVX-512 kernels, the scalar ones run")
else()
  set_source_files_properties(${ch09_dir}/matmul_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-ffp-contract=off")
  set_source_files_properties(${ch09_dir}/matmul_avx512.cpp PROPERTIES COMPILE_OPTIONS "-mavx512f;-mavx2;-mfma;-ffp-contract=off")
endif()
# Steps 1 to 3 stay scalar, as the chapter describes them (no automatic SSE vectorization).
set_source_files_properties(${ch09_dir}/matmul_scalar.cpp PROPERTIES COMPILE_OPTIONS "-fno-tree-vectorize")

# Step 7 needs a CBLAS; OpenBLAS is optional: without it the chapter says so and skips step 7.
option(CACHEBOOK_WITH_OPENBLAS "Link chapter 9 against OpenBLAS when it is found" ON)
set(CACHEBOOK_HAVE_OPENBLAS OFF)
if(CACHEBOOK_WITH_OPENBLAS)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(OPENBLAS IMPORTED_TARGET openblas)
  endif()
  if(OPENBLAS_FOUND)
    target_link_libraries(ch09_matmul_logic PUBLIC PkgConfig::OPENBLAS)
    target_compile_definitions(ch09_matmul_logic PRIVATE CACHEBOOK_HAVE_OPENBLAS=1)
    set(CACHEBOOK_HAVE_OPENBLAS ON)
    message(STATUS "chapter 9: OpenBLAS ${OPENBLAS_VERSION} found; step 7 will run")
  else()
    message(STATUS "chapter 9: OpenBLAS not found (Debian: libopenblas-dev); step 7 will be skipped")
  endif()
else()
  message(STATUS "chapter 9: built without OpenBLAS (CACHEBOOK_WITH_OPENBLAS=OFF); step 7 will be skipped")
endif()

# The exercises may use AVX2 intrinsics, like step 4 (also in a portable build: the grader runs
# exercise 1 only where isa_supported(Avx2), and otherwise lists it as skipped with the reason).
# Elsewhere than x86-64 the AVX2 exercise is not compiled in, and the grader says so.
set(ch09_exercise_options "-ffp-contract=off")
if(CACHEBOOK_X86_64)
  set(ch09_exercise_options "-mavx2;-mfma;-ffp-contract=off")
endif()
set_source_files_properties(${ch09_dir}/exercises/starter.cpp ${ch09_dir}/exercises/solution.cpp
  PROPERTIES COMPILE_OPTIONS "${ch09_exercise_options}")

# Chapter 9's goal, step 6 against OpenBLAS kernel to kernel (bench/bench_ch09.cpp; without
# OpenBLAS it says so and skips): make bench builds it, no test runs it.
add_executable(bench_ch09 EXCLUDE_FROM_ALL ${ch09_dir}/bench/bench_ch09.cpp)
target_link_libraries(bench_ch09 PRIVATE cachebook ch09_matmul_logic)
