#!/usr/bin/python3
"""Builds the HTML book: `book/build.py --build BUILD`.

1. Runs every chapter program that has a chapter.md, BUILD/bin/chNN_slug, once (its default, measured run;
   chapter 9 with `--caches` set to the results of chapter 8, run before it),
   saving stdout to BUILD/book/generated/chNN_slug.txt and its `--json` results to
   BUILD/book/generated/chNN_slug.json. Saved results are reused while they are newer
   than the program, so a second build is quick.
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
sys.path.insert(0, str(BOOK))

import book_chapters as chapter_list  # noqa: E402
import book_machine as machine_info  # noqa: E402


def say(msg: str) -> None:
    print(f"book: {msg}", flush=True)


def fail(msg: str) -> None:
    print(f"book: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def chapter_inputs(generated: Path) -> dict[str, list[Path]]:
    """Results of earlier chapters that a chapter's run reads: chapter 9 derives its blocks from
    the caches chapter 8 measured (`--caches`), beside those the machine reports."""
    return {"ch09_matmul": [generated / "ch08_cliff.json"]}


def chapter_args(program: str, inputs: list[Path]) -> list[str]:
    # Relative to the tree, where the programs run: the path is printed on the page.
    return ["--caches", os.path.relpath(inputs[0], ROOT)] if program == "ch09_matmul" else []


def run_chapters(build: Path, generated: Path, force: bool) -> None:
    """Step 1: one default run of every chapter program; results reused while fresh."""
    env = {k: v for k, v in os.environ.items() if k != "CACHEBOOK_GOLDEN"}
    for ch in chapter_list.chapters():
        prog = build / "bin" / ch.program
        txt, js = generated / f"{ch.program}.txt", generated / f"{ch.program}.json"
        inputs = chapter_inputs(generated).get(ch.program, [])
        if not ch.page.exists():
            say(f"{ch.program}: no chapter.md yet, not run")
            continue
        if not prog.exists():
            fail(f"{ch.program}: {prog} does not exist; build it first (make build)")
        for p in inputs:
            if not p.exists():
                fail(f"{ch.program}: it reads {p}, which no earlier run wrote")
        if not force and txt.exists() and js.exists():
            newest_input = max([prog.stat().st_mtime] + [p.stat().st_mtime for p in inputs])
            if min(txt.stat().st_mtime, js.stat().st_mtime) > newest_input:
                say(f"{ch.program}: results are newer than the program and its inputs, reused")
                continue
        say(f"{ch.program}: running (default run, measured output)...")
        start = time.monotonic()
        tmp_txt, tmp_js = txt.with_suffix(".txt.tmp"), js.with_suffix(".json.tmp")
        with open(tmp_txt, "w") as out:
            try:
                rc = subprocess.run([str(prog), "--json", str(tmp_js)] + chapter_args(ch.program, inputs), stdout=out, stdin=subprocess.DEVNULL,
                                    env=env, cwd=ROOT, timeout=RUN_TIMEOUT).returncode
            except subprocess.TimeoutExpired:
                fail(f"{ch.program} did not finish in {RUN_TIMEOUT} s (a default run should take under a minute)")
        if rc != 0:
            fail(f"{ch.program} exited with status {rc}; its output so far is in {tmp_txt}")
        try:
            json.loads(tmp_js.read_text())
        except (OSError, ValueError) as e:
            fail(f"{ch.program} --json {tmp_js}: no valid JSON written ({e})")
        tmp_txt.replace(txt)
        tmp_js.replace(js)
        say(f"{ch.program}: done in {time.monotonic() - start:.1f} s")


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
