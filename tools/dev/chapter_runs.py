#!/usr/bin/python3
"""One measured run of a chapter serves make run, make test and make book.

A chapter program run with `--json` and CACHEBOOK_GOLDEN_COPY (report.hpp) prints its measured
output, records its results and writes what golden mode would print, all in one run. This tool
keeps such runs in BUILD/runs/NAME/ (stdout.txt, golden.txt, results.json, run.json), each under
the key of what made it: the commit, the build's flags, the hashes of the chapter programs, the
arguments and the files they read, the CACHEBOOK_ variables, the CPUs the run may use and whether
the machine shows its cache directories in sysfs. A run is reused only under the same key, so a
rebuilt program, another commit or a machine shown otherwise runs the chapter again.

    chapter_runs.py run   BIN NAME    run NAME (01_row_major, or 09_matmul.quick for --quick) and keep it
    chapter_runs.py fresh BIN NAME    exit 0 and print the run's directory when a kept run has this key

`run` exits with the program's status (a failed run is not kept) and prints on stdout the
directory, the wall seconds and the CPU seconds of the run, tab-separated.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# Chapter 9 derives its blocks from the caches chapter 8 measured (--caches), when chapter 8's run
# of the same key is kept.
INPUTS = {"09_matmul": ("08_cliff", "--caches")}
FLAG_PREFIXES = ("CMAKE_BUILD_TYPE:", "CMAKE_CXX_COMPILER:", "CMAKE_CXX_FLAGS", "CMAKE_EXE_LINKER_FLAGS", "CACHEBOOK_")
# Variables no program's output or results depend on: golden mode and its copy (one run gives both),
# the progress line (stderr), the book's demand that its browser test run (CI sets it for make book),
# where make run keeps the machine's profile the chapters share (measured either way, profile.hpp).
UNKEYED_ENV = ("CACHEBOOK_GOLDEN", "CACHEBOOK_GOLDEN_COPY", "CACHEBOOK_PROGRESS", "CACHEBOOK_REQUIRE_BROWSER_TEST",
               "CACHEBOOK_PROFILE_DIR")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def commit() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def build_flags(bin_dir: Path) -> list[str]:
    cache = bin_dir.parent / "CMakeCache.txt"
    if not cache.exists():
        return []
    return sorted(line for line in cache.read_text().splitlines() if line.startswith(FLAG_PREFIXES))


def cache_sysfs_visible() -> bool:
    return bool(glob.glob("/sys/devices/system/cpu/cpu*/cache/index*"))


def split_name(name: str) -> tuple[str, list[str]]:
    return (name[: -len(".quick")], ["--quick"]) if name.endswith(".quick") else (name, [])


def store(bin_dir: Path) -> Path:
    return bin_dir.parent / "runs"


def arguments(bin_dir: Path, name: str) -> tuple[list[str], list[Path]]:
    """The run's arguments and the files they name."""
    chapter, args = split_name(name)
    if chapter in INPUTS and not args:
        source, flag = INPUTS[chapter]
        if fresh(bin_dir, source):
            results = store(bin_dir) / source / "results.json"
            return [flag, os.path.relpath(results, ROOT)], [results]
    return args, []


def key(bin_dir: Path, name: str) -> dict:
    args, inputs = arguments(bin_dir, name)
    return {
        "commit": commit(),
        "build_flags": build_flags(bin_dir),
        "programs": {p.name: sha256(p) for p in sorted(bin_dir.glob("ch[0-9][0-9]_*")) if p.is_file()},
        "args": args,
        "inputs": {str(p): sha256(p) for p in inputs},
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("CACHEBOOK_") and k not in UNKEYED_ENV},
        "cpus": sorted(os.sched_getaffinity(0)),
        "cache_sysfs_visible": cache_sysfs_visible(),
    }


FILES = ("stdout.txt", "golden.txt", "results.json", "run.json", "key.json")


def fresh(bin_dir: Path, name: str) -> bool:
    d = store(bin_dir) / name
    if not all((d / f).exists() for f in FILES):
        return False
    try:
        return json.loads((d / "key.json").read_text()) == key(bin_dir, name)
    except ValueError:
        return False


def run(bin_dir: Path, name: str) -> int:
    chapter, _ = split_name(name)
    k = key(bin_dir, name)
    d = store(bin_dir) / name
    d.mkdir(parents=True, exist_ok=True)
    for f in FILES:
        (d / f).unlink(missing_ok=True)
    tmp = {f: d / (f + ".tmp") for f in ("stdout.txt", "golden.txt", "results.json")}
    # Unkeyed variables are dropped (a kept run is measured, never golden), save the shared profile's place.
    env = {v: x for v, x in os.environ.items() if v not in UNKEYED_ENV or v == "CACHEBOOK_PROFILE_DIR"}
    env["CACHEBOOK_GOLDEN_COPY"] = str(tmp["golden.txt"])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(tmp["stdout.txt"], "w") as out:
        rc = subprocess.run([str(bin_dir / f"ch{chapter}"), "--json", str(tmp["results.json"])] + k["args"],
                            stdout=out, stdin=subprocess.DEVNULL, env=env, cwd=ROOT).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if rc != 0:
        return rc
    for f, path in tmp.items():
        path.replace(d / f)
    (d / "run.json").write_text(json.dumps({"wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2)}) + "\n")
    (d / "key.json").write_text(json.dumps(k, indent=1) + "\n")  # last: the run is kept once this exists
    print(f"{d}\t{wall:.1f}\t{cpu:.1f}")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[1] not in ("run", "fresh"):
        print("usage: chapter_runs.py run|fresh BIN_DIR NAME", file=sys.stderr)
        return 2
    bin_dir, name = Path(argv[2]).resolve(), argv[3]
    if not (bin_dir / f"ch{split_name(name)[0]}").is_file():
        print(f"chapter_runs.py: no program {bin_dir}/ch{split_name(name)[0]}", file=sys.stderr)
        return 2
    if argv[1] == "fresh":
        if not fresh(bin_dir, name):
            return 1
        print(store(bin_dir) / name)
        return 0
    return run(bin_dir, name)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
