#!/usr/bin/python3
"""tools/dev/chapter_runs.py keeps a chapter's run and hands it back only under the same key: a
program rebuilt, another CACHEBOOK_ variable, other usable CPUs or an input changed since make it
run again; a failed run is not kept. Runs on a stand-in chapter program (a shell script that
prints, records and writes its golden copy as report.hpp does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "dev" / "chapter_runs.py"
PROGRAM = """#!/bin/sh
[ "$CACHEBOOK_FAIL" = 1 ] && exit 3
json=$2
echo "Chapter 99 · measured 12.3 ms $3 $4"
echo '{"ms": 12.3}' > "$json"
echo "Chapter 99 · measured <measured> ms" > "$CACHEBOOK_GOLDEN_COPY"
"""

problems: list[str] = []


def check(what: str, ok: bool) -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        problems.append(what)


def tool(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          env=env if env is not None else os.environ.copy())


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = Path(tmp) / "build" / "bin"
        bin_dir.mkdir(parents=True)
        for name in ("ch99_stand_in", "ch98_source"):
            (bin_dir / name).write_text(PROGRAM)
            (bin_dir / name).chmod(0o755)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CACHEBOOK_")}
        check("no kept run before the first", tool("fresh", str(bin_dir), "99_stand_in", env=env).returncode == 1)
        r = tool("run", str(bin_dir), "99_stand_in", env=env)
        check("a run exits 0 and names its directory, wall and CPU seconds",
              r.returncode == 0 and len(r.stdout.strip().split("\t")) == 3)
        kept = bin_dir.parent / "runs" / "99_stand_in"
        check("it keeps the measured output, the results and the golden copy",
              "12.3" in (kept / "stdout.txt").read_text() and json.loads((kept / "results.json").read_text())
              == {"ms": 12.3} and "<measured>" in (kept / "golden.txt").read_text())
        check("the same key finds it", tool("fresh", str(bin_dir), "99_stand_in", env=env).returncode == 0)
        check("another CACHEBOOK_ variable does not",
              tool("fresh", str(bin_dir), "99_stand_in", env=env | {"CACHEBOOK_MACHINE": "/x"}).returncode == 1)
        for unkeyed in ("CACHEBOOK_GOLDEN", "CACHEBOOK_REQUIRE_BROWSER_TEST"):  # make book in CI sets the second
            check(f"{unkeyed} is not part of the key",
                  tool("fresh", str(bin_dir), "99_stand_in", env=env | {unkeyed: "1"}).returncode == 0)
        (bin_dir / "ch98_source").write_text(PROGRAM + "# rebuilt\n")
        check("a chapter program rebuilt makes every kept run stale",
              tool("fresh", str(bin_dir), "99_stand_in", env=env).returncode == 1)
        tool("run", str(bin_dir), "99_stand_in", env=env)
        check("run again, it is found again", tool("fresh", str(bin_dir), "99_stand_in", env=env).returncode == 0)
        key = json.loads((kept / "key.json").read_text())
        check("the key holds the commit, the flags, the sysfs condition and the usable CPUs",
              {"commit", "build_flags", "cache_sysfs_visible", "cpus", "programs", "args", "inputs"} <= key.keys())
        failed = tool("run", str(bin_dir), "99_stand_in", env=env | {"CACHEBOOK_FAIL": "1"})
        check("a failed run exits with its status and is not kept",
              failed.returncode == 3 and tool("fresh", str(bin_dir), "99_stand_in", env=env).returncode == 1)
        if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 1:
            tool("run", str(bin_dir), "99_stand_in", env=env)
            one = subprocess.run(["taskset", "-c", str(min(os.sched_getaffinity(0))), sys.executable, str(TOOL),
                                  "fresh", str(bin_dir), "99_stand_in"], env=env, capture_output=True)
            check("a run on every CPU is not one pinned to one", one.returncode == 1)
    print("chapter_runs: " + (f"{len(problems)} problem(s)" if problems else "every check held"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
