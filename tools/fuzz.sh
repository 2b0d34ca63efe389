#!/usr/bin/env bash
# fuzz.sh BUILD SECONDS: builds every libFuzzer target with clang and runs each for SECONDS.
# Crashes are saved in fuzz/crashes/<target>/; turn each into a regression test.
set -euo pipefail
build=$(realpath -m "$1") seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  bash "$root/tools/deps.sh" --fuzz
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCACHEBOOK_FUZZ=ON -DCACHEBOOK_WARNINGS_AS_ERRORS=OFF >/dev/null
targets=$(cd "$root/fuzz" && ls fuzz_*.cpp | sed 's/\.cpp$//')
cmake --build "$build" -j 2 --target $targets
status=0
for t in $targets; do
  corpus="$root/fuzz/corpus/$t" crashes="$root/fuzz/crashes/$t"
  mkdir -p "$crashes"
  work=$(mktemp -d)
  [[ -d $corpus ]] && cp -r "$corpus"/. "$work"/
  echo "fuzzing $t for ${seconds}s"
  if ! (cd "$crashes" && "$build/bin/$t" -max_total_time="$seconds" -print_final_stats=1 "$work" 2>"$work.log"); then
    status=1; echo "$t: crash found; inputs in $crashes"; tail -30 "$work.log"
  fi
  grep -E "stat::number_of_executed_units|Done" "$work.log" | sed "s/^/  $t: /"
  rm -rf "$work" "$work.log"
done
exit $status
