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
import concurrent.futures
import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

JOBS = str(os.cpu_count() or 1)  # the kit builds on every CPU

sys.path.insert(0, str(Path(__file__).resolve().parent))
import handout  # noqa: E402  (the instructor's copy is a handout with the held-back cases)
import perf  # noqa: E402  (the performance score of the exercises that ask for speed)
import sandbox  # noqa: E402  (the fence around every build and run of a submission)


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


COMPILE_SECONDS = 600
INSIDE_STARTER = "/submission/starter.cpp"   # the student's file, read-only in the sandbox


class Recipe:
    """How a submission becomes the judge's library: the kit's own compile and link commands for
    its `submission` target, replayed inside the sandbox on the student's starter.cpp."""

    def __init__(self, kit, kit_build):
        entry = next(e for e in json.loads((kit_build / "compile_commands.json").read_text())
                     if e["file"].endswith("/starter.cpp") and "submission.dir" in e.get("output", e["command"]))
        words = shlex.split(entry["command"])
        if os.path.basename(words[0]) == "ccache":  # a compile cache cannot be written in the sandbox
            words = words[1:]
        self.compile = [INSIDE_STARTER if w == entry["file"] else w for w in words]
        self.compile[self.compile.index("-o") + 1] = f"{sandbox.WORK}/starter.o"
        link = shlex.split((kit_build / "CMakeFiles" / "submission.dir" / "link.txt").read_text().splitlines()[0])
        self.link = [self.inside_link(w, kit_build) for w in link]
        self.link[self.link.index("-o") + 1] = f"{sandbox.WORK}/libsubmission.so"
        self.judge = kit_build / "judge"
        # What a submission may read: the book's files and exercise.hpp; not the cases, not perf.cpp.
        self.files = {kit / "book": kit / "book", kit / "exercise.hpp": kit / "exercise.hpp", self.judge: self.judge}
        self.files |= {Path(w): Path(w) for w in self.link if w.startswith(str(kit_build))}

    @staticmethod
    def inside_link(word, kit_build):
        if word.endswith("starter.cpp.o"):
            return f"{sandbox.WORK}/starter.o"
        return str(kit_build / word) if (kit_build / word).is_file() and not word.startswith("/") else word

    def script(self, limit):
        """Compile, link, then judge: only the judge writes on stdout (the results)."""
        q = shlex.join
        return (f"timeout -s KILL {COMPILE_SECONDS} {q(self.compile)} >&2 || exit 3\n"
                f"timeout -s KILL {COMPILE_SECONDS} {q(self.link)} >&2 || exit 3\n"
                f"timeout -s KILL {limit} {q([str(self.judge), '--judge', sandbox.WORK + '/libsubmission.so', '--output', sandbox.WORK + '/output.txt'])}\n"
                f"rc=$?\ncat {sandbox.WORK}/output.txt >&2\nexit $rc\n")


def grade_one(recipe, starter, out, limit):
    """The submission's results (the judge's, read from the one channel the submission cannot
    write) and the reason for a zero."""
    files = recipe.files | {starter: Path(INSIDE_STARTER)}
    ran = sandbox.run(["sh", "-c", recipe.script(limit)], files, COMPILE_SECONDS * 2 + limit + 30)
    if ran is None:
        return None, f"ran longer than {COMPILE_SECONDS * 2 + limit} s with its build"
    log = ran.stderr.replace(f"{INSIDE_STARTER}", "starter.cpp")
    (out / "output.txt").write_text(log[-200_000:])
    if ran.returncode == 3:
        return None, "does not compile: " + first_error(log)
    if ran.returncode == 137 or ran.returncode == -9:
        return None, f"ran longer than {limit} s (an endless loop?)"
    try:
        doc = json.loads(ran.stdout.strip().splitlines()[-1]) if ran.stdout.strip() else None
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list):
        return None, f"the grader ended without its results (exit status {ran.returncode})"
    return doc, ""


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


def grade_or_zero(recipe, row, limit, cases):
    _, out, reason = row
    doc = None
    if reason is None:
        doc, reason = grade_one(recipe, out / "starter.cpp", out, limit)
    return (doc, "") if doc is not None else (zero(reason, cases), reason)


def build_judge(kit, kit_build, args):
    """Configures the instructor's kit and builds what every submission shares: the book, the judge
    (the cases), and the kit's own submission library, whose commands each submission replays."""
    configure = ["cmake", "-S", str(kit), "-B", str(kit_build), f"-DCMAKE_BUILD_TYPE={args.build_type}"]
    if args.grader_main:
        configure.append(f"-DGRADER_MAIN_LIBRARY={Path(args.grader_main).resolve()}")
    shared = ["judge", "submission"] + (["perf_main"] if (kit / "perf.cpp").is_file() else [])
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
        graded = list(pool.map(lambda row: grade_or_zero(recipe, row, args.timeout, cases), rows))
    table = []
    for (name, out, _), (doc, reason) in zip(rows, graded):
        if timed and reason == "":
            doc = performance(kit_build, recipe, out, args.timeout, doc)
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
