#!/usr/bin/env bash
# handout_test.sh NN WORK [GRADER_LIB]: chapter NN's handout, unpacked in an empty directory,
# builds on its own; the untouched starter scores 0 and the solution, dropped in as starter.cpp,
# full marks (both through `make grade` and through Gradescope's run_autograder); the tarball
# holds neither the solution nor the held-back cases. GRADER_LIB: a built libcachebook_grader.a
# (the same grader_main.cpp in every handout) so that only one chapter's test compiles Catch2's
# runner; without it the handout compiles its own.
set -euo pipefail
ch=$1 work=$2 lib=${3:+$(realpath "$3")}
root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "handout_test ch$ch: $*" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work/out" "$work/empty"
/usr/bin/python3 "$root/tools/teaching/handout.py" "$ch" "$work/out" --tar >/dev/null
tar="$work/out/ch$ch.tar.gz"
listing=$(tar tzf "$tar")
! grep -qE '(^|/)(solution|held_back)\.cpp$' <<<"$listing" || die "the tarball holds the answer key: $(grep -E 'solution|held_back' <<<"$listing")"
grep -qx "ch$ch/starter.cpp" <<<"$listing" || die "no starter.cpp in the tarball"
grep -qx "ch$ch/README.md" <<<"$listing" || die "no README.md in the tarball"

cd "$work/empty" && tar xzf "$tar" && cd "ch$ch"
# Without optimization (build type None): the same sources, built in about two thirds of the
# time of the handout's default Release build.
cmake -S . -B build -DCMAKE_BUILD_TYPE=None ${lib:+-DGRADER_MAIN_LIBRARY=$lib} >/dev/null
make grade JOBS=2 >grade_starter.txt 2>&1 || die "make grade failed on the starter: $(tail -5 grade_starter.txt)"
starter=$(grep '^score:' grade_starter.txt) || die "no score line: $(tail -5 grade_starter.txt)"
[[ $starter =~ ^score:\ 0\ /\ ([1-9][0-9]*) ]] || die "the untouched starter scores '$starter', not 0 of some points"
max=${BASH_REMATCH[1]}
if ./build/grader --list | grep -q 'held back'; then die "the handout's grader runs held-back cases"; fi

# The solution through run_autograder first, which copies it over starter.cpp and builds the grader
# in build/; then make grade on the same starter.cpp finds the grader built and only runs it.
solution_cpp=$(echo "$root/chapters/${ch}_"*/exercises/solution.cpp)
mkdir -p submission && cp "$solution_cpp" submission/starter.cpp
./run_autograder "$PWD/submission" "$PWD/results/results.json" >/dev/null
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["score"] == sum(t["max_score"] for t in r["tests"]) == int(sys.argv[2]), r
assert all(t["status"] == "passed" or t["max_score"] == 0 for t in r["tests"]), r' results/results.json "$max" \
  || die "run_autograder did not give the solution full marks"

cmp -s "$solution_cpp" starter.cpp || die "run_autograder did not put the submission in starter.cpp"
make grade JOBS=2 >grade_solution.txt 2>&1 || die "make grade failed on the solution: $(tail -5 grade_solution.txt)"
solution=$(grep '^score:' grade_solution.txt)
[[ $solution =~ ^score:\ $max\ /\ $max($|\ ) ]] || die "the solution scores '$solution', not $max / $max"
echo "ch$ch: starter '$starter', solution '$solution', run_autograder full marks"
