#!/usr/bin/env python3
"""grade_all.py NN DIR [--build BUILD] [--timeout S]: grade every submission in DIR (one
subdirectory per student, holding that student's starter.cpp) with chapter NN's public and
held-back cases. Writes BUILD/grades/chNN.csv (student, points, max, reason, one column per
case) and BUILD/grades/chNN/<student>/results.json (Gradescope's form).

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
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

JOBS = str(os.cpu_count() or 1)  # the kit builds, and submissions are graded, on every CPU

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


def first_error(log):
    for line in log.splitlines():
        if "error" in line:
            return line.strip()[:300]
    return log.strip().splitlines()[-1][:300] if log.strip() else "unknown"


COMPILE_SECONDS = 600
SUBMISSION = Path("/submission")   # the student's files, read-only in the sandbox


def replayed(line, kit_build, swap):
    """One of the kit's build commands for another submission: `swap` maps words to new ones,
    a path relative to the build becomes absolute, and no compile cache is used."""
    words = shlex.split(line)
    if os.path.basename(words[0]) == "ccache":  # a compile cache cannot be written in the sandbox
        words = words[1:]
    out = []
    for w in words:
        if w in swap:
            out.append(swap[w])
        elif not w.startswith(("-", "/")) and (kit_build / w).is_file():
            out.append(str(kit_build / w))
        else:
            out.append(w)
    return out


class Recipe:
    """How a submission becomes the judge's library (and the speed probe): the kit's own compile
    and link commands for its `submission` and `probe_grader` targets, replayed on the student's file."""

    def __init__(self, kit, kit_build):
        entry = next(e for e in json.loads((kit_build / "compile_commands.json").read_text())
                     if e["file"].endswith("/starter.cpp") and "submission.dir" in e.get("output", e["command"]))
        work = Path(sandbox.WORK)
        self.compile = replayed(entry["command"], kit_build, {entry["file"]: str(SUBMISSION / "starter.cpp")})
        self.compile[self.compile.index("-o") + 1] = str(work / "starter.o")
        self.link = self.link_of(kit_build, "submission", str(work / "starter.o"), str(work / "libsubmission.so"))
        self.kit_build = kit_build
        self.judge = kit_build / "judge"
        # What a submission's build may read: the book's files and exercise.hpp; not the cases, not perf.cpp.
        self.build_files = {kit / "book": kit / "book", kit / "exercise.hpp": kit / "exercise.hpp"}
        self.build_files |= {Path(w): Path(w) for w in self.link if w.startswith(str(kit_build))}
        self.perf = kit / "perf.py" if (kit / "perf.cpp").is_file() else None

    @staticmethod
    def link_of(kit_build, target, starter_object, output):
        link_txt = kit_build / "CMakeFiles" / f"{target}.dir" / "link.txt"
        line = link_txt.read_text().splitlines()[0]
        words = replayed(line, kit_build, {})
        words = [starter_object if w.endswith("starter.cpp.o") else w for w in words]
        words[words.index("-o") + 1] = output
        return words

    def build(self, starter, folder, limit, uid):
        """Compiles and links the submission in the sandbox into `folder` (no code of it runs there)."""
        folder.mkdir(exist_ok=True)
        script = f"{shlex.join(self.compile)} && {shlex.join(self.link)}"
        return sandbox.run(["sh", "-c", script], self.build_files | {starter: SUBMISSION / "starter.cpp"}, limit,
                           writable=folder, uid=uid)

    def judged(self, library, limit, uid):
        """The judge's run on the submission's library: the results arrive on its stdout."""
        files = {self.judge: self.judge, library: SUBMISSION / "libsubmission.so"}
        output = f"{sandbox.WORK}/output.txt"
        script = (f"{shlex.join([str(self.judge), '--judge', str(SUBMISSION / 'libsubmission.so'), '--output', output])}\n"
                  f"rc=$?\ncat {output} >&2\nexit $rc\n")
        return sandbox.run(["sh", "-c", script], files, limit, uid=uid)

    def probe(self, folder):
        """Links the speed probe from the submission's object (outside the sandbox: no code of it runs)."""
        link = self.link_of(self.kit_build, "probe_grader", str(folder / "starter.o"), str(folder / "probe"))
        done = subprocess.run(link, capture_output=True, text=True, cwd=self.kit_build)
        return folder / "probe" if done.returncode == 0 else None


def grade_one(recipe, starter, out, limit, uid):
    """The submission's results (the judge's, read from the one channel the submission cannot
    write) and the reason for a zero."""
    built = recipe.build(starter, out / "build", COMPILE_SECONDS, uid)
    if built is None or built.returncode != 0:
        log = (built.stdout + built.stderr).replace(str(SUBMISSION / "starter.cpp"), "starter.cpp") if built else ""
        (out / "output.txt").write_text(log[-200_000:])
        return None, "does not compile: " + (first_error(log) if built else f"compiling took over {COMPILE_SECONDS} s")
    ran = recipe.judged(out / "build" / "libsubmission.so", limit, uid)
    if ran is None:
        return None, f"ran longer than {limit:g} s (an endless loop?)"
    (out / "output.txt").write_text(ran.stderr[-200_000:])
    try:
        doc = json.loads(ran.stdout.strip().splitlines()[-1]) if ran.stdout.strip() else None
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list):
        return None, f"the grader ended without its results (exit status {ran.returncode})"
    return doc, ""


def performance(recipe, out, limit, doc, uid):
    """The submission's model and measured scores, added to its results; unchanged if its probe does not build."""
    probe = recipe.probe(out / "build")
    if probe is None:
        print(f"grade-all: {out.name}'s performance probe does not link, so speed is not scored", file=sys.stderr)
        return doc
    files = {probe: SUBMISSION / "probe", recipe.perf: SUBMISSION / "perf.py"}
    ran = sandbox.run(["python3", str(SUBMISSION / "perf.py"), "--probe", str(SUBMISSION / "probe"), "--json",
                       "--limit", str(max(limit, 300))], files, 3600, uid=uid)
    try:
        scored = json.loads(ran.stdout.strip().splitlines()[-1])
    except (AttributeError, IndexError, json.JSONDecodeError):
        why = "took over an hour" if ran is None else (ran.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"grade-all: {out.name}'s speed was not scored: {why}", file=sys.stderr)
        return doc
    return perf.add_to_doc(doc, scored)


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
    _, out, reason = row
    doc = None
    if reason is None:
        doc, reason = grade_one(recipe, out / "starter.cpp", out, limit, uid)
    return (doc, "") if doc is not None else (zero(reason, cases), reason)


def build_judge(kit, kit_build, args):
    """Configures the instructor's kit and builds what every submission shares: the book, the judge
    (the cases), and the kit's own submission library, whose commands each submission replays."""
    configure = ["cmake", "-S", str(kit), "-B", str(kit_build), f"-DCMAKE_BUILD_TYPE={args.build_type}"]
    if args.grader_main:
        configure.append(f"-DGRADER_MAIN_LIBRARY={Path(args.grader_main).resolve()}")
    shared = ["judge", "submission"] + (["perf_main", "probe_grader"] if (kit / "perf.cpp").is_file() else [])
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
