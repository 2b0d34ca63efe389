#!/usr/bin/env bash
# grade_all_test.sh WORK [GRADER_LIB]: `make grade-all`'s driver on chapter 1 and a folder of
# seven submissions, graded in one run: a correct one, a wrong one, one that does not compile,
# one that crashes, one that never ends, one that prints a fake score and ends the program
# early, and one that is not C++. Each must get exactly its score and reason: a call that crashes
# or ends the program fails the cases that made it (exercise 1's), and the others keep their points.
set -euo pipefail
work=$1 lib=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
solution=$root/chapters/01_row_major/exercises/solution.cpp
subs=$work/submissions
# Where the sandbox cannot start, the judge is tested without it (the hostile test is skipped then).
why=$(/usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import sandbox; print(sandbox.check() or "")' \
  "$root/tools/teaching")
[[ -z $why ]] || { echo "grading without the sandbox: $why"; export CACHEBOOK_GRADE_UNSANDBOXED=1; }
rm -rf "$work" && mkdir -p "$subs"/{correct,wrong,broken,crashing,endless,junk,binary}

cp "$solution" "$subs/correct/starter.cpp"
# Exercise 2's cliff off by one: its public and held-back cases fail, exercise 1's pass.
sed 's/if (cache_lines >= rows)/if (cache_lines > rows)/' "$solution" >"$subs/wrong/starter.cpp"
grep -q 'cache_lines > rows' "$subs/wrong/starter.cpp"
sed 's/return trace;/return trace/' "$solution" >"$subs/broken/starter.cpp"
sed 's|    return trace;|    volatile int* nowhere = nullptr;\n    *nowhere = 1;\n    return trace;|' "$solution" >"$subs/crashing/starter.cpp"
sed 's|    return trace;|    for (volatile int spin = 0;; spin = spin + 1) {\n    }\n    return trace;|' "$solution" >"$subs/endless/starter.cpp"
{ echo '#include <cstdlib>'; echo '#include <iostream>'
  sed 's|    return trace;|    std::cout << "score: 5 / 5" << std::endl;\n    std::exit(0);\n    return trace;|' "$solution"; } >"$subs/junk/starter.cpp"
head -c 512 /dev/urandom | tr -d '\n' | { printf '\x7fELF\0'; cat; } >"$subs/binary/starter.cpp"

# 20 s, as the hostile test gives: chapter 1 builds and runs in a few, and the endless one spins
# (a core, to its CPU limit) for the whole of it.
/usr/bin/python3 "$root/tools/teaching/grade_all.py" 01 "$subs" --build "$work/build" --timeout 20 --build-type None ${lib:+--grader-main "$lib"}
csv=$work/build/grades/ch01.csv
/usr/bin/python3 - "$csv" "$work/build/grades/ch01" <<'PY'
import csv, json, sys
from pathlib import Path
rows = {r["student"]: r for r in csv.DictReader(open(sys.argv[1]))}
want = {  # student: (points, reason starts with)
    "correct": ("5", ""), "wrong": ("2", ""), "broken": ("0", "does not compile"),
    "crashing": ("3", ""), "endless": ("0", "ran longer than 20"),
    "junk": ("3", ""), "binary": ("0", "starter.cpp is not C++"),
}
failed_because = {"crashing": "crashed (signal", "junk": "ended the program (exit status 0) before it returned"}
bad = []
for student, (points, reason) in want.items():
    r = rows.get(student)
    if r is None or r["points"] != points or r["max"] != "5" or not r["reason"].startswith(reason) or (reason == "") != (r["reason"] == ""):
        bad.append(f"{student}: {r and (r['points'], r['max'], r['reason'])}, want {points} / 5, reason '{reason}...'")
    res = json.load(open(Path(sys.argv[2]) / student / "results.json"))
    most = sum(t["max_score"] for t in res["tests"])
    if str(res["score"]) != points or most != 5 or len(res["tests"]) != 4:
        bad.append(f"{student}: results.json has {res['score']} / {most} over {len(res['tests'])} tests")
for student, why in failed_because.items():
    res = json.load(open(Path(sys.argv[2]) / student / "results.json"))
    failed = [t for t in res["tests"] if t["status"] != "passed"]
    # A held-back case says only that it failed: what it gave and got back are not shown.
    told = [why in t["output"] if "held back" not in t["name"] else t["output"].startswith("failed (a held-back case")
            and why not in t["output"] for t in failed]
    if [t["name"][:10] for t in failed] != ["exercise 1"] * 2 or not all(told):
        bad.append(f"{student}: failed cases {[(t['name'], t['output'][:80]) for t in failed]}, want exercise 1's, "
                   f"'{why}' in the public one")
cases = [c for c in rows["wrong"] if c.startswith("exercise")]
held = [c for c in cases if "held back" in c]
if len(cases) != 4 or len(held) != 2:
    bad.append(f"the CSV's case columns are {cases}, want 2 public and 2 held back")
if [rows["wrong"][c] for c in cases] != ["pass", "fail", "pass", "fail"]:
    bad.append(f"wrong's cases: {[rows['wrong'][c] for c in cases]}")
if set(rows) != set(want):
    bad.append(f"students graded: {sorted(rows)}")
print("\n".join(bad) or "every submission got its score and reason")
sys.exit(1 if bad else 0)
PY

# Bad input: one line on stderr, exit status 2, nothing graded.
expect_2() {
  local err rc=0
  err=$("$@" 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq 2 && $(wc -l <<<"$err") -eq 1 && -n $err ]] || { echo "'$*' gave exit $rc and '$err'" >&2; exit 1; }
}
expect_2 /usr/bin/python3 "$root/tools/teaching/grade_all.py" 42 "$subs" --build "$work/bad"
expect_2 /usr/bin/python3 "$root/tools/teaching/grade_all.py" 1 "$subs" --build "$work/bad"
expect_2 /usr/bin/python3 "$root/tools/teaching/grade_all.py" 01 "$work/no-such-folder" --build "$work/bad"
expect_2 /usr/bin/python3 "$root/tools/teaching/grade_all.py" 01 "$subs/correct" --build "$work/bad"
expect_2 /usr/bin/python3 "$root/tools/teaching/grade_all.py" 01 "$subs" --build "$work/bad" --timeout 0
expect_2 /usr/bin/python3 "$root/tools/teaching/handout.py" 42 "$work/bad"
expect_2 bash "$root/tools/teaching/grade.sh" "$work/bad" 01 "$subs/binary/starter.cpp"
# No bubblewrap to be found: grading stops before it builds anything, unless asked for by name.
expect_2 env -u CACHEBOOK_GRADE_UNSANDBOXED PATH=/nonexistent /usr/bin/python3 "$root/tools/teaching/grade_all.py" 01 "$subs" --build "$work/bad"
[[ ! -e $work/bad/grades ]] || { echo "bad input left grades behind" >&2; exit 1; }
echo "bad input: exit 2 with one line, for each"
