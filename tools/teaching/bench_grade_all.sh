#!/usr/bin/env bash
# bench_grade_all.sh [--runs N] [--chapter NN] [--class N] REV...: how long `make grade-all` takes on
# a class of N copies (30) of the chapter's solution (chapter 01), for each REV (a commit of this
# repository, e.g. the tree before the sandbox and HEAD). Each REV is exported with git archive into
# a directory of its own (no worktree is touched), graded once untimed (the kit's first build, the
# compile cache filled), then timed N times (3); prints the wall seconds of every run and their
# median, one line per REV, and the ratio of each median to the first REV's. Measure on an
# otherwise idle machine: the figures follow whatever else runs.
#   tools/teaching/bench_grade_all.sh 6d23165 HEAD
set -euo pipefail
runs=3 chapter=01 class=30
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --runs) runs=$2 ;;
    --chapter) chapter=$2 ;;
    --class) class=$2 ;;
    *) echo "bench_grade_all: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $# -ge 1 ]] || { echo "usage: bench_grade_all.sh [--runs N] [--chapter NN] [--class N] REV..." >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ && $class =~ ^[1-9][0-9]*$ ]] || { echo "bench_grade_all: --runs and --class take a count" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
solution=$(ls "$root"/chapters/"$chapter"_*/exercises/solution.cpp 2>/dev/null | head -1)
[[ -n $solution ]] || { echo "bench_grade_all: no chapter $chapter with exercises" >&2; exit 2; }
for rev in "$@"; do
  git -C "$root" rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "bench_grade_all: no commit $rev" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-grade-all.XXXXXX") && chmod 755 "$work"  # the sandbox runs as another user
trap 'rm -rf "$work"' EXIT
for k in $(seq -w 1 "$class"); do
  mkdir -p "$work/class/student$k" && cp "$solution" "$work/class/student$k/starter.cpp"
done

# Seconds of one `make grade-all` in TREE, which must grade every student full marks.
grade_once() {
  local tree=$1 start end
  start=$(date +%s.%N)
  make -C "$tree" --no-print-directory grade-all CH="$chapter" DIR="$work/class" BUILD="$tree/build" >"$work/last.log" 2>&1 ||
    { cat "$work/last.log" >&2; echo "bench_grade_all: make grade-all failed in $tree" >&2; exit 1; }
  end=$(date +%s.%N)
  local graded
  graded=$(tail -n +2 "$tree/build/grades/ch$chapter.csv" | awk -F, '$2 == $3 && $2 > 0' | wc -l)
  [[ $graded -eq $class ]] || { echo "bench_grade_all: $graded of $class copies of the solution got full marks in $tree" >&2; exit 1; }
  echo "$end - $start" | bc
}

first=""
for rev in "$@"; do
  tree=$work/$(git -C "$root" rev-parse --short "$rev")
  mkdir -p "$tree" && git -C "$root" archive "$rev" | tar -x -C "$tree"
  echo "$rev: first run (the kit's build) $(grade_once "$tree") s" >&2
  times=()
  for _ in $(seq "$runs"); do times+=("$(grade_once "$tree")"); done
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ t[NR] = $1 } END { print (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2 }')
  first=${first:-$median}
  printf '%s (%s): runs %s s; median %.1f s; %.3f times the first\n' "$rev" "$(basename "$tree")" \
    "$(printf '%.1f ' "${times[@]}" | sed 's/ $//')" "$median" "$(echo "$median / $first" | bc -l)"
done
