#!/usr/bin/env python3
"""grade_all.py NN DIR [--build BUILD] [--timeout S]: grade every submission in DIR (one
subdirectory per student, holding that student's starter.cpp) with chapter NN's public and
held-back cases. Writes BUILD/grades/chNN.csv (student, points, max, reason, one column per
case) and BUILD/grades/chNN/<student>/results.json (Gradescope's form). Each submission gets its
own grader, built and run under a time limit; one that does not compile, crashes, runs too long
or ends before the grader writes its results scores 0 with the reason, and the batch goes on.
A chapter with an exercise scored for speed (exercises/perf.cpp) also gets each submission's model
and measured score (tools/teaching/perf.py), in results.json and in the CSV's last columns."""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

JOBS = str(os.cpu_count() or 1)  # the kit builds on every CPU

sys.path.insert(0, str(Path(__file__).resolve().parent))
import handout  # noqa: E402  (the instructor's copy is a handout with the held-back cases)
import perf  # noqa: E402  (the performance score of the exercises that ask for speed)


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


def run(cmd, limit, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=limit, **kw)
    except subprocess.TimeoutExpired:
        return None


def first_error(log):
    for line in log.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return log.strip().splitlines()[-1][:300] if log.strip() else "unknown"


def grade_one(kit_build, target, out, limit):
    """The submission's results.json (written to out/results.json) and the reason for a zero."""
    results = out / "results.json"
    results.unlink(missing_ok=True)
    built = run(["cmake", "--build", str(kit_build), "--parallel", JOBS, "--target", target], 600)
    if built is None or built.returncode != 0:
        why = first_error(built.stdout + built.stderr).replace(f"{out}/", "") if built else "compiling took over 600 s"
        return None, "does not compile: " + why
    ran = run([str(kit_build / target), "--results", str(results)], limit, cwd=out)
    if ran is None:
        return None, f"ran longer than {limit} s (an endless loop?)"
    (out / "output.txt").write_text(ran.stdout + ran.stderr)
    if ran.returncode < 0:
        return None, f"crashed (signal {-ran.returncode})"
    if not results.is_file():
        return None, "ended before the grader wrote its results (the submission ended the program?)"
    try:
        return json.loads(results.read_text()), ""
    except json.JSONDecodeError:
        return None, "the grader's results are unreadable (the submission wrote over them?)"


def performance(kit_build, target, out, limit):
    """The submission's model and measured scores, added to its results.json; None if its probe does not build."""
    built = run(["cmake", "--build", str(kit_build), "--parallel", JOBS, "--target", f"probe_{target}"], 600)
    if built is None or built.returncode != 0:
        why = first_error(built.stdout + built.stderr) if built else "compiling took over 600 s"
        print(f"grade-all: {target}'s performance probe does not build, so speed is not scored: {why}",
              file=sys.stderr)
        return None
    scored = perf.score(kit_build / f"probe_{target}", limit=max(limit, 300))
    return perf.add_to_results(out / "results.json", scored)


def zero(results_path, reason, cases):
    doc = {"score": 0, "output": reason,
           "tests": [{"name": n, "score": 0, "max_score": p, "status": "failed", "output": reason} for _, p, n in cases]}
    results_path.write_text(json.dumps(doc, indent=2) + "\n")
    return doc


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
    ch = args.chapter
    grades = (args.build / "grades").resolve()
    kit = handout.write_handout(ch, grades / "kits", instructor=True)
    ex = chdir / "exercises"
    cases = handout.cases_of(ex / "grader.cpp") + handout.cases_of(ex / "held_back.cpp")

    # Each submission: a copy under grades/chNN/<student>/ and a grader target of its own.
    rows, listing, targets = [], [], {}
    for k, student in enumerate(students):
        out = grades / f"ch{ch}" / student.name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        reason = not_cpp(student / "starter.cpp")
        if reason is None:
            shutil.copy(student / "starter.cpp", out / "starter.cpp")
            targets[student.name] = f"student_{k}"
            listing.append(f"student_{k} {out / 'starter.cpp'}")
        rows.append((student.name, out, reason))
    kit_build = grades / "kits" / f"build-ch{ch}"
    (kit / "submissions.txt").write_text("\n".join(listing) + "\n")
    configure = ["cmake", "-S", str(kit), "-B", str(kit_build), f"-DSUBMISSIONS={kit / 'submissions.txt'}",
                 f"-DCMAKE_BUILD_TYPE={args.build_type}"]
    if args.grader_main:
        configure.append(f"-DGRADER_MAIN_LIBRARY={Path(args.grader_main).resolve()}")
    shared = ["cases", "book"] + ([] if args.grader_main else ["grader_main"])  # built once for every submission
    for step in (configure, ["cmake", "--build", str(kit_build), "--parallel", JOBS, "--target"] + shared):
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout + done.stderr, file=sys.stderr)
            print(f"grade-all: the chapter {ch} grader itself does not build (see above)", file=sys.stderr)
            return 1

    timed = (kit / "perf.cpp").is_file()
    table = []
    for name, out, reason in rows:
        doc = None
        if reason is None:
            doc, reason = grade_one(kit_build, targets[name], out, args.timeout)
        if doc is not None and timed:
            doc = performance(kit_build, targets[name], out, args.timeout) or doc
        if doc is None:
            doc = zero(out / "results.json", reason, cases)
        status = {t["name"]: ("skip" if t["max_score"] == 0 else "pass" if t["status"] == "passed" else "fail")
                  for t in doc["tests"]}
        most = sum(t["max_score"] for t in doc["tests"])
        row = [name, doc["score"], most, reason] + [status.get(n, "") for _, _, n in cases]
        if timed:
            p = doc.get("performance")
            row += [p[k]["points"] if p and p[k]["points"] is not None else "" for k in ("model", "measured")]
            row += ["; ".join(p[k]["verdict"] for k in ("model", "measured")) if p else "not scored: no probe"]
        table.append(row)
        print(f"{name}: {doc['score']} / {most}" + (f" ({reason})" if reason else ""))
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
