#!/usr/bin/env bash
# grade.sh BUILD NN [starter|solution]: build and run chapter NN's exercise grader.
set -euo pipefail
build=$1 ch=$2 which=${3:-starter}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(cd "$root/chapters" && ls -d "${ch}"_* 2>/dev/null | head -1 || true)
if [[ -z $dir || ! -f $root/chapters/$dir/exercises/grader.cpp ]]; then
  echo "grade: chapter $ch has no exercises (chapters/${ch}_*/exercises/grader.cpp)" >&2
  exit 2
fi
cmake --build "$build" --target "grade_ch${dir}_${which}" >/dev/null
echo "Grading chapters/$dir/exercises/$which.cpp"
"$build/bin/grade_ch${dir}_${which}" || true
