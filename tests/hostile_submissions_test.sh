#!/usr/bin/env bash
# hostile_submissions_test.sh WORK [GRADER_LIB]: `make grade-all` on chapter 1 and submissions that
# attack the grader instead of answering: each adds to the unwritten starter (an honest 0) a static
# object that rewrites its results, reads the held-back cases and the solution, writes outside its
# folder, forks without end, fills the disk, or opens a network connection. Each must score 0 with
# a reason for every case, the solution 5 / 5, and no file outside the students' output folders
# may change (the test compares a listing with hashes of the tree around them before and after).
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
mkdir -p "$subs/solution" && cp "$ex/solution.cpp" "$subs/solution/starter.cpp"

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
  find "$work" "$root/chapters" "$root/tools" "$root/tests" -type f -not -path "$work/build/grades/ch01/*" \
      -not -path "$work/build/grades/kits/*" -not -path "$work/build/grades/ch01.csv" -not -path "$work/port" |
    LC_ALL=C sort | xargs -d '\n' sha256sum
  ls /tmp/cachebook-escaped.txt /tmp/cachebook-fill 2>/dev/null || true  # what the submissions try outside the tree
}
mkdir -p "$work/build/grades"
before=$(snapshot)
/usr/bin/python3 "$root/tools/teaching/grade_all.py" 01 "$subs" --build "$work/build" --timeout 20 --build-type None \
  ${lib:+--grader-main "$lib"}
after=$(snapshot)
if [[ $before != "$after" ]]; then
  echo "files outside the output folders changed:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
[[ ! -e $work/connected ]] || { echo "the network submission reached the listener" >&2; exit 1; }

/usr/bin/python3 - "$work/build/grades" "$ex" <<'PY'
import csv, json, sys
from pathlib import Path
grades, ex = Path(sys.argv[1]), Path(sys.argv[2])
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
if set(rows) != {"solution", "rewrite", "peek", "escape", "fork_bomb", "fill_disk", "network"}:
    bad.append(f"students graded: {sorted(rows)}")
print("\n".join(bad) or "every hostile submission scored 0 with a reason; the solution 5 / 5; nothing outside changed")
sys.exit(1 if bad else 0)
PY
