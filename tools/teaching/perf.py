#!/usr/bin/env python3
"""perf.py: the performance score of the exercises that ask for speed (chapter 5's layout,
chapter 9's kernel), from a probe built with the submission (exercises/perf.cpp and
tools/teaching/perf/perf_probe_main.cpp). Two parts, each worth POINTS:

- the model score, as the CS:APP cache lab scores its transpose: the probe runs the reference,
  the baseline (the starter's naive way) and the submission once each under valgrind's lackey;
  the accesses of each run go through the book's cache model (the cache the probe names), and
  the submission's misses are placed between the baseline's (0 points) and the reference's (all);
- the measured score: the reference and the submission timed in turn (the reference, the
  submission, the reference again, ROUNDS times, each round on inputs of its own from a seed the
  timing process draws), the minimum of each. The timing process is the kit's own probe (the
  timer, linked with the unwritten starter): it times the reference by its thread's CPU clock,
  runs the submission in a process of its own that may start no other, reads that process's CPU
  clock from outside, and checks every result the submission sends back; a wrong or missing
  result scores 0 on both parts. The speed-up is the reference's minimum over the submission's. A speed-up of
  FULL_AT or more gets all the points, ZERO_AT or less none, linear between. When the reference
  against itself differs by more than MARGIN the machine is too busy to tell: the timing is made
  again, up to ATTEMPTS times, and then the verdict is "inconclusive, re-run" with that reason,
  and the part is left out of the total, never a zero.

In a kit:      perf.py --timer build/probe_grader --probe SUBMISSION_PROBE --results results.json   (adds both parts)
In the book:   perf.py --chapter NN --file starter.cpp [--build BUILD]      (prints both parts)"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

POINTS = 2          # each part
FULL_AT = 0.85      # speed-up for all of the measured points (below 1: as fast as the reference, within MARGIN)
ZERO_AT = 0.5       # ... and for none
MARGIN = 0.10       # the most the reference may differ from itself before the machine is too busy
ROUNDS = 15
ATTEMPTS = 3        # timings in a row before the verdict is "inconclusive, re-run"


def run(cmd, limit, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=limit, **kw)
    except subprocess.TimeoutExpired:
        return None


def traced_accesses(probe, which, work, limit):
    """Runs `probe trace which` under lackey; writes the run's data accesses to work/which.trace."""
    log = work / f"{which}.lackey"
    done = run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}", str(probe), "trace", which], limit)
    if done is None:
        raise RuntimeError(f"the {which} run under valgrind took over {limit} s")
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"the {which} run under valgrind failed: {(done.stderr or done.stdout).strip()[-200:]}")
    marker = int(done.stdout.split()[0], 16)
    trace, inside, marks = work / f"{which}.trace", False, 0
    with open(log) as src, open(trace, "w") as out:
        for line in src:
            if len(line) < 4 or line[0] != " " or line[1] not in "LSM":
                continue
            address = int(line[3:].split(",")[0], 16)
            if line[1] == "S" and address == marker:
                marks += 1
                inside = marks == 1
                continue
            if inside:
                out.write(line)
    log.unlink()
    if marks < 2:
        raise RuntimeError(f"the {which} run's trace has no end marker")
    return trace


def model_score(timer, probe, work, limit):
    """The baseline and the reference are traced in the timer, the submission in its own probe;
    the timer simulates the cache."""
    spec = json.loads(run([str(timer), "spec"], 30).stdout)
    cache = {k: spec[k] for k in ("s", "E", "b")}
    part = {"max": POINTS, "cache": cache, "misses": {}}
    if shutil.which("valgrind") is None:
        return part | {"points": None, "verdict": "not scored: valgrind is not installed (the model score traces the runs with its lackey tool)"}
    try:
        for which in ("baseline", "reference", "submission"):
            trace = traced_accesses(probe if which == "submission" else timer, which, work, limit)
            with open(trace) as src:
                sim = run([str(timer), "simulate", str(cache["s"]), str(cache["E"]), str(cache["b"])], limit, stdin=src)
            part["misses"][which] = json.loads(sim.stdout)["misses"]
    except (RuntimeError, ValueError, AttributeError) as e:
        return part | {"points": 0.0, "verdict": f"the submission could not be traced: {e}"}
    m = part["misses"]
    if m["baseline"] <= m["reference"]:
        return part | {"points": None, "verdict": "not scored: the baseline misses no more than the reference here"}
    share = min(1.0, max(0.0, (m["baseline"] - m["submission"]) / (m["baseline"] - m["reference"])))
    return part | {"points": round(POINTS * share, 2), "verdict":
                   f"{m['submission']} misses in the model's cache (s={cache['s']}, E={cache['E']}, b={cache['b']}): "
                   f"the naive way {m['baseline']}, the reference {m['reference']}"}


def measured_score(timer, probe, limit, rounds=ROUNDS, attempts=ATTEMPTS):
    """The measured part: up to `attempts` timings, the first the machine was quiet enough for."""
    for attempt in range(1, attempts + 1):
        part = timed_once(timer, probe, limit, rounds)
        if part["points"] is not None:
            break
    part["attempts"] = attempt
    if part["points"] is None and attempts > 1:
        part["verdict"] += f" ({attempts} attempts)"
    return part


def timed_once(timer, probe, limit, rounds):
    """One timing by the timer of the submission's probe. The timer alone holds no code of the
    submission, so its failing, or a problem it reports, is the submission's doing: 0 points."""
    part = {"max": POINTS, "rule": f"speed-up {FULL_AT} or more: {POINTS} points; {ZERO_AT} or less: 0; linear between",
            "margin": MARGIN}
    done = run([str(timer), "time", str(rounds), str(probe)], limit)
    if done is None or done.returncode != 0:
        return part | {"points": 0.0, "problem": True, "verdict": "not scored for speed: the timed runs "
                       + ("took over the time limit" if done is None else "failed: " + done.stderr.strip()[-200:])}
    try:
        t = json.loads(done.stdout)
    except json.JSONDecodeError:
        return part | {"points": 0.0, "problem": True, "verdict": "not scored for speed: the timer's output is not its JSON"}
    if "problem" in t:
        return part | {"points": 0.0, "problem": True, "verdict": f"not correct, so not scored for speed: {t['problem']}"}
    ref, again, sub = min(t["reference"]), min(t["reference_again"]), min(t["submission"])
    noise = max(ref, again) / min(ref, again) - 1.0
    part |= {"reference_s": ref, "reference_again_s": again, "submission_s": sub, "noise": round(noise, 4)}
    if noise > MARGIN:
        return part | {"points": None, "verdict": f"inconclusive, re-run: the reference against itself differed by "
                       f"{noise:.0%} (more than {MARGIN:.0%}): the machine is too busy to tell"}
    speedup = min(ref, again) / sub
    share = min(1.0, max(0.0, (speedup - ZERO_AT) / (FULL_AT - ZERO_AT)))
    return part | {"speedup": round(speedup, 3), "points": round(POINTS * share, 2),
                   "verdict": f"{speedup:.2f} times the reference's speed (minimum of {rounds} runs each)"}


def score(probe, limit=300, rounds=ROUNDS, timer=None):
    """Both parts for the probe's submission, timed by `timer` (the kit's own probe; in the book,
    the probe itself); an incorrect submission gets 0 on both. The probe's own check runs in the
    submission's process, so only the timer's check of the timed results is trusted."""
    probe = Path(probe).resolve()
    timer = Path(timer).resolve() if timer else probe
    checked = run([str(probe), "check"], limit)
    if checked is None or checked.returncode != 0:
        why = "its check ran too long" if checked is None else (checked.stdout + checked.stderr).strip()[-300:]
        return not_correct(f"not correct, so not scored for speed: {why}")
    measured = measured_score(timer, probe, limit, rounds)
    if measured.pop("problem", False):
        return not_correct(measured["verdict"])
    with tempfile.TemporaryDirectory(prefix="perf-") as work:
        model = model_score(timer, probe, Path(work), limit)
    return {"correct": True, "model": model, "measured": measured}


def not_correct(verdict):
    zero = {"max": POINTS, "points": 0.0, "verdict": verdict}
    return {"correct": False, "model": dict(zero), "measured": dict(zero)}


def add_to_results(results_path, perf):
    """results.json (Gradescope's form) gains both parts (add_to_doc)."""
    doc = add_to_doc(json.loads(Path(results_path).read_text()), perf)
    Path(results_path).write_text(json.dumps(doc, indent=2) + "\n")
    return doc


def add_to_doc(doc, perf):
    """Results in Gradescope's form gain both parts as tests and the whole under `performance`.
    A part not scored (inconclusive, or no valgrind) counts 0 of 0: left out of the total, never a
    zero. Each part's points are kept within 0 to POINTS, whatever the figures behind them."""
    for name, key in (("performance: model score (simulated misses)", "model"),
                      ("performance: measured score (speed-up over the reference)", "measured")):
        part = perf[key]
        scored = isinstance(part.get("points"), (int, float))
        points = min(POINTS, max(0, part["points"])) if scored else 0
        doc["tests"].append({"name": name, "score": points, "max_score": POINTS if scored else 0,
                             "status": "passed" if points > 0 else "failed",
                             "output": str(part.get("verdict", "")), "visibility": "after_published"})
    total = round(sum(t["score"] for t in doc["tests"]), 2)
    doc["score"] = int(total) if total == int(total) else total
    doc["performance"] = perf
    return doc


def lines(perf):
    out = []
    for key, title in (("model", "model score"), ("measured", "measured score")):
        p = perf[key]
        got = "-" if p["points"] is None else p["points"]
        out.append(f"  {title}: {got} / {p['max']}: {p['verdict']}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe", type=Path, help="a built probe of the submission (in a kit)")
    ap.add_argument("--timer", type=Path, help="the kit's own probe, which times the submission's (default: --probe)")
    ap.add_argument("--results", type=Path, help="results.json to add both parts to")
    ap.add_argument("--chapter", help="in the book: the chapter whose exercises/perf.cpp scores FILE")
    ap.add_argument("--file", type=Path, help="in the book: the starter.cpp to score")
    ap.add_argument("--build", type=Path, default=Path("build"))
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--limit", type=float, default=300, help="seconds each run of the probe may take")
    ap.add_argument("--json", action="store_true", help="print both parts as one line of JSON (grade_all.py reads it)")
    args = ap.parse_args()
    probe = args.probe
    if args.chapter:
        probe = build_probe(args.chapter, args.file, args.build)
        if probe is None:
            return 1
    if probe is None:
        print("perf: give --probe, or --chapter and --file", file=sys.stderr)
        return 2
    perf = score(probe, limit=args.limit, rounds=args.rounds, timer=args.timer)
    if args.json:
        print(json.dumps(perf))
        return 0
    print("performance:")
    print("\n".join(lines(perf)))
    if args.results:
        add_to_results(args.results, perf)
    return 0


def build_probe(chapter, file, build):
    """In the book: an instructor's kit of the chapter with `file` as its starter, and its probe built."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import handout  # noqa: E402
    kit = handout.write_handout(chapter, (build / "perf").resolve(), instructor=True)
    shutil.copy(file, kit / "starter.cpp")
    kit_build = kit / "build"
    for step in (["cmake", "-S", str(kit), "-B", str(kit_build), "-DCMAKE_BUILD_TYPE=Release"],
                 ["cmake", "--build", str(kit_build), "--target", "probe_grader"]):
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stdout[-2000:] + done.stderr[-2000:], file=sys.stderr)
            print("perf: the probe does not build (see above)", file=sys.stderr)
            return None
    return kit_build / "probe_grader"


if __name__ == "__main__":
    sys.exit(main())
