#!/usr/bin/python3
"""make check-results: what the appendix "On other machines" will show, and whether every bundle holds.

    check_results.py (--current DIR | --bin BUILD/bin) [--results DIR]

--current: this commit's chapter results, DIR/chNN_slug.json (the book build's generated
directory); --bin: run every chapter program once to make them. One line for the build's own
run, then one per bundle of results/: "ok" with its chapters valid (they count), stale (their
exact values come from older code: the line says which value) and not run; or "FAILED" (edited
by hand, naming the key, or not a bundle). Then one line per claim: on how many machines it
held. Exit status 1 when a bundle fails, when results/ holds none, or when no bundle counts for
any chapter (the gallery would show only the build's own run); 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bundle as bundles  # noqa: E402
import gallery as galleries  # noqa: E402


def current_results(args, tmp: Path) -> tuple[dict[str, dict], dict]:
    """This commit's chapter results, and the build's own run made of them (bundle.own_run)."""
    if args.current:  # every chapter's results found there (the book build writes all of them)
        where = Path(args.current)
        found = sorted(p.stem for p in where.glob("ch[0-9][0-9]_*.json"))
        if not found:
            raise bundles.BundleError(f"{args.current} holds no chapter results (chNN_slug.json)")
        current = bundles.read_current(where, found)
    else:
        where = tmp
        current = bundles.run_chapters(Path(args.bin), tmp, "check-results")
    return current, bundles.own_run(where, current, bundles.current_commit())


def report(g: galleries.Gallery) -> None:
    for m in g.machines:
        if m.own:
            also = f" (also in results/ as {', '.join(m.same_run_as)})" if m.same_run_as else ""
            print(f"this build: {bundles.cpu_name(m.bundle)}, "
                  f"{bundles.usable_cpus(m.bundle)} cpus, commit {m.bundle['commit'][:12]}: "
                  f"{len(m.chapters)} chapters, the build's own run{also}")
        else:
            print(f"ok: {m.line}")
    for line in g.failed:
        print(f"FAILED: {line}")
    for c in g.claims:
        print(f"claim {c.chapter} {c.name} (at least {c.threshold:.2f}x): {g.tally(c)}")


def check(results: Path, current: dict[str, dict], own: dict) -> int:
    files = sorted(results.glob("*.json.gz"))
    if not files:
        print(f"check-results: {results} holds no bundle (make share writes one)")
        return 1
    g = galleries.collect(results, current, own)
    report(g)
    others = [m for m in g.machines if not m.own]
    counted = sum(1 for m in others if m.valid() and not m.bundle["emulated"])
    valid = sum(len(m.valid()) for m in others)
    stale = sum(len(m.stale()) for m in others)
    print(f"check-results: the gallery shows the build's own run and {len(others)} bundle(s), {counted} of them "
          f"counted; their chapters: {valid} valid, {stale} stale; {len(g.failed)} bundle(s) failed")
    if g.failed:
        return 1
    if not any(m.valid() for m in others) and not g.machines[0].same_run_as:
        print("check-results: no bundle counts for any chapter: run make share on a committed tree")
        return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--current", help="this commit's chapter results (BUILD/book/generated)")
    src.add_argument("--bin", help="run the chapter programs of this directory for them")
    ap.add_argument("--results", default=str(bundles.ROOT / "results"))
    args = ap.parse_args()
    results = Path(args.results)
    if not results.is_dir():
        print(f"check-results: {results} is not a directory", file=sys.stderr)
        return 2
    try:
        with tempfile.TemporaryDirectory() as tmp:
            current, own = current_results(args, Path(tmp))
    except bundles.BundleError as e:
        print(f"check-results: {e}", file=sys.stderr)
        return 2
    return check(results, current, own)


if __name__ == "__main__":
    sys.exit(main())
