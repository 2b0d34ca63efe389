#!/usr/bin/python3
"""Each chapter's lesson is a file its page shows whole (CONTRIBUTING, "Lesson, lab, table of contents").

    literate_test.py [--root SOURCE_DIR]   checks every chapters/NN_slug/
    literate_test.py --share               also prints, per chapter, the share of its code the page shows
    literate_test.py --self-test           checks that each broken example is caught

A chapter's lesson files are `<slug>.cpp` and `<slug>_*.cpp` in chapters/NN_slug/. Every line
of each lies inside a `literalinclude` of that chapter's pages (its *.md files), except blank lines,
`#include` and `#if`/`#endif` lines, the file comment before the first line of code,
namespace braces, and the `[snippet: ...]` / `[end: ...]` markers that cut the listings.
Beside that:
- a lesson file is at most LESSON_LIMIT lines, and no C++ file in chapters/ is over FILE_LIMIT;
- no main.cpp, nor a sections*.cpp its sections live in, reads a clock or times anything (that is
  the lab's work), or prints to stdout except through the Report (`fmt::print(stderr, ...)` for errors).
Each failure names the file and line; the exit status is 1 if any check fails.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tree_check  # noqa: E402

LESSON_LIMIT = 330
FILE_LIMIT = 400
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*\{literalinclude\}\s*(\S+)\s*$")
OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*?)\s*$")
FREE = re.compile(r"^\s*(#\s*(include|if|ifdef|ifndef|elif|else|endif|pragma)\b.*"
                  r"|(inline\s+)?namespace(\s+[\w:]+)?\s*\{\s*(//.*)?"
                  r"|\}\s*//\s*namespace.*"
                  r"|//.*\[(snippet|end): [^\]]+\].*)$")
CLOCK = re.compile(r"Clock::now|steady_clock|system_clock|high_resolution_clock|clock_gettime|rdtsc"
                   r"|time_runs|seconds_since|estimate_clock_ghz|std::chrono|cpu_seconds|getrusage")
STDOUT = re.compile(r"std::cout|\bprintf\s*\(|\bputs\s*\(|fmt::print\s*\((?!\s*stderr)|cachebook::measured\(")


def unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value


def listings(markdown: str) -> list[tuple[str, dict[str, str]]]:
    """(path, options) of every literalinclude in a MyST page."""
    found, lines = [], markdown.split("\n")
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if not m:
            continue
        options = {}
        for opt in lines[i + 1:]:
            o = OPTION.match(opt)
            if not o:
                break
            options[o.group(1)] = unquote(o.group(2))
        found.append((m.group(3), options))
    return found


def line_ranges(spec: str, count: int) -> set[int]:
    """The 0-based lines a `:lines:` option names ("1-3,7,10-")."""
    out: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        if "-" in part:
            a, b = part.split("-", 1)
            out.update(range(int(a or 1) - 1, int(b) if b else count))
        elif part:
            out.add(int(part) - 1)
    return out


def shown_lines(text: str, options: dict[str, str]) -> set[int]:
    """The 0-based lines of `text` a literalinclude with `options` shows, as Sphinx cuts them."""
    lines = text.split("\n")
    keep = sorted(line_ranges(options["lines"], len(lines))) if "lines" in options else list(range(len(lines)))
    start, end = 0, len(keep)
    for key, after in (("start-after", True), ("start-at", False)):
        if key in options:
            hits = [k for k, n in enumerate(keep) if options[key] in lines[n]]
            if not hits:
                return set()
            start = hits[0] + (1 if after else 0)
    for key, before in (("end-before", True), ("end-at", False)):
        if key in options:
            hits = [k for k, n in enumerate(keep) if k >= start and options[key] in lines[n]]
            if not hits:
                return set()
            end = hits[0] + (0 if before else 1)
    return set(keep[start:end])


def free_lines(lines: list[str]) -> set[int]:
    """Lines a page need not show: blank, preprocessor, namespace braces, markers, the file comment."""
    free, in_head = set(), True
    for n, line in enumerate(lines):
        stripped = line.strip()
        if in_head and (not stripped or stripped.startswith("//") or stripped.startswith("#")):
            free.add(n)
            continue
        in_head = False
        if not stripped or FREE.match(line):
            free.add(n)
    return free


def coverage(chapter: Path) -> dict[Path, set[int]]:
    """Every file the chapter's pages list from, with the 0-based lines they show."""
    shown: dict[Path, set[int]] = {}
    for page in sorted(chapter.glob("*.md")):
        for path, options in listings(page.read_text()):
            target = (chapter / path).resolve()
            if target.is_file():
                shown.setdefault(target, set()).update(shown_lines(target.read_text(), options))
    return shown


def lesson_files(chapter: Path) -> list[Path]:
    slug = chapter.name.split("_", 1)[1]
    return sorted([p for p in [chapter / f"{slug}.cpp"] if p.is_file()] + list(chapter.glob(f"{slug}_*.cpp")))


def code_files(chapter: Path) -> list[Path]:
    return sorted(p for p in chapter.rglob("*.[ch]pp") if "exercises" not in p.relative_to(chapter).parts)


def check_chapter(chapter: Path) -> list[str]:
    problems = []
    lessons = lesson_files(chapter)
    if not lessons:
        problems.append(f"{chapter.name}: no lesson file ({chapter.name.split('_', 1)[1]}.cpp)")
    shown = coverage(chapter)
    for lesson in lessons:
        lines = lesson.read_text().split("\n")
        if len(lines) - 1 > LESSON_LIMIT:
            problems.append(f"{lesson}: {len(lines) - 1} lines, over the lesson's {LESSON_LIMIT}")
        seen = shown.get(lesson.resolve(), set())
        missing = [n for n in range(len(lines)) if n not in seen and n not in free_lines(lines)]
        for n in missing[:5]:
            problems.append(f"{lesson}:{n + 1}: not on the page: {lines[n].strip()[:70]}")
        if len(missing) > 5:
            problems.append(f"{lesson}: {len(missing) - 5} more lines not on the page")
    for f in code_files(chapter):
        count = f.read_text().count("\n")
        if count > FILE_LIMIT:
            problems.append(f"{f}: {count} lines, over {FILE_LIMIT}")
    # the table of contents and its sections (sections.cpp, and a second page's sections_*.cpp)
    for printing in [chapter / "main.cpp", *sorted(chapter.glob("sections*.cpp"))]:
        if not printing.is_file():
            continue
        for n, line in enumerate(printing.read_text().split("\n")):
            code = line.split("//", 1)[0]
            if CLOCK.search(code):
                problems.append(f"{printing}:{n + 1}: {printing.name} reads a clock: {line.strip()[:70]}")
            if STDOUT.search(code):
                problems.append(f"{printing}:{n + 1}: {printing.name} prints outside the Report: {line.strip()[:70]}")
    return problems


def share(chapter: Path) -> tuple[int, int]:
    """(lines shown, non-blank lines) over all the chapter's C++ code but the exercises."""
    shown = coverage(chapter)
    total = seen = 0
    for f in code_files(chapter):
        lines = f.read_text().split("\n")
        counted = [n for n, line in enumerate(lines) if line.strip()]
        total += len(counted)
        seen += len([n for n in counted if n in shown.get(f.resolve(), set())])
    return seen, total


def run(root: Path, with_share: bool) -> int:
    chapters = sorted(p for p in (root / "chapters").glob("[0-9][0-9]_*") if p.is_dir())
    problems = [p for c in chapters for p in check_chapter(c)]
    for p in problems:
        print(p)
    if with_share:
        all_seen = all_total = 0
        for c in chapters:
            seen, total = share(c)
            all_seen, all_total = all_seen + seen, all_total + total
            lesson = sum(f.read_text().count("\n") for f in lesson_files(c))
            print(f"{c.name:20} lesson {lesson:4} lines; page shows {seen:5} of {total:5} lines of code "
                  f"({100 * seen / max(total, 1):.0f} %)")
        print(f"{'all':20} page shows {all_seen} of {all_total} lines of code ({100 * all_seen / max(all_total, 1):.0f} %)")
    longest = max((f.read_text().count("\n"), f) for c in chapters for f in code_files(c))
    print(f"{len(chapters)} chapters; {len(problems)} problems; the longest file: {longest[1].relative_to(root)}, "
          f"{longest[0]} lines")
    return 1 if problems else 0


GOOD_CPP = """// A file comment the page need not show.
#include "good.hpp"

namespace ch00 {

// [snippet: twice]
int twice(int x) {
    return 2 * x;
}
// [end: twice]

}  // namespace ch00
"""
GOOD_MD = """# A chapter

```{literalinclude} good.cpp
:language: cpp
:start-after: "[snippet: twice]"
:end-before: "[end: twice]"
```
"""
GOOD_MAIN = """int main() {
    cachebook::Report report("Chapter 0");
    fmt::print(stderr, "error\\n");
}
"""
BROKEN = {
    "a lesson line no listing shows": ({"good.cpp": GOOD_CPP.replace("}  // namespace", "int hidden = 1;\n\n}  // namespace")},
                                       "not on the page"),
    "a listing cut short": ({"chapter.md": GOOD_MD.replace('"[end: twice]"', '"return 2"')}, "not on the page"),
    "a lesson too long": ({"good.cpp": GOOD_CPP.replace("}  // namespace", "// [snippet: more]\n" + "int y = 0;\n" * 400
                                                        + "// [end: more]\n}  // namespace"),
                           "chapter.md": GOOD_MD + '```{literalinclude} good.cpp\n:start-after: "[snippet: more]"\n'
                                                   ':end-before: "[end: more]"\n```\n'}, "over the lesson"),
    "a file too long": ({"lab.cpp": "int z = 0;\n" * 450}, "over 400"),
    "a clock in main.cpp": ({"main.cpp": GOOD_MAIN.replace("int main() {", "int main() {\n    auto t = Clock::now();")},
                            "reads a clock"),
    "stdout in main.cpp": ({"main.cpp": GOOD_MAIN.replace('fmt::print(stderr, ', 'fmt::print(')}, "outside the Report"),
    "a clock in sections.cpp": ({"sections.cpp": "double t() { return clock_gettime(0, nullptr); }\n"}, "reads a clock"),
    "stdout in a second page's sections": ({"sections_more.cpp": 'void f() { std::cout << 1; }\n'},
                                           "outside the Report"),
    "no lesson file": ({"good.cpp": None}, "no lesson file"),
}


def self_test() -> int:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (changes, word) in [("the good example", ({}, None))] + list(BROKEN.items()):
            chapter = Path(tmp) / name.replace(" ", "-") / "00_good"
            chapter.mkdir(parents=True)
            files = {"good.cpp": GOOD_CPP, "chapter.md": GOOD_MD, "main.cpp": GOOD_MAIN} | changes
            for f, text in files.items():
                if text is not None:
                    (chapter / f).write_text(text)
            problems = check_chapter(chapter)
            if word is None and problems:
                failures.append(f"the good example fails: {problems}")
            elif word is not None and not any(word in p for p in problems):
                failures.append(f"{name}: not caught (report: {problems})")
    return tree_check.self_test_result(failures, len(BROKEN) + 1)


def main() -> int:
    return tree_check.main("literate_test.py", __doc__, lambda args: run(args.root, args.share), self_test, lambda parser: parser.add_argument("--share", action="store_true"))


if __name__ == "__main__":
    sys.exit(main())
