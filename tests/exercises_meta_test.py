#!/usr/bin/env python3
"""Every exercise has what the instructors' guide and the handout's README show: in
exercises/exercises.json a goal, a time in minutes, a difficulty and a rubric; in the graders at
least one public case (grader.cpp) and one held-back case (held_back.cpp); and the handout's
parts name files that exist."""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "teaching"))
import handout  # noqa: E402

problems = []
chapters = sorted(ROOT.glob("chapters/*/exercises/grader.cpp"))
for grader in chapters:
    ex = grader.parent
    name = ex.parent.name
    numbers = [int(n) for n in re.findall(r"^/// Exercise (\d+)", (ex / "exercise.hpp").read_text(), re.M)]
    meta_path = ex / "exercises.json"
    if not meta_path.is_file():
        problems.append(f"{name}: no exercises/exercises.json")
        continue
    meta = json.loads(meta_path.read_text())
    entries = {e.get("number"): e for e in meta.get("exercises", [])}
    if sorted(entries) != numbers:
        problems.append(f"{name}: exercise.hpp has exercises {numbers}, exercises.json {sorted(entries)}")
    public = handout.cases_of(ex / "grader.cpp")
    held = handout.cases_of(ex / "held_back.cpp") if (ex / "held_back.cpp").is_file() else []
    for n in numbers:
        e = entries.get(n, {})
        for field in ("goal", "rubric"):
            if not str(e.get(field, "")).strip():
                problems.append(f"{name}: exercise {n} has no {field}")
        if not isinstance(e.get("minutes"), int) or e["minutes"] <= 0:
            problems.append(f"{name}: exercise {n} has no time in minutes")
        if e.get("difficulty") not in ("easy", "medium", "hard"):
            problems.append(f"{name}: exercise {n}'s difficulty is {e.get('difficulty')!r}, not easy, medium or hard")
        if not any(k == n and p > 0 for k, p, _ in public):
            problems.append(f"{name}: exercise {n} has no public case worth points in grader.cpp")
        if not any(k == n and p > 0 for k, p, _ in held):
            problems.append(f"{name}: exercise {n} has no held-back case worth points in held_back.cpp")
    for part in meta.get("handout", {}).get("parts", []):
        for s in part.get("sources", []):
            if not (ROOT / s).is_file():
                problems.append(f"{name}: handout part {s} does not exist")
    if any("held back" not in n for _, _, n in held) or any("held back" in n for _, _, n in public):
        problems.append(f"{name}: held-back cases are named '(held back)' and only they")

print("\n".join(problems) or f"{len(chapters)} chapters: every exercise has its goal, time, difficulty, rubric, "
      "public and held-back cases")
sys.exit(1 if problems else 0)
