#!/usr/bin/env python3
"""grade_one.py KIT BUILD STARTER OUT [--timeout S]: grade one submission with an instructor's kit
(tools/teaching/handout.py --instructor) whose judges are built in BUILD (cmake --build BUILD --target
judge judge_held_back submission, and perf_main probe_grader for an exercise scored for speed). Writes OUT/results.json
(Gradescope's form) and OUT/output.txt (the public judge's report and what the
submission printed in the public cases' calls). grade_all.py grades a class with the same functions, and
the Gradescope kit's run_autograder runs this file.

The submission is compiled and linked in the sandbox (sandbox.py) into a shared library; two
judges, the public cases' and then the held-back ones', each in a sandbox of its own, run the cases
and call it in a child process per call (grader/judge.hpp); their results arrive on the judges'
stdout, which no child holds, and this script writes results.json. Nothing the held-back judge's
calls print reaches OUT."""
import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perf  # noqa: E402  (the performance score of the exercises that ask for speed)
import sandbox  # noqa: E402  (the fence around every build and run of a submission)

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
        self.judge = kit_build / "judge"  # the public cases
        self.held_back_judge = kit_build / "judge_held_back"  # the held-back ones
        # What a submission's build may read: the book's files and exercise.hpp; not the cases, not perf.cpp.
        self.build_files = {kit / "book": kit / "book", kit / "exercise.hpp": kit / "exercise.hpp"}
        self.build_files |= {Path(w): Path(w) for w in self.link if w.startswith(str(kit_build))}
        self.perf = kit / "perf.py" if (kit / "perf.cpp").is_file() else None

    @staticmethod
    def link_of(kit_build, target, starter_object, output):
        link_txt = kit_build / "CMakeFiles" / f"{target}.dir" / "link.txt"
        line = link_txt.read_text().splitlines()[0]
        words = replayed(line, kit_build, {})
        if not any(w.endswith("starter.cpp.o") for w in words):
            raise RuntimeError(f"{link_txt} links no starter.cpp.o")
        words = [starter_object if w.endswith("starter.cpp.o") else w for w in words]
        words[words.index("-o") + 1] = output
        return words

    def build(self, starter, folder, limit, uid):
        """Compiles and links the submission in the sandbox into `folder` (no code of it runs there)."""
        folder.mkdir(exist_ok=True)
        script = f"{shlex.join(self.compile)} && {shlex.join(self.link)}"
        return sandbox.run(["sh", "-c", script], self.build_files | {starter: SUBMISSION / "starter.cpp"}, limit,
                           writable=folder, uid=uid)

    def judged(self, judge, library, limit, uid, output=None):
        """One judge's run on the submission's library, in a sandbox of its own: its results arrive
        on stdout; its report, and what the calls print into `output` (else nowhere), on stderr."""
        lib = str(SUBMISSION / "libsubmission.so")
        inside = f"{sandbox.WORK}/output.txt" if output else "/dev/null"
        script = f"{shlex.join([str(judge), '--judge', lib, '--output', inside])}\nrc=$?\n"
        script += f"cat {inside} >&2\nexit $rc\n" if output else "exit $rc\n"
        return sandbox.run(["sh", "-c", script], {judge: judge, library: lib}, limit, uid=uid)

    def probe(self, folder):
        """Links the speed probe from the submission's object (outside the sandbox: no code of it runs)."""
        link = self.link_of(self.kit_build, "probe_grader", str(folder / "starter.o"), str(folder / "probe"))
        done = subprocess.run(link, capture_output=True, text=True, cwd=self.kit_build)
        return folder / "probe" if done.returncode == 0 else None


def grade_one(recipe, starter, out, limit, uid=sandbox.NOBODY, held_back_report=None):
    """The submission's results (the judges', read from the one channel the submission cannot
    write) and the reason for a zero. The public judge's report and what the submission prints in
    its calls go to out/output.txt; the held-back judge runs in a sandbox of its own, after it, and
    its report (which may hold the held-back inputs) goes only to `held_back_report`, if given."""
    built = recipe.build(starter, out / "build", COMPILE_SECONDS, uid)
    if built is None or built.returncode != 0:
        log = (built.stdout + built.stderr).replace(str(SUBMISSION / "starter.cpp"), "starter.cpp") if built else ""
        (out / "output.txt").write_text(log[-200_000:])
        return None, "does not compile: " + (first_error(log) if built else f"compiling took over {COMPILE_SECONDS} s")
    library = out / "build" / "libsubmission.so"
    public = recipe.judged(recipe.judge, library, limit, uid, output=True)
    if public is not None:
        (out / "output.txt").write_text(public.stderr[-200_000:])
    held_back = recipe.judged(recipe.held_back_judge, library, limit, uid) if public is not None else None
    if held_back is not None and held_back_report:
        Path(held_back_report).parent.mkdir(parents=True, exist_ok=True)
        Path(held_back_report).write_text(held_back.stderr[:1_000_000])  # its start: the first failures
    if public is None or held_back is None:
        return None, f"ran longer than {limit:g} s (an endless loop?)"
    docs = [results_of(ran) for ran in (public, held_back)]
    if None in docs:
        ran = public if docs[0] is None else held_back
        return None, f"the grader ended without its results (exit status {ran.returncode})"
    return {"score": docs[0]["score"] + docs[1]["score"], "tests": docs[0]["tests"] + docs[1]["tests"]}, ""


def results_of(ran):
    """A judge's results: the one line of its stdout, or None where there is not exactly one."""
    lines = ran.stdout.strip().splitlines()
    return results_line(lines[0]) if len(lines) == 1 else None


def results_line(line):
    """One judge's results, or None where the line is not them."""
    try:
        doc = json.loads(line)
    except json.JSONDecodeError:
        return None
    ok = isinstance(doc, dict) and isinstance(doc.get("tests"), list) and isinstance(doc.get("score"), int)
    return doc if ok else None


def performance(recipe, out, limit, doc, uid=sandbox.NOBODY):
    """The submission's model and measured scores, added to its results; unchanged if its probe does not build."""
    probe = recipe.probe(out / "build")
    if probe is None:
        print(f"grade-all: {out.name}'s performance probe does not link, so speed is not scored", file=sys.stderr)
        return doc
    # The kit's own probe (no code of the submission in it) times the submission's probe from outside.
    timer = recipe.kit_build / "probe_grader"
    files = {probe: SUBMISSION / "probe", timer: SUBMISSION / "timer", recipe.perf: SUBMISSION / "perf.py"}
    ran = sandbox.run(["python3", str(SUBMISSION / "perf.py"), "--probe", str(SUBMISSION / "probe"),
                       "--timer", str(SUBMISSION / "timer"), "--json", "--limit", str(max(limit, 300))],
                      files, 3600, uid=uid)
    try:
        scored = json.loads(ran.stdout.strip().splitlines()[-1])
    except (AttributeError, IndexError, json.JSONDecodeError):
        why = "took over an hour" if ran is None else (ran.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"grade-all: {out.name}'s speed was not scored: {why}", file=sys.stderr)
        return doc
    return perf.add_to_doc(doc, scored)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kit", type=Path)
    ap.add_argument("build", type=Path)
    ap.add_argument("starter", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds the judge may run")
    args = ap.parse_args()
    if not (args.build / "judge").is_file():
        print(f"grade-one: no judge in {args.build} (cmake --build {args.build} --target judge judge_held_back submission)",
              file=sys.stderr)
        return 2
    unfenced = sandbox.check()
    if unfenced:
        print(f"grade-one: {unfenced}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    recipe = Recipe(args.kit.resolve(), args.build.resolve())
    doc, reason = grade_one(recipe, args.starter.resolve(), args.out.resolve(), args.timeout)
    if doc is None:
        doc = {"score": 0, "output": reason, "tests": []}
    elif recipe.perf:
        doc = performance(recipe, args.out.resolve(), args.timeout, doc)
    (args.out / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    most = sum(t["max_score"] for t in doc["tests"])
    print(f"score: {doc['score']} / {most}" + (f" ({reason})" if reason else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
