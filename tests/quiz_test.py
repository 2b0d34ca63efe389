#!/usr/bin/env python3
"""quiz_test.py BUILD: tools/teaching/quiz.py. For every question of two seeds' quizzes of chapter 2,
cachesim on the question's trace gives its answer; the two quizzes differ and a second run of a seed
is byte-identical; the Moodle XML is well-formed and uses Moodle's question types; every chapter with
questions gets a quiz; a roster gives one folder per id; and bad input (unknown chapter, a seed that is
not a word, a roster with a missing or a repeated id) gives one line on stderr, exit 2, and no files."""
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUIZ = ROOT / "tools" / "teaching" / "quiz.py"
build = Path(sys.argv[1]).resolve()
cachesim = build / "bin" / "cachesim"
problems = []


def quiz(*args, out):
    return subprocess.run(["/usr/bin/python3", str(QUIZ), *args, "--build", str(build), "--out", str(out)],
                          capture_output=True, text=True)


def files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def check_answers(folder, least=1):
    doc = json.loads((folder / "quiz.json").read_text())
    simulated = 0
    for q in doc["questions"]:
        for field in ("id", "text", "answer"):
            if field not in q:
                problems.append(f"{folder.name} {q.get('id')}: no {field}")
        if "trace" not in q:
            continue
        simulated += 1
        run = subprocess.run([str(cachesim), "-s", str(q["s"]), "-E", str(q["E"]), "-b", str(q["b"]),
                              "--policy", q["policy"], "-t", str(folder / q["trace"]), *q.get("flags", [])],
                             capture_output=True, text=True)
        m = re.search(rf"{q['count']}:(-?\d+)", run.stdout)
        if not m or int(m.group(1)) != q["answer"]:
            problems.append(f"{folder.name} {q['id']}: cachesim gives '{run.stdout.strip()}', the quiz {q['count']} {q['answer']}")
    if simulated < least:
        problems.append(f"{folder.name}: only {simulated} simulated questions")
    return doc


def check_moodle(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        problems.append(f"{path}: not well-formed XML: {e}")
        return
    if root.tag != "quiz":
        problems.append(f"{path}: root element {root.tag}, not quiz")
    kinds = [q.get("type") for q in root.findall("question")]
    if not set(kinds) <= {"category", "numerical", "shortanswer", "multichoice"}:
        problems.append(f"{path}: question types {sorted(set(kinds))}")
    for q in root.findall("question"):
        if q.get("type") == "category":
            continue
        if q.find("name/text") is None or q.find("questiontext/text") is None:
            problems.append(f"{path}: a question without name or text")
        answers = q.findall("answer")
        if not any(a.get("fraction") == "100" for a in answers):
            problems.append(f"{path}: question {q.findtext('name/text')} has no right answer")
        if q.get("type") == "numerical" and any(a.find("tolerance") is None for a in answers):
            problems.append(f"{path}: numerical question without tolerance")


with tempfile.TemporaryDirectory() as tmp:
    tmp = Path(tmp)
    for seed in ("alpha", "beta"):
        done = quiz("02", "--seed", seed, out=tmp / "a")
        if done.returncode != 0:
            problems.append(f"seed {seed}: exit {done.returncode}: {done.stderr.strip()}")
    alpha, beta = tmp / "a" / "ch02-alpha", tmp / "a" / "ch02-beta"
    if not problems:
        a, b = check_answers(alpha, 3), check_answers(beta, 3)
        if [q["answer"] for q in a["questions"]] == [q["answer"] for q in b["questions"]]:
            problems.append("seeds alpha and beta give the same answers")
        if [q["id"] for q in a["questions"]] != [q["id"] for q in b["questions"]]:
            problems.append("seeds alpha and beta ask different kinds of question")
        check_moodle(alpha / "quiz.xml")
        quiz("02", "--seed", "alpha", out=tmp / "again")
        if files(alpha) != files(tmp / "again" / "ch02-alpha"):
            problems.append("a second run of seed alpha is not byte-identical")
        for name in ("quiz.md", "answers.md"):
            if not (alpha / name).read_text().strip():
                problems.append(f"{name} is empty")
    for ch in ("01", "03", "04", "05", "09"):
        done = quiz(ch, "--seed", "s1", out=tmp / "all")
        if done.returncode != 0:
            problems.append(f"chapter {ch}: exit {done.returncode}: {done.stderr.strip()}")
        else:
            check_answers(tmp / "all" / f"ch{ch}-s1")
            check_moodle(tmp / "all" / f"ch{ch}-s1" / "quiz.xml")

    roster = tmp / "class.csv"
    roster.write_text("name,id\nAda,s001\nBob,s002\n")
    done = quiz("02", "--roster", str(roster), out=tmp / "class")
    got = sorted(p.name for p in (tmp / "class").iterdir()) if (tmp / "class").is_dir() else []
    if done.returncode != 0 or got != ["ch02-s001", "ch02-s002"]:
        problems.append(f"roster: exit {done.returncode}, folders {got}: {done.stderr.strip()}")

    bad = {"missing id": "name,id\nAda,s001\nBob,\n", "duplicate id": "id\ns001\ns002\ns001\n",
           "no id column": "name\nAda\n", "id not a word": "id\ns 001\n"}
    cases = [(f"roster with {k}", ["02", "--roster", str(tmp / f"{k}.csv")]) for k in bad]
    for k, text in bad.items():
        (tmp / f"{k}.csv").write_text(text)
    cases += [("unknown chapter", ["42", "--seed", "x"]), ("chapter without questions", ["07", "--seed", "x"]),
              ("chapter not two digits", ["2", "--seed", "x"]), ("seed not a word", ["02", "--seed", "a/b"]),
              ("empty seed", ["02", "--seed", ""])]
    for what, args in cases:
        out = tmp / "bad"
        done = quiz(*args, out=out)
        lines = done.stderr.strip().splitlines()
        if done.returncode != 2 or len(lines) != 1:
            problems.append(f"{what}: exit {done.returncode}, stderr {lines}")
        if out.exists() and any(out.iterdir()):
            problems.append(f"{what}: wrote {sorted(p.name for p in out.iterdir())}")

for p in problems:
    print(p)
print("quiz: " + ("ok" if not problems else f"{len(problems)} problems"))
sys.exit(1 if problems else 0)
