#!/usr/bin/env bash
# fuzz.sh BUILD SECONDS: builds every libFuzzer target with clang (preset fuzz) and runs each for SECONDS.
# Crashes are saved in fuzz/crashes/<target>/; turn each into a regression (fuzz/regressions/<target>/).
set -euo pipefail
build=$(realpath -m "$1") seconds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/tools/dev/deps.sh" --fuzz
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCACHEBOOK_FUZZ=ON -DCACHEBOOK_WARNINGS_AS_ERRORS=OFF >/dev/null
targets=$(cd "$root/fuzz" && ls fuzz_*.cpp | sed 's/\.cpp$//')
cmake --build "$build" -j 2 --target $targets
status=0
for t in $targets; do
  bash "$root/tools/dev/fuzz_run.sh" "$build/bin/$t" "$root/fuzz/corpus/$t" "$seconds" "$root/fuzz/crashes/$t" || status=1
done
exit $status
