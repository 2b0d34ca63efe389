# Cross-compiling for 64-bit ARM Linux on a Debian x86-64 machine (`make aarch64-check`):
# Debian's g++-aarch64-linux-gnu, the arm64 libraries installed side by side with the host's
# (multiarch: `dpkg --add-architecture arm64`, then libfmt-dev:arm64 ...), the header-only ones
# (CLI11, nlohmann-json, Catch2) from the host, and every program run under qemu-aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch keeps arm64 libraries in /usr/lib/aarch64-linux-gnu: search there, never in the host's.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config (OpenBLAS, hwloc) reads the arm64 .pc files and the architecture-free ones only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# ctest, and Catch2's test discovery, run the programs through this; -L: the C and C++
# runtime the cross compiler linked against, with the rest found in multiarch's directories.
# OPENBLAS_NUM_THREADS=1: OpenBLAS's worker threads wait for work in a spin loop, which under
# qemu-user kept a program that links it (unit_tests, chapter 9) from even starting up in
# minutes; with one thread there is no pool, and startup takes a fraction of a second.
set(CMAKE_CROSSCOMPILING_EMULATOR env OPENBLAS_NUM_THREADS=1 qemu-aarch64 -L /usr/aarch64-linux-gnu)
