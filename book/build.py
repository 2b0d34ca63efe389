#!/usr/bin/python3
"""Builds the HTML book: `book/build.py --build BUILD`.

1. Runs every chapter program that has a chapter.md, BUILD/bin/chNN_slug, once (its default, measured run;
   chapter 9 with `--caches` set to the results of chapter 8, run before it), through
   tools/dev/chapter_runs.py, which keeps each run in BUILD/runs/ under the key of its commit, build
   and machine: a run `make run` made under the same key is shown, not run again (--rerun runs
   them all). Copies stdout to BUILD/book/generated/chNN_slug.txt and the `--json` results to
   BUILD/book/generated/chNN_slug.json.
2. Describes this machine (CPU, caches, date) in BUILD/book/generated/machine.json,
   for plot captions and the pages.
3. Renders the plots of book/plots/chNN.py from the JSON, as SVG.
4. Runs Doxygen over common/include (XML, for Breathe).
5. Runs sphinx-build with warnings as errors; HTML in BUILD/book/html. Before it, builds the
   cache model for the pages and Node (book/model/build_model.py, BUILD/book/model); after it,
   copies the model into the site at _static/model/.

Runs under Debian's /usr/bin/python3 (Sphinx, MyST, Breathe, furo, matplotlib).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
RUN_TIMEOUT = 900  # seconds for one chapter's default run
RUNS_TOOL = ROOT / "tools" / "dev" / "chapter_runs.py"
sys.path.insert(0, str(BOOK))

import book_chapters as chapter_list  # noqa: E402
import book_machine as machine_info  # noqa: E402


def say(msg: str) -> None:
    print(f"book: {msg}", flush=True)


def fail(msg: str) -> None:
    print(f"book: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def run_chapters(build: Path, generated: Path, force: bool) -> None:
    """Step 1: one default run of every chapter program, kept by tools/dev/chapter_runs.py: a run
    of the same commit, build and machine (make run's) is shown as it is, not run again."""
    for ch in chapter_list.chapters():
        prog = build / "bin" / ch.program
        if not ch.page.exists():
            say(f"{ch.program}: no chapter.md yet, not run")
            continue
        if not prog.exists():
            fail(f"{ch.program}: {prog} does not exist; build it first (make build)")
        name = ch.program[len("ch"):]
        kept = subprocess.run([sys.executable, str(RUNS_TOOL), "fresh", str(build / "bin"), name],
                              capture_output=True, text=True)
        if kept.returncode == 0 and not force:
            say(f"{ch.program}: the kept run of this commit, build and machine, reused ({kept.stdout.strip()})")
        else:
            say(f"{ch.program}: running (default run, measured output)...")
            try:
                r = subprocess.run([sys.executable, str(RUNS_TOOL), "run", str(build / "bin"), name],
                                   capture_output=True, text=True, timeout=RUN_TIMEOUT)
            except subprocess.TimeoutExpired:
                fail(f"{ch.program} did not finish in {RUN_TIMEOUT} s (a default run should take under a minute)")
            if r.returncode != 0:
                fail(f"{ch.program} exited with status {r.returncode}{': ' + r.stderr.strip() if r.stderr else ''}")
            say(f"{ch.program}: done in {float(r.stdout.split(chr(9))[1]):.1f} s")
        run_dir = build / "runs" / name
        try:
            json.loads((run_dir / "results.json").read_text())
        except (OSError, ValueError) as e:
            fail(f"{ch.program} --json: no valid JSON kept in {run_dir} ({e})")
        shutil.copyfile(run_dir / "stdout.txt", generated / f"{ch.program}.txt")
        shutil.copyfile(run_dir / "results.json", generated / f"{ch.program}.json")


def run_cachesim_page(build: Path, generated: Path, force: bool) -> None:
    """book/cachesim.md: cachesim beside cachegrind (tools/cachesim/compare_cachegrind.py),
    saved as generated/cachesim_compare.{txt,json} (`{{ cachesim.* }}` in the page)."""
    if not (BOOK / "cachesim.md").exists():
        return
    txt, js = generated / "cachesim_compare.txt", generated / "cachesim_compare.json"
    inputs = [build / "bin" / "cachesim", build / "bin" / "cachesim_demo", ROOT / "tools/cachesim/compare_cachegrind.py",
              build / "bin" / "bench_cachesim"]
    for p in inputs:
        if not p.exists():
            fail(f"cachesim page: {p} does not exist; build it first (make build)")
    if not force and txt.exists() and js.exists() and "throughput" in json.loads(js.read_text()):
        if min(txt.stat().st_mtime, js.stat().st_mtime) > max(p.stat().st_mtime for p in inputs):
            say("cachesim_compare: results are newer than the programs, reused")
            return
    say("cachesim_compare: lackey + cachesim + cachegrind on tools/cachesim/demo ...")
    with open(txt.with_suffix(".txt.tmp"), "w") as out:
        rc = subprocess.run(["/usr/bin/python3", str(inputs[2]), "--bin", str(build / "bin"), "--json",
                             str(js.with_suffix(".json.tmp"))], stdout=out, stdin=subprocess.DEVNULL, cwd=ROOT,
                            timeout=RUN_TIMEOUT).returncode
    if rc != 0:
        fail(f"compare_cachegrind.py exited with status {rc}")
    data = json.loads(js.with_suffix(".json.tmp").read_text())
    data["throughput"] = cachesim_throughput(build)
    js.with_suffix(".json.tmp").write_text(json.dumps(data, indent=2) + "\n")
    txt.with_suffix(".txt.tmp").replace(txt)
    js.with_suffix(".json.tmp").replace(js)


BENCH_RUNS = 3  # the minimum of this many runs (make bench takes 9)


def cachesim_throughput(build: Path) -> dict:
    """How fast cachesim is on this machine (`{{ cachesim.throughput.* }}`): bench_cachesim
    (tools/cachesim/bench.cpp) on the trace of a 1024 x 1024 float transpose, the program
    started as a reader starts it, beside a simulator written the way the lab's reference is."""
    say(f"cachesim_compare: bench_cachesim, {BENCH_RUNS} runs ...")
    out = build / "book" / "generated" / "cachesim_bench.json"
    rc = subprocess.run([str(build / "bin" / "bench_cachesim"), "--runs", str(BENCH_RUNS), "--json", str(out)],
                        stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT).returncode
    if rc != 0:
        fail(f"bench_cachesim exited with status {rc}")
    bench = json.loads(out.read_text())
    return {
        "n": bench["n"],
        "lines": bench["lines"],
        "runs": BENCH_RUNS,
        "million_lines_per_second": round(bench["end_to_end"]["lines_per_second"] / 1e6, 1),
        "seconds": round(bench["end_to_end"]["min_seconds"], 3),
        "cpu_million_lines_per_second": round(bench["end_to_end_cpu"]["lines_per_second"] / 1e6, 1),
        "csim_style_seconds": round(bench["csim_style"]["min_seconds"], 2),
        "times_csim_style": round(bench["speedup_vs_csim_style"], 1),
    }


def render_plots(generated: Path, machine: dict) -> None:
    """Step 3: book/plots/chNN.py -> generated/plots/chNN_NAME.svg (see book/plots/README.md)."""
    import plots as plot_lib  # book/plots/__init__.py

    made = plot_lib.render_all(generated, generated / "plots", machine, say)
    say(f"plots: {made} SVG file(s)")


# Declarations of common/include that the API page leaves out: how a program prints measured
# values as <measured> for the golden files (CONTRIBUTING.md). Doxygen matches a member by its
# own name (golden_mode, cachebook::Value::shown, cachebook::Report::golden, ...), so each name
# here is one no other declaration of common/include has (book/test_book.py checks).
API_HIDDEN = ("golden_mode", "kMeasuredPlaceholder", "shown", "golden")


def run_doxygen(build: Path, out: Path, hidden: tuple[str, ...] = API_HIDDEN) -> None:
    """Step 4: Doxygen XML of common/include for Breathe, without the declarations `hidden` names."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "xml", ignore_errors=True)  # a header moved away must not stay on the API page
    doxyfile = out / "Doxyfile"
    doxyfile.write_text(
        "\n".join(
            [
                'PROJECT_NAME = "cachebook"',
                f'INPUT = "{ROOT / "common" / "include" / "cachebook"}"',
                "FILE_PATTERNS = *.hpp",
                "RECURSIVE = NO",
                f'OUTPUT_DIRECTORY = "{out}"',
                "GENERATE_XML = YES",
                "GENERATE_HTML = NO",
                "GENERATE_LATEX = NO",
                "EXTRACT_ALL = YES",
                # The golden test's plumbing, which no reader's code calls, stays off the page.
                "EXCLUDE_SYMBOLS = " + " ".join(hidden),
                "QUIET = YES",
                "WARNINGS = NO",
                f'STRIP_FROM_PATH = "{ROOT}"',
                "",
            ]
        )
    )
    say("doxygen: XML of common/include")
    rc = subprocess.run(["doxygen", str(doxyfile)], cwd=out).returncode
    if rc != 0:
        fail(f"doxygen exited with status {rc}")


def build_model(book_out: Path) -> Path:
    """Step 4b: the cache model for the pages and Node (book/model/build_model.py); its
    status, 2 when the wasm toolchain is missing, ends the build."""
    out = book_out / "model"
    rc = subprocess.run([sys.executable, str(BOOK / "model" / "build_model.py"), "--out", str(out)]).returncode
    if rc != 0:
        print(f"book: error: the wasm model did not build (status {rc})", file=sys.stderr, flush=True)
        sys.exit(rc)
    return out


def ship_model(model: Path, html: Path) -> None:
    """The model's wasm and JavaScript into the site, at _static/model/."""
    dest = html / "_static" / "model"
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("cachebook_model.wasm", "cachebook_model.mjs", "cachebook_model.js", "cachesim.mjs"):
        shutil.copyfile(model / name, dest / name)


def run_sphinx(build: Path, book_out: Path, generated: Path, doxygen_xml: Path) -> None:
    """Step 5: the HTML, warnings as errors."""
    html = book_out / "html"
    env = dict(os.environ)
    env["CACHEBOOK_GENERATED"] = str(generated)
    env["CACHEBOOK_DOXYGEN_XML"] = str(doxygen_xml)
    cmd = [
        sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q",
        "-c", str(BOOK), "-d", str(book_out / "doctrees"), str(ROOT), str(html),
    ]
    say("sphinx: " + " ".join(cmd[2:]))
    rc = subprocess.run(cmd, env=env, cwd=ROOT).returncode
    if rc != 0:
        fail(f"sphinx-build failed (status {rc}); the warnings above are errors")
    # The root of the site lands the reader on the book's front page.
    (html / "index.html").write_text(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>cachebook</title>\n'
        '<meta http-equiv="refresh" content="0; url=book/index.html"></head>\n'
        '<body><p><a href="book/index.html">cachebook</a></p></body></html>\n'
    )
    say(f"HTML: {html / 'book' / 'index.html'}")


def main() -> int:
    ap = argparse.ArgumentParser(description="Build the cachebook HTML book.")
    ap.add_argument("--build", required=True, help="the CMake build directory (holds bin/)")
    ap.add_argument("--rerun", action="store_true", help="run every chapter again even if its results are fresh")
    args = ap.parse_args()
    build = Path(args.build).resolve()
    if not (build / "bin").is_dir():
        fail(f"{build / 'bin'} does not exist; build the programs first (make build)")
    book_out = build / "book"
    generated = book_out / "generated"
    generated.mkdir(parents=True, exist_ok=True)

    start = time.monotonic()
    run_chapters(build, generated, args.rerun)
    run_cachesim_page(build, generated, args.rerun)
    machine = machine_info.describe(generated)
    (generated / "machine.json").write_text(json.dumps(machine, indent=2) + "\n")
    say(f"machine: {machine['summary']}")
    render_plots(generated, machine)
    run_doxygen(build, book_out / "doxygen")
    model = build_model(book_out)
    run_sphinx(build, book_out, generated, book_out / "doxygen" / "xml")
    ship_model(model, book_out / "html")
    say(f"built in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
