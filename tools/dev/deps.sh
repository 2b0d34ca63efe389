#!/usr/bin/env bash
# Installs the Debian packages cachebook needs, only those missing.
# --book: the packages the HTML book needs (chromium: its browser test; python3-bs4: book/check_rendered.py).
# --all: every set below at once (CI: one apt-get update and one install instead of four).
set -euo pipefail
core=(g++ cmake ninja-build make pkg-config python3 libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libhwloc-dev libopenblas-dev valgrind)
core+=(bubblewrap)  # the sandbox around every build and run of a graded submission (tools/teaching/sandbox.py)
book=(doxygen python3-sphinx python3-breathe python3-myst-parser furo python3-matplotlib python3-bs4 chromium)
# The model in the page (book/model): clang's wasm32-wasi target, its C and C++ libraries, and Node for its tests.
book+=(clang-14 lld-14 wasi-libc libc++-14-dev-wasm32 libc++abi-14-dev-wasm32 libclang-rt-14-dev-wasm32 nodejs)
core+=(python-matplotlib-data)  # chapter 4's study reads its Stocks.csv
# Chapter 9's step 7: BLIS beside OpenBLAS. The program loads it at run time (dlopen) and
# skips it, saying why, where it is absent; nothing is linked against it.
core+=(libblis-dev)
# --fuzz: clang and its tools (make clang-check, fuzz, fuzz-ci, format-check).
fuzz=(clang libclang-rt-14-dev clang-format-14)
want=("${core[@]}")
[[ ${1:-} == --book ]] && want=("${book[@]}")
[[ ${1:-} == --fuzz ]] && want=("${fuzz[@]}")

# --aarch64 (`make aarch64-check`, `make aarch64-ci`): the cross compiler, qemu's user-mode
# emulator, and for arm64 beside the host's (Debian multiarch) the libraries the build links (fmt,
# hwloc, OpenBLAS, each pulling in its own arm64 dependencies) and the C and C++ runtime the
# programs run with under qemu (libc6:arm64, whose loader is /lib/ld-linux-aarch64.so.1, and
# libstdc++6:arm64); CLI11, nlohmann-json and Catch2 are header-only, so the host's serve both.
# file: the check shows the programs are aarch64; python-matplotlib-data: chapter 4's study reads
# its Stocks.csv, and its golden file shows that data. BLIS, which chapter 9 opens at
# run time, is left out: the chapter says it is missing, as its golden file allows.
aarch64=(g++-aarch64-linux-gnu qemu-user pkg-config cmake ninja-build make file python-matplotlib-data
         catch2 libcli11-dev nlohmann-json3-dev libfmt-dev:arm64 libhwloc-dev:arm64 libopenblas-dev:arm64
         libc6:arm64 libstdc++6:arm64)
[[ ${1:-} == --all ]] && want=("${core[@]}" "${book[@]}" "${fuzz[@]}" "${aarch64[@]}")
if [[ ${1:-} == --aarch64 || ${1:-} == --all ]]; then
  [[ ${1:-} == --aarch64 ]] && want=("${aarch64[@]}")
  if ! dpkg --print-foreign-architectures 2>/dev/null | grep -qx arm64; then
    command -v dpkg >/dev/null || { echo "deps: --aarch64 needs Debian's multiarch (dpkg)" >&2; exit 1; }
    echo "deps: adding the arm64 architecture (dpkg --add-architecture arm64)"
    if [[ $(id -u) -eq 0 ]]; then dpkg --add-architecture arm64; else sudo dpkg --add-architecture arm64; fi
  fi
fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "deps: not a Debian system; install these (or your system's equivalents) by hand: ${missing[*]}" >&2
  exit 1
fi
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
