#!/usr/bin/python3
"""Scores chapter 9's step 6 against the project's targets, for `make bench`.

    tools/dev/ch09_goals.py RESULTS.json OUT.json

RESULTS.json is what `ch09_matmul --json` wrote. The targets: step 6 at least 100 % of
OpenBLAS at its fastest kernel on this machine, on one thread and on all usable cores,
N = 2048. The chapter times OpenBLAS in turn with step 6 in one process (section 6 of the
program's output), so this scores step 6 against OpenBLAS beside it only; bench_ch09, which
`make bench` runs next, also times OpenBLAS in a process of its own and holds step 6 against
the faster of the two, over several rounds. The chapter prints the ratios; whether they meet
a target is a fact about the project, not the lesson, so it is scored here. Writes OUT.json
and prints one line per target.
"""

from __future__ import annotations

import json
import sys

GOAL_PCT = 100.0
GOAL_N = 2048


def score(results: dict) -> dict:
    versus = results.get("versus") or {}
    out = {"goal_pct": GOAL_PCT, "n": results.get("n"), "n_is_goal_size": results.get("n") == GOAL_N,
           "threads": (results.get("machine") or {}).get("threads"), "targets": {}}
    for slot in ("one_thread", "all_threads"):
        row = versus.get(slot) or {}
        pct = row.get("pct_openblas")
        out["targets"][slot] = {
            "step6_gflops": row.get("step6_gflops"),
            "openblas_gflops": row.get("openblas_gflops"),
            "blis_gflops": row.get("blis_gflops"),
            "pct_of_openblas": pct,
            "pct_of_blis": row.get("pct_blis"),
            # None: not measured (no OpenBLAS, or one thread only), which is neither met nor missed.
            "met": None if pct is None else pct >= GOAL_PCT,
        }
    out["openblas_core"] = (results.get("blas") or {}).get("best_core")
    out["speedup"] = results.get("speedup")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: ch09_goals.py RESULTS.json OUT.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        print(f"ch09_goals.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    scored = score(results)
    with open(argv[2], "w") as f:
        json.dump(scored, f, indent=1)
    for slot, t in scored["targets"].items():
        state = "not measured" if t["met"] is None else "met" if t["met"] else "not met"
        print(f"ch09 {slot}: step 6 {t['pct_of_openblas']} % of OpenBLAS in the same process "
              f"(target {GOAL_PCT:.0f} %): {state}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
