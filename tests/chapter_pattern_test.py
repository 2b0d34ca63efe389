#!/usr/bin/python3
"""Every chapter teaches in the same pattern (CONTRIBUTING.md, "The chapter pattern").

    chapter_pattern_test.py [--root SOURCE_DIR]     checks every chapters/NN_*/chapter.md
    chapter_pattern_test.py --self-test             checks that each broken example is caught

A chapter's chapter.md must have
- at least two "Predict first" prompts (an admonition with class cb-predict), each with a
  program-output block after it and before the Summary: the output that answers it;
- a `## Summary`;
- a `## Check your understanding` with at least four numbered questions, each starting with
  its kind in bold (**Recall.**, **Reasoning.**, **Application.** or **Design.**), at least
  two kinds in all, and each with its answer in a ```{fold} Answer``` block;
- the sections in the order Summary, Check your understanding, Exercises, then any
  Where this leads.
Each failure names the chapter and what is missing; the exit status is 1 if any chapter fails.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tree_check  # noqa: E402

KINDS = ("Recall", "Reasoning", "Application", "Design")
ORDER = ["Summary", "Check your understanding", "Exercises", "Where this leads"]
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*(\{[\w-]+\})?\s*(.*)$")
QUESTION = re.compile(r"^(\d+)\.\s+(.*)$")
KIND = re.compile(r"^\*\*(\w+)\.\*\*")


def blocks(lines: list[str]) -> list[tuple[int, str, str, list[str]]]:
    """(line index, directive, argument, body lines) of every fenced block, outermost only."""
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m.group(2), i
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            i += 1
        found.append((start, (m.group(3) or "").strip("{}"), m.group(4).strip(), lines[start + 1:i]))
        i += 1
    return found


def headings(lines: list[str], fenced: set[int]) -> dict[str, int]:
    """The first line index of each level-2 heading outside code blocks."""
    out: dict[str, int] = {}
    for i, line in enumerate(lines):
        if i not in fenced and line.startswith("## "):
            out.setdefault(line[3:].strip(), i)
    return out


def fenced_lines(found) -> set[int]:
    inside = set()
    for start, _, _, body in found:
        inside.update(range(start, start + len(body) + 2))
    return inside


def check_predictions(found, summary_at: int) -> list[str]:
    predicts = [start for start, name, arg, body in found
                if name == "admonition" and arg == "Predict first" and ":class: cb-predict" in body]
    outputs = [start for start, name, _, _ in found if name == "program-output"]
    answered = [p for p in predicts if any(p < o < summary_at for o in outputs)]
    problems = []
    if len(predicts) < 2:
        problems.append(f"{len(predicts)} 'Predict first' prompt(s) (admonition with :class: cb-predict), "
                        "at least 2 needed")
    elif len(answered) < 2:
        problems.append(f"only {len(answered)} 'Predict first' prompt(s) have a program-output block after "
                        "them (before the Summary), at least 2 needed")
    return problems


def check_questions(lines: list[str], found, start: int, end: int) -> list[str]:
    """The numbered questions between `start` and `end`: kinds and folded answers."""
    folds = [s for s, name, arg, _ in found if name == "fold" and arg == "Answer" and start < s < end]
    fenced = fenced_lines(found)
    questions = [(i, QUESTION.match(lines[i])) for i in range(start, end)
                 if i not in fenced and QUESTION.match(lines[i])]
    problems, kinds = [], set()
    for n, (at, m) in enumerate(questions):
        following = questions[n + 1][0] if n + 1 < len(questions) else end
        kind = KIND.match(m.group(2))
        if not kind or kind.group(1) not in KINDS:
            problems.append(f"question {m.group(1)} does not start with its kind in bold "
                            f"({', '.join('**' + k + '.**' for k in KINDS)})")
        else:
            kinds.add(kind.group(1))
        if not any(at < f < following for f in folds):
            problems.append(f"question {m.group(1)} has no ```{{fold}} Answer``` block")
    if len(questions) < 4:
        problems.append(f"'Check your understanding' has {len(questions)} numbered question(s), at least 4 needed")
    if questions and len(kinds) < 2:
        problems.append(f"the questions use {len(kinds)} kind(s), at least 2 needed")
    return problems


def check_chapter(text: str) -> list[str]:
    """What the chapter lacks, one sentence each; empty when it follows the pattern."""
    lines = text.splitlines()
    found = blocks(lines)
    heads = headings(lines, fenced_lines(found))
    problems = [f"no '## {name}' section" for name in ORDER[:3] if name not in heads]
    present = [(heads[name], name) for name in ORDER if name in heads]
    if present != sorted(present):
        problems.append("sections out of order: " + ", ".join(name for _, name in sorted(present))
                        + " (wanted " + ", ".join(ORDER) + ")")
    problems += check_predictions(found, heads.get("Summary", len(lines)))
    if "Check your understanding" in heads:
        start = heads["Check your understanding"]
        later = [at for at in heads.values() if at > start]
        problems += check_questions(lines, found, start, min(later, default=len(lines)))
    return problems


def chapter_files(root: Path) -> list[tuple[str, Path | None]]:
    """(number, its chapter.md or None) of every chapter directory; none at all is a failure."""
    dirs = sorted(d for d in root.glob("chapters/[0-9][0-9]_*") if d.is_dir())
    if not dirs:
        return [("any", None)]
    return [(d.name[:2], d / "chapter.md" if (d / "chapter.md").exists() else None) for d in dirs]


def run(root: Path) -> int:
    failed = 0
    for number, path in chapter_files(root):
        problems = ["no chapters/%s_*/chapter.md" % number] if path is None else check_chapter(path.read_text())
        name = path.parent.name if path else number
        for problem in problems:
            print(f"chapter {name}: {problem}")
        failed += bool(problems)
        if not problems:
            print(f"chapter {name}: follows the pattern")
    return 1 if failed else 0


GOOD = """# A chapter
```{admonition} Predict first
:class: cb-predict
How many?
```
```{program-output} chXX
:section: 1
```
```{admonition} Predict first
:class: cb-predict
Which is faster?
```
````{program-output} chXX
:section: 2
````
## Summary
- a point
## Check your understanding
1. **Recall.** What?

   ```{fold} Answer
   This.
   ```
2. **Reasoning.** Why?

   ```{fold} Answer
   Because.
   ```
3. **Application.** How?

   ```{fold} Answer
   So.
   ```
4. **Design.** Which?

   ```{fold} Answer
   That.
   ```
## Exercises
1. Do it.
## Where this leads
"""

# Each broken chapter, and a word its report must contain.
BROKEN = {
    "no summary": (GOOD.replace("## Summary\n", ""), "Summary"),
    "one prediction": (GOOD.replace("Which is faster?", "x").replace(
        "```{admonition} Predict first\n:class: cb-predict\nx\n```\n", ""), "Predict first"),
    "prediction after its output": (GOOD.replace("````{program-output} chXX\n:section: 2\n````\n", ""),
                                    "program-output"),
    "wrong class": (GOOD.replace(":class: cb-predict", ":class: note"), "Predict first"),
    "three questions": (GOOD.split("4. **Design.**")[0] + "## Exercises\n1. Do it.\n", "at least 4"),
    "untagged question": (GOOD.replace("**Design.** Which?", "Which?"), "question 4"),
    "unfolded answer": (GOOD.replace("```{fold} Answer\n   That.", "That.\n   ```text"), "question 4"),
    "one kind": (re.sub(r"\*\*(Reasoning|Application|Design)\.\*\*", "**Recall.**", GOOD), "kind"),
    "out of order": (GOOD.replace("## Exercises\n1. Do it.\n", "").replace(
        "## Summary", "## Exercises\n1. Do it.\n## Summary"), "out of order"),
}


def self_test() -> int:
    failures = []
    if check_chapter(GOOD):
        failures.append(f"the good example fails: {check_chapter(GOOD)}")
    for name, (text, word) in BROKEN.items():
        problems = check_chapter(text)
        if not any(word in p for p in problems):
            failures.append(f"{name}: not caught (report: {problems})")
    return tree_check.self_test_result(failures, len(BROKEN) + 1)


def main() -> int:
    return tree_check.main("chapter_pattern_test.py", __doc__, lambda args: run(args.root), self_test)


if __name__ == "__main__":
    sys.exit(main())
