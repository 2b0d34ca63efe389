#!/usr/bin/python3
"""The build's and the chapters' wall and CPU times, for `make bench`: the ratios it measures
beside how long this machine took today, so that a slow day shows as a slow day.

    bench_times.py build BUILD JOBS OUT.json TARGET...   cmake --build BUILD of TARGETs (all when none), timed
    bench_times.py chapters BUILD OUT.json CHAPTER...    each chapter's default run (tools/dev/chapter_runs.py,
                                                        which keeps it: make book shows it), timed
    bench_times.py print OUT.json                       the table

OUT.json gathers "build" (wall and CPU seconds, the compile and link steps that ran), "chapters"
(per chapter: wall and CPU seconds, and their sum) and the load average before and after each part.
CPU time is the children's user + system time: above the wall time, the run used more than one core.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def load(out: Path) -> dict:
    return json.loads(out.read_text()) if out.exists() else {}


def save(out: Path, data: dict) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2) + "\n")


def cpu_of_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def loadavg() -> float:
    return round(os.getloadavg()[0], 2)


def time_build(build: Path, jobs: str, out: Path, targets: list[str]) -> int:
    cmd = ["cmake", "--build", str(build), "-j", jobs] + (["--target"] + targets if targets else [])
    load_before, cpu0, start = loadavg(), cpu_of_children(), time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall, cpu = time.monotonic() - start, cpu_of_children() - cpu0
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        return r.returncode
    steps = len(re.findall(r"^\[[1-9]\d*/\d+\]", r.stdout, flags=re.M))  # [0/N] is the glob check
    data = load(out)
    data["build"] = {"command": " ".join(cmd), "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
                     "steps_run": steps, "load_before": load_before, "load_after": loadavg()}
    save(out, data)
    return 0


def time_chapters(build: Path, out: Path, chapters: list[str]) -> int:
    data = load(out)
    rows, load_before = {}, loadavg()
    for ch in chapters:
        r = subprocess.run(["/usr/bin/python3", str(ROOT / "tools" / "dev" / "chapter_runs.py"), "run",
                            str(build / "bin"), ch], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"bench_times: ch{ch} exited with status {r.returncode}: {r.stderr.strip()}", file=sys.stderr)
            return 1
        _, wall, cpu = r.stdout.strip().split("\t")
        rows[ch] = {"wall_seconds": float(wall), "cpu_seconds": float(cpu)}
        print(f"bench_times: ch{ch}: {wall} s wall, {cpu} s CPU", flush=True)
    data["chapters"] = {
        "runs": rows,
        "wall_seconds": round(sum(r["wall_seconds"] for r in rows.values()), 1),
        "cpu_seconds": round(sum(r["cpu_seconds"] for r in rows.values()), 1),
        "load_before": load_before,
        "load_after": loadavg(),
    }
    save(out, data)
    return 0


def print_table(out: Path) -> int:
    data = load(out)
    print(f"\n{'':18} {'wall s':>8} {'CPU s':>8}")
    if "build" in data:
        b = data["build"]
        print(f"{'build':18} {b['wall_seconds']:8.1f} {b['cpu_seconds']:8.1f}  ({b['steps_run']} steps ran, "
              f"load {b['load_before']} -> {b['load_after']})")
    if "chapters" in data:
        c = data["chapters"]
        for ch, r in c["runs"].items():
            print(f"{'  ch' + ch:18} {r['wall_seconds']:8.1f} {r['cpu_seconds']:8.1f}")
        print(f"{'chapters':18} {c['wall_seconds']:8.1f} {c['cpu_seconds']:8.1f}  (load {c['load_before']} -> "
              f"{c['load_after']})")
    print(f"written to {out}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 5 and argv[1] == "build":
        return time_build(Path(argv[2]), argv[3], Path(argv[4]), argv[5:])
    if len(argv) >= 4 and argv[1] == "chapters":
        return time_chapters(Path(argv[2]).resolve(), Path(argv[3]), argv[4:])
    if len(argv) == 3 and argv[1] == "print":
        return print_table(Path(argv[2]))
    print("usage: bench_times.py build BUILD JOBS OUT.json [TARGET...] | chapters BUILD OUT.json CHAPTER... | "
          "print OUT.json", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
