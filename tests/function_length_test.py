#!/usr/bin/python3
"""No function in chapters/ or common/ runs over 80 lines (CONTRIBUTING: students read this code).

    function_length_test.py [--root SOURCE_DIR] [--limit N]

A function here is what clang-format leaves at the left margin: a signature (one or more
lines) and its body, up to the `}` that closes it at column 0. Members defined inside a
class are indented and not counted; they are short by the same rule. Prints the longest
function found; exit 1 naming each one over the limit.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

STARTS_DECLARATION = re.compile(r"^[A-Za-z_]")
NOT_A_SIGNATURE = ("namespace", "//", "#", "template", "struct", "class", "enum", "using", "extern")


def functions(lines: list[str]):
    """(first line number, line count, first line) of every top-level function body."""
    previous_end = -1
    for end, line in enumerate(lines):
        if not line.startswith("}") or line.startswith("};") or "namespace" in line:
            continue
        start = end - 1
        while start > previous_end and not (STARTS_DECLARATION.match(lines[start])
                                            and not lines[start].startswith(NOT_A_SIGNATURE)):
            start -= 1
        # a signature may take several lines, each at the margin
        while (start - 1 > previous_end and STARTS_DECLARATION.match(lines[start - 1])
               and not lines[start - 1].rstrip().endswith((";", "}", "{"))
               and not lines[start - 1].startswith(NOT_A_SIGNATURE)):
            start -= 1
        previous_end = end
        if start >= 0 and "(" in " ".join(lines[start:start + 3]):
            yield start + 1, end - start + 1, lines[start].strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--limit", type=int, default=80)
    args = parser.parse_args()
    sources = [p for d in ("chapters", "common") for p in sorted((args.root / d).rglob("*.[ch]pp"))]
    if not sources:
        print(f"function_length_test.py: no sources under {args.root}", file=sys.stderr)
        return 2
    found = [(n, p.relative_to(args.root), at, first) for p in sources
             for at, n, first in functions(p.read_text().split("\n"))]
    longest = max(found)
    print(f"{len(found)} functions in {len(sources)} files; the longest: {longest[0]} lines, "
          f"{longest[1]}:{longest[2]} ({longest[3][:60]})")
    over = [f for f in found if f[0] > args.limit]
    for n, path, at, first in over:
        print(f"{path}:{at}: {n} lines, over {args.limit}: {first[:70]}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
