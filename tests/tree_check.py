"""What the checks of the chapters' tree share (chapter_pattern_test.py, literate_test.py): the
self-test's summary, and a command line with --root and --self-test."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable


def self_test_result(failures: list[str], cases: int) -> int:
    """Print each failure and how many of CASES came out as expected; 1 if any failed."""
    for f in failures:
        print(f)
    print(f"self-test: {cases - len(failures)} of {cases} cases as expected")
    return 1 if failures else 0


def main(name: str, doc: str, run: Callable[[argparse.Namespace], int], self_test: Callable[[], int],
         add_flags: Callable[[argparse.ArgumentParser], None] = lambda parser: None) -> int:
    """Parse --root (the repository, by default this one) and --self-test, then run the check."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--self-test", action="store_true")
    add_flags(parser)
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if not (args.root / "chapters").is_dir():
        print(f"{name}: no chapters/ under {args.root}", file=sys.stderr)
        return 2
    return run(args)
