#!/usr/bin/python3
"""make share: every chapter's run on this machine, as one sealed results bundle.

    share.py [--build BUILD] [--out DIR] [--emulator CMD]

Runs every chapter program of BUILD/bin once with --json (its default, measured run; chapter 9
with --caches from chapter 8's results, as the book runs it), then writes
DIR/<cpu>-<date>.json.gz (tools/reader/bundle.py says what it holds). The tree must be
committed: a bundle names the commit its numbers come from. --emulator runs each program
under an emulator (as `qemu-aarch64`) and marks the bundle emulated, so that its times stay
out of every measured claim. Bad input gives one line on stderr and exit status 2; a program
that fails, exit status 1; nothing is written in either case.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bundle as bundles  # noqa: E402

ROOT = bundles.ROOT


class Stop(Exception):
    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def git(*args: str) -> str:
    r = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise Stop(f"git {' '.join(args)} failed: {r.stderr.strip() or 'not a git checkout'}", 2)
    return r.stdout.strip()


def cmake_cache(build: Path) -> dict[str, str]:
    values = {}
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z_]+):[A-Z]+=(.*)$", line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


def compiler_and_flags(build: Path) -> tuple[str, str]:
    cache = cmake_cache(build)
    cxx = cache.get("CMAKE_CXX_COMPILER", "c++")
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()
    build_type = cache.get("CMAKE_BUILD_TYPE", "")
    flags = " ".join(f for f in (cache.get("CMAKE_CXX_FLAGS", ""),
                                 cache.get(f"CMAKE_CXX_FLAGS_{build_type.upper()}", "")) if f)
    return (version[0] if version else cxx), f"{build_type}: {flags}".strip()


def slug(machine: dict) -> str:
    """intel-xeon-processor-6-207: the CPU's name, with family and model where /proc/cpuinfo has them."""
    name = (machine.get("cpu") or "unknown-cpu").lower()
    name = re.sub(r"\((r|tm)\)|cpu @.*|\bwith\b.*", "", name)
    parts = [re.sub(r"[^a-z0-9]+", "-", name).strip("-")]
    try:
        info = Path("/proc/cpuinfo").read_text()
        fam, model = re.search(r"cpu family\s*:\s*(\d+)", info), re.search(r"^model\s*:\s*(\d+)", info, re.M)
        if fam and model:
            parts += [fam.group(1), model.group(1)]
    except OSError:
        pass
    return "-".join(p for p in parts if p)


def target(out_dir: Path, name: str) -> Path:
    path = out_dir / f"{name}.json.gz"
    n = 2
    while path.exists():  # never overwrite a bundle: a second run the same day is another file
        path = out_dir / f"{name}-{n}.json.gz"
        n += 1
    return path


def share(args) -> Path:
    build = Path(args.build)
    bin_dir = build / "bin"
    missing = [p for p in bundles.chapter_programs() + ["doctor"] if not (bin_dir / p).is_file()]
    if missing:
        raise Stop(f"{bin_dir} lacks {', '.join(missing)}: run make share, which builds them", 2)
    out_dir = Path(args.out)
    if not out_dir.is_dir():
        raise Stop(f"{out_dir} is not a directory", 2)
    if not os.access(out_dir, os.W_OK):
        raise Stop(f"{out_dir} cannot be written", 2)
    if git("status", "--porcelain", "--untracked-files=no"):
        raise Stop("the tree has uncommitted changes: commit them first, a bundle names the commit "
                   "its numbers come from", 2)
    commit = git("rev-parse", "HEAD")  # before the runs: a commit made meanwhile is not theirs
    emulator = shlex.split(args.emulator) if args.emulator else []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        # One profile for the whole bundle: the doctor measures it, the chapters read it (profile.hpp).
        os.environ["CACHEBOOK_PROFILE_DIR"] = str(tmp / "profile")
        try:
            bundles.run_program(emulator + [str(bin_dir / "doctor"), "--json", str(tmp / "doctor.json")], "doctor")
            chapters = bundles.run_chapters(bin_dir, tmp, "share", emulator)
        except bundles.BundleError as e:
            raise Stop(str(e), 1) from None
        doctor = json.loads((tmp / "doctor.json").read_text())
    compiler, flags = compiler_and_flags(build)
    bundle = {"format": bundles.FORMAT, "commit": commit,
              "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "compiler": compiler, "flags": flags, "emulated": bool(emulator),
              "emulator": args.emulator or "", "machine": doctor["machine"], "conditions": doctor["conditions"],
              "profile": doctor["profile"], "chapters": chapters}
    path = target(out_dir, f"{slug(doctor['machine'])}-{bundle['date'][:10]}")
    bundles.write(bundle, path)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="the CMake build directory (holds bin/)")
    ap.add_argument("--out", default=str(ROOT / "results"), help="where the bundle goes (results/)")
    ap.add_argument("--emulator", default="", help="run every program under this command (marks the bundle emulated)")
    args = ap.parse_args()
    try:
        path = share(args)
    except Stop as e:
        print(f"share: {e}", file=sys.stderr)
        return e.status
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"share: wrote {shown}; to propose it: git add {shown} && git commit -m 'Results of <your machine>' "
          "and open a pull request (CONTRIBUTING.md, \"Results from other machines\")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
