#!/usr/bin/env python3
"""perf_test.py rules | slow WORK [GRADER_LIB]: the performance score (tools/teaching/perf.py).

rules: on fake probes, the verdicts: a reference that differs from itself by more than the margin
gives "inconclusive, re-run" with the reason, and results.json leaves that part out of the total
(0 of 0), never a zero; a quiet machine gives the speed-up and its points; the model places the
misses between the baseline's and the reference's.

slow: `make grade-all` on chapters 5 and 9 with two submissions each, the reference solution and a
correct but deliberately slow one (tests/fixtures/slow/): both are correct, and the slow one scores
lower than the reference on the model score and on the measured score (a measured test: an
inconclusive verdict fails this attempt, and ctest's timing label gives it more); and Gradescope's
run_autograder, in chapter 5's instructor kit, adds both parts to results.json."""
import json
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "teaching"))
import perf  # noqa: E402

problems = []


def fake_probe(folder, reference, again, submission):
    path = folder / "probe"
    path.write_text("#!/bin/sh\n"
                    f"echo '{json.dumps({'reference': reference, 'reference_again': again, 'submission': submission})}'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def measured(tmp, reference, again, submission):
    """The measured part from a fake timer (it stands for the submission's probe too)."""
    timer = fake_probe(tmp, reference, again, submission)
    return perf.measured_score(timer, timer, 30)


def rules():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        busy = measured(tmp, [1.0, 1.1], [1.3, 1.4], [0.9, 1.0])
        if busy["points"] is not None or busy["attempts"] != perf.ATTEMPTS or not busy["verdict"].startswith(
                "inconclusive, re-run: the reference against itself differed by 30%"):
            problems.append(f"busy machine: {busy}")
        quiet = measured(tmp, [1.0, 1.2], [1.02, 1.1], [2.0, 2.5])
        if quiet["points"] != 0.0 or quiet["speedup"] != 0.5:
            problems.append(f"half the reference's speed: {quiet}")
        fast = measured(tmp, [1.0], [1.0], [0.8])
        if fast["points"] != perf.POINTS:
            problems.append(f"faster than the reference: {fast}")
        middle = measured(tmp, [1.0], [1.0], [1.0 / 0.675])
        if abs(middle["points"] - perf.POINTS / 2) > 0.01:
            problems.append(f"a speed-up of 0.675, halfway: {middle}")
        wrong = tmp / "wrong"
        wrong.write_text("#!/bin/sh\necho '{\"problem\": \"the particles differ\"}'\n")
        wrong.chmod(0o755)
        refused = perf.measured_score(wrong, wrong, 30)
        if refused.get("points") != 0.0 or refused["attempts"] != 1 or "the particles differ" not in refused["verdict"]:
            problems.append(f"a wrong result the timer found: {refused}")
        results = tmp / "results.json"
        results.write_text(json.dumps({"score": 3, "tests": [{"name": "exercise 1: x", "score": 3, "max_score": 3}]}))
        model = {"max": 2, "points": 1.5, "verdict": "v", "misses": {}}
        doc = perf.add_to_results(results, {"correct": True, "model": model, "measured": busy})
        last = doc["tests"][-1]
        if doc["score"] != 4.5 or last["max_score"] != 0 or "inconclusive, re-run" not in last["output"]:
            problems.append(f"results.json with an inconclusive measurement: {doc}")


def slow_submission(ch, out):
    """The correct but slow submission to chapter CH (tests/fixtures/slow/), written to OUT."""
    subprocess.run(["/usr/bin/python3", str(ROOT / "tests" / "fixtures" / "slow" / "slow_submission.py"), ch, str(out)],
                   check=True)


def grade(ch, work, lib):
    subs = work / f"ch{ch}"
    (subs / "reference").mkdir(parents=True)
    shutil.copy(next(ROOT.glob(f"chapters/{ch}_*/exercises/solution.cpp")), subs / "reference" / "starter.cpp")
    (subs / "slow").mkdir()
    slow_submission(ch, subs / "slow" / "starter.cpp")
    cmd = ["/usr/bin/python3", str(ROOT / "tools" / "teaching" / "grade_all.py"), ch, str(subs),
           "--build", str(work / "build")] + (["--grader-main", lib] if lib else [])
    done = subprocess.run(cmd, capture_output=True, text=True)
    print(done.stdout)
    if done.returncode != 0:
        problems.append(f"ch{ch}: grade-all failed: {done.stderr[-1000:]}")
        return
    got = {n: json.loads((work / "build" / "grades" / f"ch{ch}" / n / "results.json").read_text())["performance"]
           for n in ("reference", "slow")}
    for part in ("model", "measured"):
        ref, slow = got["reference"][part], got["slow"][part]
        if ref["points"] is None or slow["points"] is None:
            problems.append(f"ch{ch} {part} score not given: reference '{ref['verdict']}', slow '{slow['verdict']}'")
        elif not slow["points"] < ref["points"]:
            problems.append(f"ch{ch} {part} score: slow {slow['points']} ({slow['verdict']}), "
                            f"reference {ref['points']} ({ref['verdict']})")


def autograder(work):
    """Gradescope's run_autograder in chapter 5's instructor kit adds both parts to results.json.
    The kit is the one grade-all wrote and built for chapter 5 (the same kit, built the same way):
    its build directory, linked where run_autograder builds, is up to date, so nothing compiles again."""
    kits = work / "build" / "grades" / "kits"
    kit = kits / "ch05"
    if not (kits / "build-ch05" / "CMakeCache.txt").is_file():
        problems.append("run_autograder not tried: grade-all built no chapter 5 kit")
        return
    (kit / "build").symlink_to(kits / "build-ch05")
    (work / "kit-submission").mkdir()
    slow_submission("05", work / "kit-submission" / "starter.cpp")
    results = work / "kit-results.json"
    subprocess.run([str(kit / "run_autograder"), str(work / "kit-submission"), str(results)], capture_output=True)
    doc = json.loads(results.read_text()) if results.is_file() else {}
    names = [t["name"] for t in doc.get("tests", [])]
    perf_part = doc.get("performance", {})
    if not any(n.startswith("performance: model") for n in names) or perf_part.get("model", {}).get("points") != 0.0:
        problems.append(f"run_autograder's results.json lacks the slow submission's model score: {perf_part or doc}")


if sys.argv[1] == "rules":
    rules()
else:
    if shutil.which("valgrind") is None:
        print("perf: skipped: the model score needs valgrind (lackey), and this machine has none")
        sys.exit(77)
    work = Path(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for ch in ("05", "09"):
        grade(ch, work, sys.argv[3] if len(sys.argv) > 3 else "")
    autograder(work)
for p in problems:
    print(p)
print("perf: " + ("ok" if not problems else f"{len(problems)} problems"))
sys.exit(1 if problems else 0)
