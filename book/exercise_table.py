"""The instructors' summary of every chapter's exercises: one row per exercise (topic, minutes,
difficulty, points), totals per chapter and in all, and suggested assignments with their totals.

Points come from where they are scored: the graders' cases (handout and held back, their
TEST_CASE tags), the speed score of an exercise that asks for speed (tools/teaching/perf.py:
two parts of POINTS each), and the rubric, which the instructor grades by hand and which is
worth RUBRIC_POINTS by the exercise's difficulty.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import book_chapters

ROOT = Path(__file__).resolve().parent.parent
# The written part an instructor grades by hand: worth more the harder the exercise.
RUBRIC_POINTS = {"easy": 1, "medium": 2, "hard": 3}
SPEED_PARTS = 2  # the model score and the measured score (tools/teaching/perf.py)


def speed_part_points() -> int:
    """POINTS of tools/teaching/perf.py: what each part of the speed score is worth."""
    m = re.search(r"^POINTS\s*=\s*(\d+)", (ROOT / "tools" / "teaching" / "perf.py").read_text(), re.M)
    if not m:
        raise ValueError("tools/teaching/perf.py defines no POINTS")
    return int(m.group(1))


def topic_of(doc: str, goal: str) -> str:
    """The exercise's label in its doc comment ("Exercise 2 (the cure): ..."), else the goal's
    first clause."""
    m = re.match(r"Exercise \d+ \(([^)]*)\)", doc)
    label = m.group(1).split(", scored for speed")[0] if m else ""
    if label and "course notes" not in label:
        return label
    first = re.split(r"[:,;.]", goal, maxsplit=1)[0].strip()
    return first[:1].lower() + first[1:]


def exercises_of(chapter) -> list[tuple[str, str]]:
    """(doc comment, declaration) of each `/// Exercise ...` in the chapter's exercise.hpp."""
    header = chapter.dir / "exercises" / "exercise.hpp"
    if not header.exists():
        return []
    found = []
    lines = header.read_text().splitlines()
    k = 0
    while k < len(lines):
        if lines[k].strip().startswith("/// Exercise"):
            doc = []
            while k < len(lines) and lines[k].strip().startswith("///"):
                doc.append(lines[k].strip()[3:].strip())
                k += 1
            decl = []  # every declaration up to the blank line (an exercise may ask for two functions)
            while k < len(lines) and lines[k].strip() and not lines[k].strip().startswith("///"):
                decl.append(lines[k])
                k += 1
            found.append((" ".join(doc), "\n".join(decl)))
        else:
            k += 1
    return found


def exercise_points(chapter) -> dict[int, tuple[int, int]]:
    """Exercise number: (points of the handout's cases, points of the held-back cases), from
    the graders' TEST_CASE tags ("[N points]", 1 without one; tools/teaching/grader/grader_main.cpp)."""
    points: dict[int, list[int]] = {}
    for k, name in enumerate(("grader.cpp", "held_back.cpp")):
        path = chapter.dir / "exercises" / name
        if not path.exists():
            continue
        for case, tags in re.findall(r'TEST_CASE\(\s*"([^"]+)"(?:\s*,\s*"([^"]*)")?', path.read_text()):
            number = re.match(r"exercise (\d+)", case)
            worth = re.search(r"\[(\d+) points?\]", tags or "")
            if number:
                points.setdefault(int(number.group(1)), [0, 0])[k] += int(worth.group(1)) if worth else 1
    return {n: (p[0], p[1]) for n, p in points.items()}


def exercise_rows() -> list[dict]:
    """Every exercise of every chapter, in order, with its points by where they are scored."""
    rows = []
    for ch in book_chapters.chapters():
        ex = ch.dir / "exercises"
        if not (ex / "exercises.json").exists():
            continue
        meta = {e["number"]: e for e in json.loads((ex / "exercises.json").read_text())["exercises"]}
        points = exercise_points(ch)
        for k, (doc, _) in enumerate(exercises_of(ch), start=1):
            m = meta.get(k)
            if m is None:
                raise ValueError(f"{ch.name}: exercise {k} has no entry in exercises.json")
            shown, held = points.get(k, (0, 0))
            speed = SPEED_PARTS * speed_part_points() if (ex / "perf.cpp").exists() and "scored for speed" in doc else 0
            rubric = RUBRIC_POINTS[m["difficulty"]]
            rows.append({"chapter": int(ch.name[:2]), "number": k, "id": f"{ch.name[:2]}.{k}",
                         "topic": topic_of(doc, m["goal"]), "minutes": m["minutes"], "difficulty": m["difficulty"],
                         "graded": shown + held, "speed": speed, "rubric": rubric,
                         "total": shown + held + speed + rubric})
    return rows


def _sum(rows: list[dict], field: str) -> int:
    return sum(r[field] for r in rows)


def summary_table(rows: list[dict]) -> list[str]:
    """A Markdown table: one row per exercise, a total per chapter, the total of the book."""
    head = ["| chapter | exercise | topic | minutes | difficulty | autograder | speed | rubric | points |",
            "|---|---|---|--:|---|--:|--:|--:|--:|"]
    out = list(head)

    def total(label: str, part: list[dict]) -> str:
        return (f"| {label} | | | **{_sum(part, 'minutes')}** | | {_sum(part, 'graded')} | {_sum(part, 'speed')} | "
                f"{_sum(part, 'rubric')} | **{_sum(part, 'total')}** |")

    for chapter in sorted({r["chapter"] for r in rows}):
        part = [r for r in rows if r["chapter"] == chapter]
        for r in part:
            out.append(f"| {chapter} | {r['number']} | {r['topic']} | {r['minutes']} | {r['difficulty']} | "
                       f"{r['graded']} | {r['speed'] or '-'} | {r['rubric']} | {r['total']} |")
        if len(part) > 1:
            out.append(total(f"*chapter {chapter}*", part))
    out.append(total("**all**", rows))
    return out


def assignment_lines(rows: list[dict], spec: str) -> list[str]:
    """One suggested assignment, "Title: 01.1 03.2 ...": the exercises and their totals."""
    title, _, ids = spec.partition(":")
    by_id = {r["id"]: r for r in rows}
    unknown = [i for i in ids.split() if i not in by_id]
    if not ids.split() or unknown:
        raise ValueError(f"assignment '{title.strip()}': unknown exercise(s) {unknown or 'none given'}")
    chosen = [by_id[i] for i in ids.split()]
    listed = "; ".join(f"chapter {r['chapter']}, exercise {r['number']} ({r['topic']})" for r in chosen)
    return [f"- **{title.strip()}**: {listed}. About **{_sum(chosen, 'minutes')} minutes**, "
            f"**{_sum(chosen, 'total')} points** ({_sum(chosen, 'graded')} from the autograder, "
            f"{_sum(chosen, 'speed')} for speed, {_sum(chosen, 'rubric')} by the rubrics)."]


def rubric_rule() -> str:
    return ", ".join(f"{d} {p}" for d, p in RUBRIC_POINTS.items())


def directive():
    """The `exercise-summary` directive (imported by cachebook_sphinx; Sphinx only there)."""
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective

    class ExerciseSummary(SphinxDirective):
        """The table of every exercise with totals; each line of the content is a suggested
        assignment, "Title: NN.k NN.k ..."."""

        has_content = True

        def run(self):
            for ch in book_chapters.chapters():
                for f in ("exercise.hpp", "exercises.json", "grader.cpp", "held_back.cpp", "perf.cpp"):
                    self.env.note_dependency(str(ch.dir / "exercises" / f))
            self.env.note_dependency(str(ROOT / "tools" / "teaching" / "perf.py"))
            rows = exercise_rows()
            lines = summary_table(rows) + ["", f"Rubric points by difficulty: {rubric_rule()}.", "",
                                            "Two suggested assignments:", ""]
            for spec in self.content:
                if spec.strip():
                    lines += assignment_lines(rows, spec)
            node = nodes.container(classes=["cb-exercise-summary"])
            self.state.nested_parse(StringList(lines, source="exercise-summary"), self.content_offset, node)
            return [node]

    return ExerciseSummary
