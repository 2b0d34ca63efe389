#!/usr/bin/env python3
"""handout.py NN DEST [--instructor] [--tar]: a chapter's exercises as a directory that builds on
its own (DEST/chNN/): the starter, the grader's public cases, the book's files they compare
against (exercises/exercises.json lists the sources; the headers are found by following their
#include lines), a CMake file, a Makefile whose `make grade` prints the score, Gradescope's
run_autograder and setup.sh, GitHub Classroom's autograding workflow, and a README.
Never the answer key: no solution.cpp, and held_back.cpp only with --instructor (the copy
that `make grade-all` and a Gradescope autograder use), as perf.cpp, the performance probe of an
exercise scored for speed, with perf.py that scores it. --tar also writes DEST/chNN.tar.gz."""
import argparse
import json
import re
import shlex
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "tools" / "teaching" / "handout"
PERF = ROOT / "tools" / "teaching" / "perf"
sys.path.insert(0, str(ROOT / "book"))
import book_chapters  # noqa: E402  the one list of chapters

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
CASE = re.compile(r'TEST_CASE\(\s*"([^"]+)"(?:\s*,\s*"([^"]*)")?')


class BadInput(Exception):
    pass


def chapter_dir(ch):
    try:
        chdir = book_chapters.chapter_numbered(ch).dir
    except ValueError as why:
        raise BadInput(str(why)) from None
    if not (chdir / "exercises" / "grader.cpp").exists():
        raise BadInput(f"chapter {ch} has no exercises ({chdir.relative_to(ROOT)}/exercises/grader.cpp)")
    return chdir


def cases_of(path):
    """(exercise number, points, name) of each TEST_CASE in a grader source, from its tags."""
    out = []
    for name, tags in CASE.findall(path.read_text()):
        points = re.search(r"\[(\d+) points?\]", tags or "")
        number = re.match(r"exercise (\d+)", name)
        out.append((int(number.group(1)) if number else 0, int(points.group(1)) if points else 1, name))
    return out


def headers_needed(files, include_dirs):
    """Every repository header that `files` include, directly or not, found as the compiler would."""
    seen, todo = set(), list(files)
    while todo:
        f = todo.pop()
        for name in INCLUDE.findall(f.read_text()):
            for d in [f.parent] + include_dirs:
                h = (d / name).resolve()
                if h.is_file() and ROOT in h.parents:
                    if h not in seen:
                        seen.add(h)
                        todo.append(h)
                    break
    return seen


def split_top(text, sep=","):
    """`text` cut at each `sep` outside <>, () and {}."""
    parts, depth, start = [], 0, 0
    for k, c in enumerate(text):
        depth += c in "<({"
        depth -= c in ">)}"
        if c == sep and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    return parts + [text[start:]]


def exercise_functions(header):
    """(namespace, return type, name, parameters, parameter names) of each function exercise.hpp declares."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", header.read_text(), flags=re.S)
    text = re.sub(r"^\s*#[^\n]*", "", text, flags=re.M)
    found = []
    for ns, body in re.findall(r"namespace\s+(\w+)\s*\{(.*)\}", text, flags=re.S):
        body = re.sub(r"\{[^{}]*\}", "", body)  # struct bodies and initialisers
        for statement in split_top(body, ";"):
            d = re.fullmatch(r"\s*([\w:<>,\s*&]+?)\s*\b(\w+)\s*\((.*)\)\s*", statement, flags=re.S)
            if not d or re.match(r"\s*(struct|inline|using|enum|class|template|static|constexpr)\b", statement):
                continue
            params = [p.split("=")[0].strip() for p in split_top(d.group(3)) if p.strip()]
            names = [re.search(r"(\w+)\s*$", p).group(1) for p in params]
            found.append((ns, " ".join(d.group(1).split()), d.group(2), ", ".join(params), names))
    return found


def judge_sources(header):
    """judge_proxy.cpp (each exercise function, called in a child by the judge, judge.hpp) and
    judge_exports.cpp (compiled with the submission: the same functions' addresses, in order)."""
    functions = exercise_functions(header)
    if not functions:
        raise BadInput(f"{header} declares no function the judge can call")
    note = "// Written by tools/teaching/handout.py from exercise.hpp.\n"
    proxy = [note, '#include "judge.hpp"\n#include "exercise.hpp"\n']
    exports = [note, '#include "exercise.hpp"\n', 'extern "C" const void* const judge_exercise_functions[] = {']
    for k, (ns, ret, name, params, names) in enumerate(functions):
        proxy.append(f"auto {ns}::{name}({params}) -> {ret} {{\n"
                     f"    return judge::Call<decltype(&{ns}::{name})>::run(\"{name}\", {k}{''.join(', ' + n for n in names)});\n}}\n")
        exports.append(f"    reinterpret_cast<const void*>(&{ns}::{name}),")
    return "\n".join(proxy), "\n".join(exports + ["};", ""])


def cmake_list(items):
    return " ".join('"' + i.replace('\\', '\\\\').replace('"', '\\"') + '"' for i in items)


def parts_cmake(meta, include_dirs):
    """parts.cmake: the book's sources as the chapter builds them, each part with its flags."""
    lines = ["# Written by tools/teaching/handout.py from exercises/exercises.json: the book's code the grader needs."]
    for k, part in enumerate(meta["parts"]):
        if part.get("processor"):  # a part for some processors only, e.g. "x86_64|AMD64" for AVX2 kernels
            lines.append(f'if(CMAKE_SYSTEM_PROCESSOR MATCHES "{part["processor"]}")')
        srcs = cmake_list("${CMAKE_CURRENT_SOURCE_DIR}/book/" + s for s in part["sources"])
        lines.append(f"add_library(book_part{k} OBJECT {srcs})")
        # GCC warns about std::hardware_destructive_interference_size outside a main file, so a
        # source that reads it is compiled on its own, not in the kit's batches.
        for src in part["sources"]:
            if "hardware_destructive_interference_size" in (ROOT / src).read_text():
                lines.append('set_source_files_properties(' + cmake_list(["${CMAKE_CURRENT_SOURCE_DIR}/book/" + src])
                             + " PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)")
        lines.append(f"target_link_libraries(book_part{k} PUBLIC fmt::fmt nlohmann_json::nlohmann_json)")
        lines.append(f"target_include_directories(book_part{k} PUBLIC "
                     + cmake_list("${CMAKE_CURRENT_SOURCE_DIR}/book/" + d for d in include_dirs) + ")")
        if part.get("options"):
            lines.append(f"target_compile_options(book_part{k} PRIVATE {cmake_list(part['options'])})")
        if part.get("defines"):
            lines.append(f"target_compile_definitions(book_part{k} PRIVATE {cmake_list(part['defines'])})")
        lines.append(f"target_sources(book PRIVATE $<TARGET_OBJECTS:book_part{k}>)")
        if part.get("processor"):
            lines.append("endif()")
    lines.append("target_include_directories(book PUBLIC "
                 + cmake_list("${CMAKE_CURRENT_SOURCE_DIR}/book/" + d for d in include_dirs) + ")")
    # starter_options: a list, or {processor regex: list} when the exercise differs by processor.
    options = meta.get("starter_options", [])
    if isinstance(options, dict):
        lines.append("set(STARTER_OPTIONS)")
        for regex, flags in options.items():
            lines.append(f'if(CMAKE_SYSTEM_PROCESSOR MATCHES "{regex}")\n  set(STARTER_OPTIONS {cmake_list(flags)})\nendif()')
    else:
        lines.append(f"set(STARTER_OPTIONS {cmake_list(options)})")
    return "\n".join(lines) + "\n"


def exercise_docs(header):
    """The `/// Exercise N` comment of each exercise in exercise.hpp, joined into one paragraph."""
    docs, current = [], None
    for line in header.read_text().splitlines():
        s = line.strip()
        if s.startswith("/// Exercise"):
            current = [s[3:].strip()]
            docs.append(current)
        elif s.startswith("///") and current is not None:
            current.append(s[3:].strip())
        else:
            current = None
    return [" ".join(d) for d in docs]


def readme(ch, chdir, meta, public, held_back):
    n = int(ch)
    lines = [f"# Chapter {n} exercises: {chdir.name[3:].replace('_', ' ')}", "",
             "Write the functions of `exercise.hpp` in `starter.cpp`, then grade them:", "",
             "```sh", "make grade        # builds the grader with your starter.cpp and prints the score", "```", "",
             "It needs a C++20 compiler, CMake, make, and Catch2 2, fmt and nlohmann-json (Debian and Ubuntu: "
             "`apt install g++ cmake make catch2 libfmt-dev nlohmann-json3-dev`).", "",
             "The grader prints one line per case (`pass` or `FAIL`, with its points), what a failed case "
             "checked, and `score: X / Y`. It compares your functions with the book's own code "
             "(in `book/`), never with numbers typed into the grader. Your instructor grades with more "
             "cases than these, so make your functions right, not fitted to the cases you see.", ""]
    docs = exercise_docs(chdir / "exercises" / "exercise.hpp")
    for ex in meta["exercises"]:
        k = ex["number"]
        pts_public = sum(p for e, p, _ in public if e == k)
        pts_held = sum(p for e, p, _ in held_back if e == k)
        lines += [f"## Exercise {k}", "", docs[k - 1] if k <= len(docs) else "", "",
                  f"- Goal: {ex['goal']}",
                  f"- Time: about {ex['minutes']} minutes; difficulty: {ex['difficulty']}.",
                  f"- Points: {pts_public} from the cases here, {pts_held} from the instructor's further cases.", ""]
    lines += ["## Files", "",
              "- `starter.cpp`: yours to edit; `exercise.hpp`: what each function must do;",
              "- `grader.cpp`: the cases" + ("; `checks.hpp`: how each is checked" if (chdir / "exercises" / "checks.hpp").exists() else "")
              + "; `grader_main.cpp`: the score lines; `book/`: the book's code the cases use;",
              "- `run_autograder`, `setup.sh`: Gradescope's entry points; "
              "`.github/workflows/classroom.yml`: GitHub Classroom's autograding workflow.", ""]
    return "\n".join(lines)


def classroom(public):
    """GitHub Classroom's autograding workflow, .github/workflows/classroom.yml, in the form GitHub
    documents: one classroom-resources/autograding-command-grader step per public case, worth its
    points, and the autograding-grading-reporter step that adds them up for Classroom."""
    q = json.dumps  # a JSON string is a YAML string
    lines = ["# GitHub Classroom's autograding (written by the book's tools/teaching/handout.py): each step runs",
             "# one exercise's public cases; the reporter sends the points to Classroom.",
             "name: Autograding Tests", "'on':", "- push", "- workflow_dispatch", "- repository_dispatch",
             "permissions:", "  checks: write", "  actions: read", "  contents: read",
             "jobs:", "  run-autograding-tests:", "    runs-on: ubuntu-latest",
             "    if: github.actor != 'github-classroom[bot]'", "    steps:",
             "    - name: Checkout code", "      uses: actions/checkout@v4",
             "    - name: Install the compiler and libraries",
             "      run: sudo apt-get update && sudo apt-get install -y --no-install-recommends g++ cmake make catch2 "
             "libfmt-dev nlohmann-json3-dev",
             "    - name: Build the grader",
             "      run: cmake -S . -B build && cmake --build build -j 2 --target grader"]
    ids = []
    for k, (number, points, name) in enumerate(public, 1):
        step_id = f"exercise-{number}-case-{k}"
        ids.append(step_id)
        spec = name.replace("\\", "\\\\").replace(",", "\\,").replace("[", "\\[")  # Catch2: the case by its name
        lines += [f"    - name: {q(name)}", f"      id: {step_id}", "      uses: classroom-resources/autograding-command-grader@v1",
                  "      with:", f"        test-name: {q(name)}", "        setup-command: ''",
                  f"        command: {q('build/grader --require-full ' + shlex.quote(spec))}",
                  "        timeout: 10", f"        max-score: {points}"]
    lines += ["    - name: Autograding Reporter", "      uses: classroom-resources/autograding-grading-reporter@v1", "      env:"]
    lines += [f"        {i.upper()}_RESULTS: \"${{{{steps.{i}.outputs.result}}}}\"" for i in ids]
    lines += ["      with:", f"        runners: {','.join(ids)}"]
    return "\n".join(lines) + "\n"


def write_handout(ch, dest, instructor):
    chdir = chapter_dir(ch)
    ex = chdir / "exercises"
    meta = json.loads((ex / "exercises.json").read_text())
    out = dest / f"ch{ch}"
    if out.exists():
        shutil.rmtree(out)
    (out / "book").mkdir(parents=True)
    sources = [ROOT / s for part in meta["handout"]["parts"] for s in part["sources"]]
    missing = [str(s.relative_to(ROOT)) for s in sources if not s.is_file()]
    if missing:
        raise BadInput(f"{ex / 'exercises.json'} lists files that do not exist: {', '.join(missing)}")
    include_dirs = sorted({"common/include", str(chdir.relative_to(ROOT))}
                          | {str(s.parent.relative_to(ROOT)) for s in sources})
    case_files = [ex / "grader.cpp"] + ([ex / "held_back.cpp"] if instructor and (ex / "held_back.cpp").exists() else [])
    # The performance probe of the exercises scored for speed: the instructor's copy only (it holds the reference).
    perf = [ex / "perf.cpp", PERF / "perf_probe.hpp", PERF / "perf_probe_main.cpp"]
    perf = perf if instructor and perf[0].exists() else []
    for f in case_files + perf + [ex / "exercise.hpp", ex / "starter.cpp"]:
        shutil.copy2(f, out / f.name)
    for f in sorted(set(sources) | headers_needed(case_files + perf + [ex / "exercise.hpp"] + sources,
                                                  [ROOT / d for d in include_dirs])):
        if f.parent in (ex, PERF):  # exercise.hpp, or the checks the cases share (checks.hpp): beside the cases
            shutil.copy2(f, out / f.name)
            continue
        target = out / "book" / f.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)
    for name in ("CMakeLists.txt", "Makefile", "run_autograder", "setup.sh"):
        shutil.copy2(TEMPLATE / name, out / name)
    for name in ("grader_main.cpp", "judge.hpp", "judge.cpp", "whole_io.hpp"):
        shutil.copy2(ROOT / "tools" / "teaching" / "grader" / name, out / name)
    if instructor:  # the judge: the cases in one process, each call of the submission in a child
        for name, text in zip(("judge_proxy.cpp", "judge_exports.cpp"), judge_sources(ex / "exercise.hpp")):
            (out / name).write_text(text)
        for name in ("grade_one.py", "sandbox.py", "perf.py"):  # run_autograder's grading, as grade_all.py's
            shutil.copy2(ROOT / "tools" / "teaching" / name, out / name)
    # Only the directories that hold a header the handout carries (not common/src).
    include_dirs = [d for d in include_dirs if any((out / "book" / d).glob("*.hpp")) or d == "common/include"]
    (out / "parts.cmake").write_text(parts_cmake(meta["handout"], include_dirs))
    public = cases_of(ex / "grader.cpp")
    held = cases_of(ex / "held_back.cpp") if (ex / "held_back.cpp").exists() else []
    (out / "README.md").write_text(readme(ch, chdir, meta, public, held))
    (out / ".github" / "workflows").mkdir(parents=True)
    (out / ".github" / "workflows" / "classroom.yml").write_text(classroom(public))
    return out


def write_zip(out):
    """DEST/chNN.zip: the handout's files at the root of the archive, run_autograder executable."""
    with zipfile.ZipFile(out.parent / f"{out.name}.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(p for p in out.rglob("*") if p.is_file() and "build" not in p.relative_to(out).parts):
            info = zipfile.ZipInfo(str(f.relative_to(out)))
            info.external_attr = (0o100000 | (f.stat().st_mode & 0o777)) << 16  # a regular file, its mode
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, f.read_bytes())
    print(f"wrote {out.parent / f'{out.name}.zip'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("chapter")
    ap.add_argument("dest")
    ap.add_argument("--instructor", action="store_true", help="include the held-back cases")
    ap.add_argument("--tar", action="store_true", help="also write DEST/chNN.tar.gz")
    ap.add_argument("--zip", action="store_true",
                    help="also write DEST/chNN.zip with the files at its root, as Gradescope takes an autograder")
    args = ap.parse_args()
    try:
        out = write_handout(args.chapter, Path(args.dest), args.instructor)
    except BadInput as e:
        print(f"handout: {e}", file=sys.stderr)
        return 2
    if args.tar:
        tar = out.parent / f"{out.name}.tar.gz"
        with tarfile.open(tar, "w:gz") as t:
            t.add(out, arcname=out.name)
        print(f"wrote {tar}")
    if args.zip:
        write_zip(out)
    if not (args.tar or args.zip):
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
