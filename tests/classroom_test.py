#!/usr/bin/env python3
"""classroom_test.py: every chapter's handout carries GitHub Classroom's autograding workflow in the
form GitHub documents (.github/workflows/classroom.yml): a classroom-resources/autograding-command-grader
step per public case, worth that case's points, that runs exactly that case, and the
autograding-grading-reporter step with every grader step's result; and not the old
.github/classroom/autograding.json, which Classroom no longer reads."""
import shlex
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "teaching"))
import handout  # noqa: E402

problems = []
with tempfile.TemporaryDirectory() as tmp:
    for grader in sorted(ROOT.glob("chapters/*/exercises/grader.cpp")):
        ch = grader.parent.parent.name[:2]
        out = handout.write_handout(ch, Path(tmp), instructor=False)
        flow = out / ".github" / "workflows" / "classroom.yml"
        if (out / ".github" / "classroom" / "autograding.json").exists():
            problems.append(f"ch{ch}: the handout still writes .github/classroom/autograding.json")
        if not flow.is_file():
            problems.append(f"ch{ch}: no .github/workflows/classroom.yml")
            continue
        doc = yaml.safe_load(flow.read_text())
        if not {"push"} <= set(doc.get("on", [])):
            problems.append(f"ch{ch}: the workflow does not run on push")
        steps = doc["jobs"]["run-autograding-tests"]["steps"]
        graders = [s for s in steps if s.get("uses") == "classroom-resources/autograding-command-grader@v1"]
        reporters = [s for s in steps if s.get("uses") == "classroom-resources/autograding-grading-reporter@v1"]
        public = handout.cases_of(grader)
        if [g["with"]["test-name"] for g in graders] != [name for _, _, name in public]:
            problems.append(f"ch{ch}: grader steps {[g['with']['test-name'] for g in graders]}, public cases {public}")
        if [g["with"]["max-score"] for g in graders] != [points for _, points, _ in public]:
            problems.append(f"ch{ch}: grader steps' points differ from the cases'")
        for g, (_, _, name) in zip(graders, public):
            words = shlex.split(g["with"]["command"])
            spec = words[-1].replace("\\,", ",").replace("\\[", "[").replace("\\\\", "\\")
            if words[:2] != ["build/grader", "--require-full"] or spec != name:
                problems.append(f"ch{ch}: step {g['id']} runs {words}, not the case '{name}'")
        if len(reporters) != 1 or steps[-1] is not reporters[0]:
            problems.append(f"ch{ch}: not one reporter step, last")
            continue
        ids = [g["id"] for g in graders]
        if reporters[0]["with"]["runners"].split(",") != ids:
            problems.append(f"ch{ch}: the reporter's runners {reporters[0]['with']['runners']}, the steps {ids}")
        want = {f"{i.upper()}_RESULTS": f"${{{{steps.{i}.outputs.result}}}}" for i in ids}
        if reporters[0].get("env") != want:
            problems.append(f"ch{ch}: the reporter's env {reporters[0].get('env')}")
for p in problems:
    print(p)
print("classroom: " + ("ok" if not problems else f"{len(problems)} problems"))
sys.exit(1 if problems else 0)
