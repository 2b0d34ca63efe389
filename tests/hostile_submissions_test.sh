#!/usr/bin/env bash
# hostile_submissions_test.sh WORK [GRADER_LIB]: `make grade-all` on chapters 1 and 5 and submissions
# that attack the grader instead of answering. Chapter 1: each adds to the unwritten starter (an
# honest 0) a static object that rewrites its results, reads the held-back cases and the solution,
# writes outside its folder, forks without end, fills the disk, or opens a network connection; and
# a whole submission tells every input it is called with everywhere a student might read it. Each
# must score 0 with a reason for every case, the solution 5 / 5, and what a student is shown
# (results.json, output.txt) must hold no input only the held-back cases give. Chapter 5, the
# speed score: one forges the probe's answers and timings over the unwritten starter (0 on both
# parts), one fakes the CPU clock over a correct but slow answer (what the slow answer scores,
# graded beside it). No file outside the students' output folders may change (the test compares a
# listing with hashes of the tree around them before and after).
set -euo pipefail
work=$1 lib=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
fixtures=$root/tests/fixtures/hostile
ex=$root/chapters/01_row_major/exercises
subs=$work/submissions
# Without the sandbox there is nothing to test here: skipped (ctest: 77), saying why.
why=$(/usr/bin/python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import sandbox; print(sandbox.check() or "")' \
  "$root/tools/teaching")
[[ -z $why ]] || { echo "SKIPPED: $why"; exit 77; }
rm -rf "$work" && mkdir -p "$subs"
for f in "$fixtures"/*.cpp; do
  name=$(basename "$f" .cpp)
  mkdir -p "$subs/$name"
  # WORK and the repository as the attacker would guess them: the instructor's own paths.
  { cat "$ex/starter.cpp"; sed -e "s|@WORK@|$work|g" -e "s|@ROOT@|$root|g" "$f"; } >"$subs/$name/starter.cpp"
done
for f in "$fixtures"/whole/*.cpp; do  # whole submissions
  mkdir -p "$subs/$(basename "$f" .cpp)" && cp "$f" "$subs/$(basename "$f" .cpp)/starter.cpp"
done
mkdir -p "$subs/solution" && cp "$ex/solution.cpp" "$subs/solution/starter.cpp"
# Chapter 5's speed score: over the unwritten starter, and over a correct but slow answer, graded beside it.
speed=$work/speed
mkdir -p "$speed/forge_timing" "$speed/fake_clock" "$speed/slow"
cat "$root/chapters/05_layout/exercises/starter.cpp" "$fixtures/speed/forge_timing.cpp" >"$speed/forge_timing/starter.cpp"
/usr/bin/python3 "$root/tests/fixtures/slow/slow_submission.py" 05 "$speed/slow/starter.cpp"
cat "$speed/slow/starter.cpp" "$fixtures/speed/fake_clock.cpp" >"$speed/fake_clock/starter.cpp"

# A listener the network submission tries to reach; it records any connection.
port_file=$work/port
/usr/bin/python3 - "$port_file" "$work/connected" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); s.settimeout(600)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
try:
    s.accept(); open(sys.argv[2], "w").write("connected\n")
except OSError:
    pass
PY
listener=$!
trap 'kill $listener 2>/dev/null || true' EXIT
for _ in $(seq 50); do [[ -s $port_file ]] && break; sleep 0.1; done
sed -i "s|@PORT@|$(cat "$port_file")|g" "$subs/network/starter.cpp"

snapshot() {  # every file around the output folders, with its hash (the kits are rebuilt, so left out)
  find "$work" "$root/chapters" "$root/tools" "$root/tests" -type f -not -path "$work/build/grades/ch0[15]/*" \
      -not -path "$work/build/grades/ch0[15]-held-back/*" \
      -not -path "$work/build/grades/kits/*" -not -path "$work/build/grades/ch0[15].csv" -not -path "$work/port" |
    LC_ALL=C sort | xargs -d '\n' sha256sum
  ls /tmp/cachebook-escaped.txt /tmp/cachebook-fill 2>/dev/null || true  # what the submissions try outside the tree
}
mkdir -p "$work/build/grades"
before=$(snapshot)
/usr/bin/python3 "$root/tools/teaching/grade_all.py" 01 "$subs" --build "$work/build" --timeout 20 --build-type None \
  ${lib:+--grader-main "$lib"}
/usr/bin/python3 "$root/tools/teaching/grade_all.py" 05 "$speed" --build "$work/build" ${lib:+--grader-main "$lib"}
after=$(snapshot)
if [[ $before != "$after" ]]; then
  echo "files outside the output folders changed:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
[[ ! -e $work/connected ]] || { echo "the network submission reached the listener" >&2; exit 1; }

# The inputs each judge gave the echoing submission, from the judges run again on its library,
# each child's output in a file (the submission is the test's own: it only prints).
kit_build=$work/build/grades/kits/build-ch01
echo_lib=$work/build/grades/ch01/echo_inputs/build/libsubmission.so
"$kit_build/judge" --judge "$echo_lib" --output "$work/echo_public.txt" >/dev/null 2>&1 || true
"$kit_build/judge_held_back" --judge "$echo_lib" --output "$work/echo_held_back.txt" >/dev/null 2>&1 || true

/usr/bin/python3 - "$work/build/grades" "$ex" "$work" <<'PY'
import csv, json, re, sys
from pathlib import Path
grades, ex, work = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
rows = {r["student"]: r for r in csv.DictReader(open(grades / "ch01.csv"))}
starter = {line.strip() for line in (ex / "starter.cpp").read_text().splitlines()}
secrets = [line.strip() for f in ("held_back.cpp", "solution.cpp") for line in (ex / f).read_text().splitlines()
           if len(line.strip()) > 40 and line.strip() not in starter]  # lines of the answer key, its own
bad = []
for student, row in sorted(rows.items()):
    want = 5 if student == "solution" else 0
    doc = json.load(open(grades / "ch01" / student / "results.json"))
    if int(row["points"]) != want or doc["score"] != want or row["max"] != "5":
        bad.append(f"{student}: {row['points']} / {row['max']} (results.json {doc['score']}), want {want} / 5")
    if want == 0 and not all(t["output"].strip() for t in doc["tests"]):
        bad.append(f"{student}: a case failed without a reason")
    for f in (grades / "ch01" / student).rglob("*") if student != "solution" else []:
        text = f.read_bytes().decode("utf-8", "replace") if f.is_file() else ""
        leaked = [s for s in secrets if s in text]
        if leaked or f.name in ("held_back.cpp", "solution.cpp"):
            bad.append(f"{student}: {f.relative_to(grades)} holds the answer key ({leaked[:1]})")
    why = row["reason"] or next((t["output"].splitlines()[0] for t in doc["tests"] if t["output"].strip()), "")
    print(f"{student}: {row['points']} / {row['max']}  {why[:90]}")
if set(rows) != {"solution", "rewrite", "peek", "escape", "fork_bomb", "fill_disk", "network", "echo_inputs"}:
    bad.append(f"students graded: {sorted(rows)}")


def echoes(text):
    """The calls the echoing submission tells of: its lines, and its answers as a failed check prints them."""
    calls = set(re.findall(r"echo: (\w+\([\d, ]*\))", text))
    return calls | {f"col_major_trace({n}, {e})" for n, e in re.findall(r"\{ 60480 \(0xec40\), (\d+)(?: \(0x\w+\))?, (\d+)", text)}


public = echoes((work / "echo_public.txt").read_text(errors="replace"))
only_held_back = echoes((work / "echo_held_back.txt").read_text(errors="replace")) - public
shown = "".join((grades / "ch01" / "echo_inputs" / f).read_text(errors="replace") for f in ("results.json", "output.txt"))
if not public <= echoes(shown):
    bad.append(f"echo_inputs: output.txt lacks what the public cases' calls printed ({len(public)} calls)")
if not only_held_back:
    bad.append("echo_inputs: the held-back judge gave no input the public one did not")
report = (grades / "ch01-held-back" / "echo_inputs.txt").read_text(errors="replace")
if not only_held_back & echoes(report):  # the report may be cut short: some, not all
    bad.append("echo_inputs: the instructor's held-back report holds nothing the held-back calls told")
leaked = sorted(only_held_back & echoes(shown))
if leaked:
    bad.append(f"echo_inputs: what the student is shown holds held-back inputs: {leaked[:3]}")
print(f"echo_inputs: {len(public)} public calls shown, {len(only_held_back)} held-back ones not")

speed = {r["student"]: r for r in csv.DictReader(open(grades / "ch05.csv"))}
perf = {s: json.load(open(grades / "ch05" / s / "results.json")).get("performance") for s in speed}
for student, row in sorted(speed.items()):
    parts = perf[student] or {}
    print(f"{student}: {row['points']} / {row['max']}; "
          + "; ".join(f"{k} {p.get('points')}: {p.get('verdict', '')[:70]}" for k, p in parts.items() if k != "correct"))
forged = perf["forge_timing"]
if speed["forge_timing"]["points"] != "0" or not forged or any(forged[k]["points"] != 0.0 for k in ("model", "measured")):
    bad.append(f"forge_timing: {speed['forge_timing']['points']} points, speed {forged}: want 0 on every part")
for k in ("model", "measured"):  # the slow answer earns no speed points: it is slower than the naive way
    if perf["slow"][k]["points"] not in (0.0, None):
        bad.append(f"slow: its {k} score is {perf['slow'][k]['points']}, not 0 (the fixture is not slow here)")
    if perf["fake_clock"][k]["points"] not in (0.0, None):
        bad.append(f"fake_clock: {k} score {perf['fake_clock'][k]['points']} ({perf['fake_clock'][k]['verdict']}), "
                   f"where its honest work, the slow answer, scores {perf['slow'][k]['points']}")
if speed["fake_clock"]["points"] != speed["slow"]["points"]:
    bad.append(f"fake_clock: {speed['fake_clock']['points']} points, the slow answer {speed['slow']['points']}")
print("\n".join(bad) or "every hostile submission scored what its honest work earns, with a reason; the solution "
      "5 / 5; no held-back input shown; nothing outside changed")
sys.exit(1 if bad else 0)
PY
