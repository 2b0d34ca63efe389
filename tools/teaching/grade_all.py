#!/usr/bin/env python3
"""grade_all.py NN DIR [--build BUILD] [--timeout S]: grade every submission in DIR (one
subdirectory per student, holding that student's starter.cpp) with chapter NN's public and
held-back cases. Writes BUILD/grades/chNN.csv (student, points, max, reason, one column per
case), BUILD/grades/chNN/<student>/results.json (Gradescope's form) and output.txt, which a
student may be shown (no held-back input in either), and BUILD/grades/chNN-held-back/<student>.txt,
the held-back cases' report, for the instructor only.

The grade is decided outside the submission's process: the judge (grader/judge.hpp) runs the cases
and calls the submission, a shared library, in a child process per call, and sends its results on
its stdout, which no child holds; this script writes results.json from them. Each build and run
of a submission is fenced (sandbox.py: bubblewrap, no network, a private tmpfs, limits); where
the fence cannot start, grading stops with one line unless CACHEBOOK_GRADE_UNSANDBOXED=1.
A submission that does not compile, runs too long, or whose judge ends without results scores 0
with the reason; a call that crashes or ends the program fails the cases that made it; the batch goes on.
A chapter with an exercise scored for speed (exercises/perf.cpp) also gets each submission's model
and measured score (tools/teaching/perf.py), in results.json and in the CSV's last columns."""
import argparse
import concurrent.futures
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

JOBS = str(os.cpu_count() or 1)  # the kit builds, and submissions are graded, on every CPU

sys.path.insert(0, str(Path(__file__).resolve().parent))
import handout  # noqa: E402  (the instructor's copy is a handout with the held-back cases)
import perf  # noqa: E402  (the performance score of the exercises that ask for speed)
import sandbox  # noqa: E402  (the fence around every build and run of a submission)
from grade_one import Recipe, grade_one, performance  # noqa: E402


def fail(message):
    print(f"grade-all: {message}", file=sys.stderr)
    sys.exit(2)


def submissions(folder):
    if not folder.is_dir():
        fail(f"no folder {folder}")
    students = sorted(p for p in folder.iterdir() if p.is_dir())
    if not students:
        fail(f"{folder} holds no submissions (one subdirectory per student, each with its starter.cpp)")
    return students


def not_cpp(path):
    """Why `path` cannot be a C++ submission, or None."""
    if not path.is_file():
        return "no starter.cpp in the submission"
    data = path.read_bytes()
    if not data.strip() or b"\0" in data:
        return "starter.cpp is not C++ source text"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "starter.cpp is not C++ source text (not UTF-8)"
    return None


def zero(reason, cases):
    return {"score": 0, "output": reason,
            "tests": [{"name": n, "score": 0, "max_score": p, "status": "failed", "output": reason} for _, p, n in cases]}


def prepare(student, out):
    """The student's output folder, holding a copy of the submission; the reason it cannot be graded, or None."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    reason = not_cpp(student / "starter.cpp")
    if reason is None:
        shutil.copy(student / "starter.cpp", out / "starter.cpp")
    return student.name, out, reason


def grade_or_zero(recipe, row, limit, cases, uid):
    name, out, reason = row
    doc = None
    if reason is None:
        # The held-back cases' report, for the instructor: beside the students' folders, never in one.
        report = out.parent.parent / f"{out.parent.name}-held-back" / f"{name}.txt"
        doc, reason = grade_one(recipe, out / "starter.cpp", out, limit, uid, held_back_report=report)
    return (doc, "") if doc is not None else (zero(reason, cases), reason)


def build_judge(kit, kit_build, args):
    """Configures the instructor's kit and builds what every submission shares: the book, the judge
    (the cases), and the kit's own submission library, whose commands each submission replays."""
    configure = ["cmake", "-S", str(kit), "-B", str(kit_build), f"-DCMAKE_BUILD_TYPE={args.build_type}"]
    if args.grader_main:
        configure.append(f"-DGRADER_MAIN_LIBRARY={Path(args.grader_main).resolve()}")
    shared = ["judge", "judge_held_back", "submission"] + (["perf_main", "probe_grader"] if (kit / "perf.cpp").is_file() else [])
    for step in (configure, ["cmake", "--build", str(kit_build), "--parallel", JOBS, "--target"] + shared):
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout + done.stderr, file=sys.stderr)
            print(f"grade-all: the chapter {args.chapter} grader itself does not build (see above)", file=sys.stderr)
            return 1
    return 0


def csv_row(name, doc, reason, cases, timed):
    status = {t["name"]: ("skip" if t["max_score"] == 0 else "pass" if t["status"] == "passed" else "fail")
              for t in doc["tests"]}
    most = sum(t["max_score"] for t in doc["tests"])
    row = [name, doc["score"], most, reason] + [status.get(n, "") for _, _, n in cases]
    if timed:
        p = doc.get("performance")
        row += [p[k]["points"] if p and p[k]["points"] is not None else "" for k in ("model", "measured")]
        row += ["; ".join(p[k]["verdict"] for k in ("model", "measured")) if p else "not scored: no probe"]
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chapter")
    ap.add_argument("dir", type=Path)
    ap.add_argument("--build", type=Path, default=Path("build"))
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds each submission's grader may run")
    ap.add_argument("--build-type", default="Release", help="CMAKE_BUILD_TYPE of the graders")
    ap.add_argument("--grader-main", default="", help="a built libcachebook_grader.a to link (saves its compile)")
    args = ap.parse_args()
    try:
        chdir = handout.chapter_dir(args.chapter)
    except handout.BadInput as e:
        fail(str(e))
    if args.timeout <= 0:
        fail(f"--timeout must be positive, not {args.timeout}")
    students = submissions(args.dir)
    unfenced = sandbox.check()
    if unfenced:
        fail(unfenced)
    ch = args.chapter
    grades = (args.build / "grades").resolve()
    kit = handout.write_handout(ch, grades / "kits", instructor=True)
    ex = chdir / "exercises"
    cases = handout.cases_of(ex / "grader.cpp") + handout.cases_of(ex / "held_back.cpp")

    kit_build = grades / "kits" / f"build-ch{ch}"
    if build_judge(kit, kit_build, args) != 0:
        return 1
    recipe = Recipe(kit, kit_build)
    rows = [prepare(student, grades / f"ch{ch}" / student.name) for student in students]
    timed = (kit / "perf.cpp").is_file()
    with concurrent.futures.ThreadPoolExecutor(max_workers=int(JOBS)) as pool:
        graded = list(pool.map(lambda k: grade_or_zero(recipe, rows[k], args.timeout, cases, sandbox.FIRST_UID + k),
                               range(len(rows))))
    table = []
    for k, ((name, out, _), (doc, reason)) in enumerate(zip(rows, graded)):
        if timed and reason == "":
            doc = performance(recipe, out, args.timeout, doc, sandbox.FIRST_UID + k)
        (out / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
        table.append(csv_row(name, doc, reason, cases, timed))
        print(f"{name}: {doc['score']} / {table[-1][2]}" + (f" ({reason})" if reason else ""))
        if timed and doc.get("performance"):
            print("\n".join(perf.lines(doc["performance"])))
    with open(grades / f"ch{ch}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "points", "max", "reason"] + [n for _, _, n in cases]
                   + (["model score", "measured score", "performance verdict"] if timed else []))
        w.writerows(table)
    print(f"wrote {grades / f'ch{ch}.csv'} and {grades / f'ch{ch}'}/<student>/results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
