#!/usr/bin/env bash
# grade.sh BUILD NN [starter|solution]: build and run chapter NN's exercise grader (the public
# and the held-back cases) on the repository's starter.cpp or solution.cpp, and for a chapter with an
# exercise scored for speed, its model and measured score.
# grade.sh BUILD NN FILE: grade one submission, FILE (a student's starter.cpp), in a build of
# its own under BUILD/grade-one (tools/teaching/grade_all.py on a folder of one).
set -euo pipefail
build=$1 ch=$2 which=${3:-starter}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(cd "$root/chapters" && ls -d "${ch}"_* 2>/dev/null | head -1 || true)
if [[ ! $ch =~ ^[0-9][0-9]$ || -z $dir || ! -f $root/chapters/$dir/exercises/grader.cpp ]]; then
  echo "grade: chapter $ch has no exercises (chapters/${ch}_*/exercises/grader.cpp)" >&2
  exit 2
fi
if [[ $which != starter && $which != solution ]]; then
  [[ -f $which ]] || { echo "grade: no file $which" >&2; exit 2; }
  if [[ ! -s $which ]] || ! grep -qI . "$which"; then echo "grade: $which is not C++ source text" >&2; exit 2; fi
  one="$build/grade-one/submission"
  rm -rf "$one" && mkdir -p "$one/$(basename "$(dirname "$(realpath "$which")")")"
  cp "$which" "$one"/*/starter.cpp
  exec /usr/bin/python3 "$root/tools/teaching/grade_all.py" "$ch" "$one" --build "$build/grade-one"
fi
cmake --build "$build" --target "grade_ch${dir}_${which}" >/dev/null
echo "Grading chapters/$dir/exercises/$which.cpp"
"$build/bin/grade_ch${dir}_${which}" || true
# An exercise scored for speed: the model and the measured score (tools/teaching/perf.py).
if [[ -f $root/chapters/$dir/exercises/perf.cpp ]]; then
  /usr/bin/python3 "$root/tools/teaching/perf.py" --chapter "$ch" --file "$root/chapters/$dir/exercises/$which.cpp" \
    --build "$build" || true
fi
