#!/usr/bin/python3
"""Fails when a chapter's prose types by hand a number that its program computes.

    check_numbers.py --bin BUILD/bin CHAPTER_DIR     (runs the program's default run for its --json)
    check_numbers.py --json FILE CHAPTER_DIR          (uses results already written)
    --cache BUILD/book/generated: with --bin, use the book's saved results while fresh

Every number written in digits in chapters/NN_slug/chapter.md (and in the chapter's other
pages, chapters/NN_slug/*.md, which chapter.md reaches by a toctree) is compared with the
values in the chapter's `--json` results; a match means the number should have come
from a substitution, `{{ chNN.key }}`. The rule (CONTRIBUTING.md, "The book"):

checked     numbers in prose text: paragraphs, lists, headings, tables, admonitions and
            chart captions; decimal (`4573`, `4,573`, `37.5`) and hex (`0x22E8`).
not checked code (fenced blocks, inline `code`, and the bodies and options of
            literalinclude, program-output, stepper, code-block, math, toctree and
            doxygen directives); math (`$...$`, `$$...$$`); substitutions `{{ ... }}`;
            the content of roles, among them {notes}`3.2` (a figure quoted from the course
            notes) and {given}`64` (a number the prose chooses, not one the program
            computes); HTML comments; link targets; digits that are part of a name
            (`L2`, `x86-64`, `C++20`, `float64`); the number of a heading or list
            item; a number right after chapter, section, part, step, exercise,
            figure, table, page or §; the number of a document after JEP, PEP, RFC,
            ISO, IEC, IEEE or ECMA; years (1950-2039); 0 and 1.
values      every number in the JSON (keys at any depth, hex strings like "0x22E8" too),
            except in lists of more than 16 items (step-by-step records, sweeps: bulk
            data the prose summarises through named keys). An integer matches exactly;
            a fraction (any JSON number written with a point, even 4.0) matches only a
            typed decimal with as many places as typed (37.5 matches 37.47; a typed 37
            or 4 matches no fraction, so a measurement that happens to be whole this run
            cannot make the check fail).

The retired role {seed}`N` is reported too: the role is {notes}`N`.

Exit status: 0 clean, 1 numbers typed by hand or a retired role, 2 usage or a failed run, 77 nothing
to check (the chapter has no chapter.md yet).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import book_chapters  # noqa: E402

BULK = 16
SKIPPED_DIRECTIVES = {
    "literalinclude", "program-output", "stepper", "code-block", "code", "sourcecode", "math",
    "toctree", "chapter-list", "eval-rst", "raw",
}
ORDINAL_WORDS = r"(?:chapters?|sections?|parts?|steps?|exercises?|figures?|tables?|pages?|§)"
DOCUMENT_NAMES = r"\b(?:JEP|PEP|RFC|ISO|IEC|IEEE|ECMA)"
NUMBER = re.compile(
    r"(?<![\w.+])(?<!\w-)"
    r"(0[xX][0-9A-Fa-f]+|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?![\w])(?!\.\d)"
)


def json_values(data, path="", out=None):
    """(value, path) for every number in the JSON, outside bulk lists."""
    if out is None:
        out = []
    if isinstance(data, dict):
        for k, v in data.items():
            json_values(v, f"{path}.{k}" if path else k, out)
    elif isinstance(data, list):
        if len(data) <= BULK:
            for i, v in enumerate(data):
                json_values(v, f"{path}[{i}]", out)
    elif isinstance(data, bool) or data is None:
        pass
    elif isinstance(data, (int, float)):
        out.append((data, path))
    elif isinstance(data, str) and re.fullmatch(r"0[xX][0-9A-Fa-f]+", data):
        out.append((int(data, 16), path))
    return out


def prose_lines(text: str):
    """(line number, text) of the prose, with everything not checked blanked out."""
    lines = text.split("\n")
    keep = [""] * len(lines)
    k = 0
    if lines and lines[0].strip() == "---":  # front matter
        k = 1
        while k < len(lines) and lines[k].strip() != "---":
            k += 1
        k += 1
    fence = None  # (marker, skip_body)
    in_math = False
    while k < len(lines):
        line = lines[k]
        stripped = line.strip()
        if fence is not None:
            marker, skip = fence
            if stripped.startswith(marker) and stripped.strip(marker[0]) == "":
                fence = None
            elif not skip and not re.match(r"\s*:[\w-]+:", line):
                keep[k] = line
            k += 1
            continue
        if in_math:
            if stripped.endswith("$$"):
                in_math = False
            k += 1
            continue
        m = re.match(r"\s*(`{3,}|~{3,}|:{3,})\s*(\{([\w-]+)\})?\s*(\S*)", line)
        if m:
            directive = m.group(3)
            if directive is None:  # a plain code fence
                skip = m.group(1)[0] != ":"
            else:
                skip = directive in SKIPPED_DIRECTIVES or directive.startswith("doxygen")
            fence = (m.group(1), skip)
            k += 1
            continue
        if stripped.startswith("$$"):
            in_math = not (stripped.endswith("$$") and len(stripped) > 2)
            k += 1
            continue
        keep[k] = line
        k += 1
    text = "\n".join(keep)
    text = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return text.split("\n")


def blank_inline(line: str) -> str:
    def blank(m):
        return " " * len(m.group(0))

    line = re.sub(r"\{\{.*?\}\}", blank, line)  # substitutions
    line = re.sub(r"\{[\w:-]+\}`[^`]*`", blank, line)  # roles
    line = re.sub(r"(`+).*?\1", blank, line)  # inline code
    line = re.sub(r"\$[^$]+\$", blank, line)  # inline math
    line = re.sub(r"\]\([^)]*\)", blank, line)  # link targets
    line = re.sub(r"^(\s*#+\s*)\d+(\.\d+)*\.?\s", lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))),
                  line)  # heading number
    line = re.sub(r"^(\s*)\d+[.)]\s", lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))),
                  line)  # list item number
    line = re.sub(ORDINAL_WORDS + r"\s+\d+(?:\.\d+)*", blank, line, flags=re.I)
    line = re.sub(DOCUMENT_NAMES + r"[\s-]?\d+(?:[.:-]\d+)*", blank, line)  # JEP 142, ISO/IEC 14882
    return line


def typed_numbers(text: str):
    for lineno, line in enumerate(prose_lines(text), start=1):
        clean = blank_inline(line)
        for m in NUMBER.finditer(clean):
            token = m.group(1)
            if token.lower().startswith("0x"):
                yield lineno, token, int(token, 16), 0
                continue
            plain = token.replace(",", "")
            places = len(plain.split(".")[1]) if "." in plain else 0
            value = float(plain) if places else int(plain)
            if value in (0, 1):
                continue
            if places == 0 and 1950 <= value <= 2039:
                continue
            yield lineno, token, value, places


def matches(typed, places, value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return places == 0 and typed == value or (places > 0 and float(typed) == float(value))
    # A fraction in the JSON (a measurement, a ratio) matches only a typed decimal:
    # a measured 4.0 that happens to equal a typed "4" this run is a coincidence,
    # not a number copied from the program.
    if places == 0:
        return False
    return round(float(value), places) == typed


def retired_roles(page: Path) -> list[str]:
    """A role the book no longer defines: its number would otherwise pass unchecked."""
    problems = []
    for lineno, line in enumerate(page.read_text().split("\n"), start=1):
        for m in re.finditer(r"\{seed\}`[^`]*`", line):
            problems.append(f"{page}:{lineno}: {{seed}} is typed by hand but the role is {{notes}}: {m.group(0)}")
    return problems


def check(page: Path, data: dict, key: str) -> list[str]:
    # A claim's measured figures are this run's: a whole number among them (the calls a run
    # takes, sized by the clock) that equals a typed one is a coincidence, as a fraction is.
    exact = set(data.get("exact_keys", []))
    values = [(v, p) for v, p in json_values(data) if not (p.startswith("claims.") and p not in exact)]
    problems = retired_roles(page)
    for lineno, token, typed, places in typed_numbers(page.read_text()):
        hits = sorted((path for value, path in values if matches(typed, places, value)),
                      key=lambda p: (p.count("["), len(p)))
        if hits:
            more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
            problems.append(f"{page}:{lineno}: {token} is typed by hand but the program computes it: "
                            f"{{{{ {key}.{hits[0]} }}}}{more}")
    return problems


def run_program(prog: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CACHEBOOK_GOLDEN"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.json"
        r = subprocess.run([str(prog), "--json", str(out)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           env=env)
        if r.returncode != 0:
            print(f"check_numbers: {prog} --json exited with status {r.returncode}", file=sys.stderr)
            sys.exit(2)
        return json.loads(out.read_text())


# The rule, case by case: (prose line, numbers the check must report in it).
SELF_TEST_DATA = {"address": {"line": 139, "stride": 2400, "lines": 37.5, "hex": "0x22E8", "misses": 8},
                  "ratio": 3.2147, "trace": list(range(100, 140)), "year": 2024, "small": 1}
SELF_TEST_CASES = [
    ("It is in line 139, byte 40.", ["139"]),
    ("A row is 2,400 bytes, 37.5 lines; the address is 0x22E8.", ["2,400", "37.5", "0x22E8"]),
    ("The column walk took 8 misses.", ["8"]),
    ("Measured: 3.2 times slower, roughly 3 times.", ["3.2"]),
    ("Written as `139` or {{ ch01.address.line }} or {given}`139` or {notes}`8`, it is fine.", []),
    ("Chapter 8, section 139, step 8 and part 2400 are references.", []),
    ("An old role: {seed}`8`.", ["{seed}"]),
    ("JEP 139, RFC 2400 and IEEE 754-2008 are documents; 139 bytes are not.", ["139"]),
    ("x86-64 and float64 and L8 and C++20 are names.", []),
    ("In 2024 nothing; 0 and 1 are never checked; 120 sits only in a bulk list.", []),
    ("## 8. A numbered heading with 2400 in it", ["2400"]),
    ("8. a list item numbered 8", ["8"]),
    ("<!-- 139 in a comment --> a [link](page139.html#8) and $x = 2400$", []),
]
SELF_TEST_BLOCKS = """```cpp
int line = 139;
```

```{program-output} ch01_row_major
:end-before: "cache of 8 lines"
```

```{note}
An admonition with 2400 in it.
```
"""


def self_test() -> int:
    failures = 0
    for prose, expected in SELF_TEST_CASES:
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "chapter.md"
            page.write_text(prose + "\n")
            found = [p.split(": ")[1].split(" is typed")[0] for p in check(page, SELF_TEST_DATA, "ch01")]
        if found != expected:
            failures += 1
            print(f"self-test: {prose!r}: reported {found}, expected {expected}")
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "chapter.md"
        page.write_text(SELF_TEST_BLOCKS)
        found = [p.split(": ")[1].split(" is typed")[0] for p in check(page, SELF_TEST_DATA, "ch01")]
    if found != ["2400"]:
        failures += 1
        print(f"self-test: code and directive blocks: reported {found}, expected ['2400'] (the admonition)")
    total = len(SELF_TEST_CASES) + 1
    print(f"self-test: {total - failures} of {total} cases as the rule says")
    return 1 if failures else 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1].strip())
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--bin", help="directory of the chapter programs (runs chNN_slug --json)")
    src.add_argument("--json", help="the chapter's --json results")
    ap.add_argument("--cache", help="a directory of saved results (BUILD/book/generated): its chNN_slug.json "
                    "is used instead of a run when it is newer than the program")
    ap.add_argument("chapter", help="the chapter's directory, chapters/NN_slug")
    args = ap.parse_args()
    chapter = Path(args.chapter)
    if not chapter.is_dir():
        print(f"check_numbers: {chapter} is not a directory", file=sys.stderr)
        return 2
    page = chapter / "chapter.md"
    if not page.exists():
        print(f"SKIPPED: {page} does not exist yet; nothing to check")
        return 77
    key = "ch" + chapter.name.split("_", 1)[0]
    if args.json:
        data = json.loads(Path(args.json).read_text())
    else:
        prog = Path(args.bin) / ("ch" + chapter.name)
        if not prog.exists():
            print(f"check_numbers: {prog} does not exist", file=sys.stderr)
            return 2
        saved = Path(args.cache) / f"{prog.name}.json" if args.cache else None
        if saved is not None and saved.exists() and saved.stat().st_mtime > prog.stat().st_mtime:
            data = json.loads(saved.read_text())
        else:
            data = run_program(prog)
    pages = book_chapters.Chapter(chapter).pages
    problems = [p for each in pages for p in check(each, data, key)]
    for p in problems:
        print(p)
    names = ", ".join(str(each) for each in pages)
    if problems:
        print(f"{len(problems)} number(s) typed by hand in {names}; use the substitution shown, or mark a "
              "number the program does not compute with {given}`N` (or a figure of the course notes with {notes}`N`)")
        return 1
    print(f"{names}: no computed number typed by hand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
