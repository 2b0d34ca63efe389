#!/usr/bin/python3
"""make check-results: every results bundle in results/, held against what this commit computes.

    check_results.py (--current DIR | --bin BUILD/bin) [--results DIR]

--current: this commit's chapter results, DIR/chNN_slug.json (the book build's generated
directory); --bin: run every chapter program once to make them. One line per bundle: "ok",
"stale" (older than a change of an exact value: left out of the gallery) or "FAILED" (edited by
hand, or not a bundle), naming the key. Exit status 1 when a bundle fails or there is none, 2 on
bad input.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bundle as bundles  # noqa: E402


def current_results(args, tmp: Path) -> dict[str, dict]:
    if args.current:  # every chapter's results found there (the book build writes all of them)
        found = sorted(p.stem for p in Path(args.current).glob("ch[0-9][0-9]_*.json"))
        if not found:
            raise bundles.BundleError(f"{args.current} holds no chapter results (chNN_slug.json)")
        return bundles.read_current(Path(args.current), found)
    return bundles.run_chapters(Path(args.bin), tmp, "check-results")


def check(results: Path, current: dict[str, dict]) -> int:
    files = sorted(results.glob("*.json.gz"))
    if not files:
        print(f"check-results: {results} holds no bundle (make share writes one)")
        return 1
    head = bundles.current_commit()
    failed = 0
    for f in files:
        try:
            verdict = bundles.verify(f.name, bundles.load(f), current, head)
        except bundles.BundleError as e:
            verdict = bundles.Verdict("invalid", f"{f.name}: {e}")
        label = {"valid": "ok", "stale": "stale", "invalid": "FAILED"}[verdict.status]
        print(f"{label}: {verdict.line}")
        failed += verdict.status == "invalid"
    print(f"check-results: {len(files) - failed} passed, {failed} failed")
    return 1 if failed else 0


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
            current = current_results(args, Path(tmp))
    except bundles.BundleError as e:
        print(f"check-results: {e}", file=sys.stderr)
        return 2
    return check(results, current)


if __name__ == "__main__":
    sys.exit(main())
