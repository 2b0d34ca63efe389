# Cross-compiling for 64-bit ARM Linux on a Debian x86-64 machine (`make aarch64-check`):
# Debian's g++-aarch64-linux-gnu, the arm64 libraries installed side by side with the host's
# (multiarch: `dpkg --add-architecture arm64`, then libfmt-dev:arm64 ...), the header-only ones
# (CLI11, nlohmann-json, Catch2) from the host, and every program run under qemu-aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# -Wno-psabi: g++ for aarch64 adds a note wherever a function takes or returns a type whose
# passing changed between compiler versions (std::pair<double, double> "changed to match C++14 in
# GCC 10.1"). It matters only when code built by an older g++ is linked in, and here every object
# and library is built by this one compiler (or is C), so the note says nothing about this build.
set(CMAKE_C_FLAGS_INIT "-Wno-psabi")
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")
# Multiarch keeps arm64 libraries in /usr/lib/aarch64-linux-gnu: search there, never in the host's.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config (OpenBLAS, hwloc) reads the arm64 .pc files and the architecture-free ones only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# ctest, and Catch2's test discovery, run the programs through this. No -L: the arm64 loader is
# then the multiarch one, /lib/ld-linux-aarch64.so.1 (libc6:arm64), which the loader's search
# (the host's ld.so.cache lists the arm64 directories) pairs with that same package's libc.so.6.
# With -L /usr/aarch64-linux-gnu the loader came from the cross compiler's own libc copy, a
# different build of glibc from the libc.so.6 it then loaded, and a program could hang in the
# loader (the unit test of cachesim -v spun there for minutes).
# OPENBLAS_NUM_THREADS=1: OpenBLAS's worker threads wait for work in a spin loop, which under
# qemu-user kept a program that links it (unit_tests, chapter 9) from even starting up in
# minutes; with one thread there is no pool, and startup takes a fraction of a second.
set(CMAKE_CROSSCOMPILING_EMULATOR env OPENBLAS_NUM_THREADS=1 qemu-aarch64)
