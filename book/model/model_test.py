#!/usr/bin/python3
"""The model in the pages against the native one: `model_test.py --bin BUILD/bin --model DIR`.

Builds the wasm model into DIR (book/model/build_model.py), then requires:
1. the Node cachesim (cachesim.mjs; its run asked of a few Node processes that each load the
   model once, and the program itself twice) prints native cachesim's lines, on the cachelab
   reference traces, generated transpose traces and random traces, under every policy
   (OPT too), with and without --classify (the misses by kind), and on random geometries
   in the manner of tests/test_cachesim.cpp's differential cases;
2. access by access (both programs' -v output) on the course notes' walks, made by the
   model's own generators (trace.hpp) and read back by native cachesim;
3. the course notes' tables (the 4 KiB 8-way miss table, the tiled transpose's misses, six loop
   orders in a 4-line cache: chapters 2 to 4) from the JavaScript API, and the transpose walk
   equal to native cachesim --generate-transpose;
4. bad arguments and malformed traces: exit status 2 and native cachesim's message.
Exit status 0 when all hold, 1 naming each difference otherwise.
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CACHELAB = ROOT / "tests/data/cachelab"
BAD_TRACES = ROOT / "tests/data/cachesim"
# The cachelab reference rows (tests/data/cachelab/README.md): -s, -E, -b, trace.
REFERENCE_ROWS = [(1, 1, 1, "yi2.trace"), (4, 2, 4, "yi.trace"), (2, 1, 4, "dave.trace"), (2, 1, 3, "trans.trace"),
                  (2, 2, 3, "trans.trace"), (2, 4, 3, "trans.trace"), (5, 1, 5, "trans.trace"), (5, 1, 5, "long.trace")]
POLICIES = ["lru", "fifo", "random", "plru", "opt"]  # opt: Belady's, offline (miss_kinds.cpp)

failures: list[str] = []
# A few comparisons at once: each runs native cachesim and asks one of the Node processes.
WORKERS = 3
pool = ThreadPoolExecutor(max_workers=WORKERS)
pending: list = []
checked = {"lines": 0, "verbose": 0, "tables": 0, "errors": 0, "command lines": 0}


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace")


class NodeModel:
    """One Node process running model_check.mjs's batch: the model loaded once for many requests."""

    def __init__(self, model: Path) -> None:
        self.proc = subprocess.Popen(["node", str(HERE / "model_check.mjs"), str(model), "batch"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, errors="replace")

    def ask(self, kind: str, arg: object) -> subprocess.CompletedProcess:
        """What `node cachesim.mjs ARGS` (kind cachesim) or `node model_check.mjs MODEL trace|counts ARG` gives."""
        cmd = ["node", kind, json.dumps(arg)]
        try:
            self.proc.stdin.write(json.dumps([kind, arg]) + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:
            return subprocess.CompletedProcess(cmd, -1, "", f"the Node process ended (status {self.proc.poll()})")
        a = json.loads(answer)
        return subprocess.CompletedProcess(cmd, a["status"], a["stdout"], a["stderr"])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


nodes: queue.Queue = queue.Queue()


def ask_node(kind: str, arg: object) -> subprocess.CompletedProcess:
    """Asks whichever Node process is free."""
    n = nodes.get()
    try:
        return n.ask(kind, arg)
    finally:
        nodes.put(n)


def node_cachesim(args: list[str]) -> subprocess.CompletedProcess:
    """What `node cachesim.mjs ARGS` prints and its exit status."""
    return ask_node("cachesim", args)


def policies_for(ways: int) -> list[str]:
    # Tree-PLRU needs a power-of-two way count; both programs refuse the others alike (checked in part 4).
    return [p for p in POLICIES if p != "plru" or ways & (ways - 1) == 0]


def same_line(bin_dir: Path, model: Path, args: list[str], what: str) -> None:
    pending.append(pool.submit(compare_line, bin_dir, model, args, what))


def same_verbose(bin_dir: Path, model: Path, args: list[str], what: str) -> None:
    pending.append(pool.submit(compare_verbose, bin_dir, model, args, what))


def compare_line(bin_dir: Path, model: Path, args: list[str], what: str) -> None:
    native = run([str(bin_dir / "cachesim"), *args])
    node = node_cachesim(args)
    checked["lines"] += 1
    if native.returncode != 0:
        failures.append(f"{what}: native cachesim failed: {native.stderr.strip()}")
    elif (node.returncode, node.stdout) != (0, native.stdout):
        failures.append(f"{what} {' '.join(args)}: native {native.stdout.strip()!r}, "
                        f"node {node.stdout.strip()!r} {node.stderr.strip()!r}")


def compare_verbose(bin_dir: Path, model: Path, args: list[str], what: str) -> None:
    native = run([str(bin_dir / "cachesim"), "-v", *args])
    node = node_cachesim(["-v", *args])
    checked["verbose"] += 1
    if native.returncode != 0 or node.stdout != native.stdout:
        a, b = native.stdout.splitlines(), node.stdout.splitlines()
        first = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
        failures.append(f"{what} -v {' '.join(args)}: first difference at access {first + 1}: "
                        f"native {a[first] if first < len(a) else 'END'!r}, node {b[first] if first < len(b) else 'END'!r}")


def cachelab_traces(bin_dir: Path, model: Path) -> None:
    for s, e, b, name in REFERENCE_ROWS:
        for policy in policies_for(e):
            same_line(bin_dir, model, ["-s", str(s), "-E", str(e), "-b", str(b), "--policy", policy, "-t",
                                       str(CACHELAB / name)], "cachelab")
    for name in ("yi.trace", "trans.trace", "dave.trace"):
        same_verbose(bin_dir, model, ["-s", "2", "-E", "2", "-b", "3", "-t", str(CACHELAB / name)], "cachelab")
        same_line(bin_dir, model, ["-s", "2", "-E", "2", "-b", "3", "--classify", "-t", str(CACHELAB / name)], "cachelab")


def transpose_traces(bin_dir: Path, model: Path, tmp: Path) -> None:
    for n in (32, 61, 64):
        trace = tmp / f"transpose{n}.trace"
        trace.write_text(run([str(bin_dir / "cachesim"), "--generate-transpose", str(n)]).stdout)
        for s, e, b in ((5, 1, 5), (3, 4, 6), (0, 32, 6)):
            for policy in policies_for(e):
                same_line(bin_dir, model, ["-s", str(s), "-E", str(e), "-b", str(b), "--policy", policy, "--seed",
                                           str(n), "-t", str(trace)], "transpose")


def random_trace(rng: random.Random, path: Path) -> None:
    # Lackey lines of every kind over a small range of addresses, so sets fill and evict;
    # a few valgrind log lines and blank lines, which both skip.
    span = rng.choice([256, 4096, 1 << 20])
    lines = []
    for _ in range(rng.randint(1, 3000)):
        op = rng.choice("ILLLSSM")
        lines.append(f"{'I ' if op == 'I' else ' ' + op} {rng.randrange(span):x},{rng.choice([1, 2, 4, 8])}")
        if rng.random() < 0.01:
            lines.append(rng.choice(["==123== log", "", "--456-- note"]))
    path.write_text("\n".join(lines) + "\n")


def random_cases(bin_dir: Path, model: Path, tmp: Path, count: int) -> None:
    rng = random.Random(20261202)
    for t in range(count):
        trace = tmp / f"random{t}.trace"
        random_trace(rng, trace)
        s, e, b = rng.randint(0, 4), rng.randint(1, 8), rng.randint(0, 5)
        policy = rng.choice(policies_for(e))
        args = ["-s", str(s), "-E", str(e), "-b", str(b), "--policy", policy, "--seed", str(rng.randrange(1 << 40)),
                "-t", str(trace)]
        same_line(bin_dir, model, args + (["--classify"] if t % 3 == 0 else []), f"random case {t}")
        if t % 10 == 0 and policy != "opt":  # OPT has no -v: it runs offline
            same_verbose(bin_dir, model, args, f"random case {t}")


# The course notes' walks, as the model's generators make them, in the caches of their tables.
WALKS = [({"kind": "row", "n": 32}, (3, 8, 6)), ({"kind": "column", "n": 32}, (3, 8, 6)),
         ({"kind": "column", "n": 73}, (3, 8, 6)), ({"kind": "transpose", "n": 73, "tile": 8}, (3, 8, 6)),
         ({"kind": "transpose", "n": 64}, (0, 32, 6)), ({"kind": "transpose", "n": 64, "tile": 8}, (0, 32, 6)),
         ({"kind": "chase", "n": 500, "elem": 64, "seed": 3}, (2, 4, 6))]
WALKS += [({"kind": "matmul", "n": 16, "order": o}, (0, 4, 6)) for o in ("ijk", "jik", "jki", "kji", "kij", "ikj")]
WALKS += [({"kind": "tiled", "n": 24, "tile": 8}, (0, 32, 6))]
# Chapter 1's int a[4][8] in 2 lines of 16 bytes; chapter 2's padded column walk in its L1.
WALKS += [({"kind": k, "rows": 4, "cols": 8, "elem": 4}, (0, 2, 4)) for k in ("row", "column")]
WALKS += [({"kind": "column", "rows": 256, "cols": 64, "leading": 257}, (6, 8, 6))]


def walk_verbose(bin_dir: Path, model: Path, tmp: Path) -> None:
    for k, (walk, (s, e, b)) in enumerate(WALKS):
        trace = tmp / f"walk{k}.trace"
        made = ask_node("trace", walk)
        if made.returncode != 0:
            failures.append(f"walk {walk}: {made.stderr.strip()}")
            continue
        trace.write_text(made.stdout)
        for policy in policies_for(e):
            args = ["-s", str(s), "-E", str(e), "-b", str(b), "--policy", policy, "-t", str(trace)]
            if policy == "opt":  # offline: no -v; its line and the misses by kind
                same_line(bin_dir, model, [*args, "--classify"], f"walk {walk}")
            else:
                same_verbose(bin_dir, model, args, f"walk {walk}")


def api_counts(model: Path, cache: dict, walks: list[dict]) -> list[dict]:
    r = ask_node("counts", {"cache": cache, "walks": walks})
    if r.returncode != 0:
        failures.append(f"API counts: {r.stderr.strip()}")
        return []
    return json.loads(r.stdout)


def expect(what: str, got: object, want: object) -> None:
    checked["tables"] += 1
    if got != want:
        failures.append(f"{what}: the model in JavaScript gives {got}, the course notes {want}")


def course_tables(bin_dir: Path, model: Path, tmp: Path) -> None:
    # The 4 KiB 8-way miss table: 8 sets x 8 ways x 64 B, LRU; n x n doubles read once, row then
    # column order.
    miss_table = {16: (32, 32), 32: (128, 1024), 48: (288, 2304), 73: (667, 4573)}
    got = api_counts(model, {"sets": 8, "ways": 8, "lineBytes": 64},
                     [{"kind": k, "n": n} for n in miss_table for k in ("row", "column")])
    for i, (n, want) in enumerate(miss_table.items()):
        if got:
            expect(f"4 KiB 8-way miss table, n={n}", (got[2 * i]["streams"][0]["misses"], got[2 * i + 1]["streams"][0]["misses"]), want)
    # The tiled transpose of 73 x 73 in the same cache.
    transpose_misses = {0: 5996, 4: 2603, 8: 2036, 16: 1960, 32: 1714}
    got = api_counts(model, {"sets": 8, "ways": 8, "lineBytes": 64},
                     [{"kind": "transpose", "n": 73, "tile": t} for t in transpose_misses])
    for i, (tile, want) in enumerate(transpose_misses.items()):
        if got:
            expect(f"tiled transpose, tile {tile}", got[i]["streams"][0]["misses"], want)
    # Six loop orders in a 4-line cache: C = A x B, N = 64, fully associative LRU of 4 lines;
    # misses per inner iteration of A, B, C (streams 1 to 3), to 3 decimals.
    six_orders = {"ijk": (0.125, 1.0, 0.002), "jik": (0.125, 1.0, 0.016), "jki": (1.0, 0.016, 1.0),
                  "kji": (1.0, 0.002, 1.0), "kij": (0.016, 0.125, 0.125), "ikj": (0.002, 0.125, 0.125)}
    got = api_counts(model, {"sets": 1, "ways": 4, "lineBytes": 64}, [{"kind": "matmul", "n": 64, "order": o} for o in six_orders])
    for i, (order, want) in enumerate(six_orders.items()):
        if got:
            expect(f"six loop orders, {order}", tuple(round(got[i]["streams"][s]["misses"] / 64**3, 3) for s in (1, 2, 3)), want)
    # The transpose walk is native cachesim's --generate-transpose trace (4-byte floats).
    made = ask_node("trace", {"kind": "transpose", "n": 20, "elem": 4})
    native = run([str(bin_dir / "cachesim"), "--generate-transpose", "20"]).stdout
    def accesses(text: str) -> list[tuple[str, int]]:
        return [(op, int(a.split(",")[0], 16)) for op, a in (line.split() for line in text.splitlines())]

    checked["tables"] += 1
    if accesses(made.stdout) != accesses(native) or not native:
        failures.append("the model's transpose walk differs from native cachesim --generate-transpose 20")


BAD_ARGS = [["-s", "1", "-E", "1"], ["-s", "x", "-E", "1", "-b", "1"], ["-s", "29", "-E", "1", "-b", "1"],
            ["-s", "1", "-E", "0", "-b", "1"], ["-s", "1", "-E", "3", "-b", "1", "--policy", "plru"],
            ["-s", "1", "-E", "1", "-b", "1", "--policy", "mru"], ["-s", "1", "-E", "1", "-b", "1", "-t", "/no/such"],
            ["-s", "1", "-E", "1", "-b", "1", "--seed", "-1"], ["-s", "1", "-E", "1", "-b", "1", "--policy", "opt", "-v"]]


def bad_input(bin_dir: Path, model: Path) -> None:
    cases = [[*a, "-t", str(CACHELAB / "yi.trace")] if "-t" not in a else a for a in BAD_ARGS]
    cases += [["-s", "1", "-E", "1", "-b", "1", "-t", str(p)] for p in sorted(BAD_TRACES.glob("*.trace"))]
    for args in cases:
        native = run([str(bin_dir / "cachesim"), *args])
        node = node_cachesim(args)
        checked["errors"] += 1
        lines = node.stderr.strip().splitlines()
        if node.returncode != 2 or len(lines) != 1 or node.stdout:
            failures.append(f"bad input {args}: node gave status {node.returncode}, stderr {node.stderr!r}")
        elif native.returncode != 2:
            failures.append(f"bad input {args}: native cachesim gave status {native.returncode}")
        elif args[-1].startswith(str(BAD_TRACES)) and lines[0] != native.stderr.strip():
            failures.append(f"bad trace {args[-1]}: native says {native.stderr.strip()!r}, node {lines[0]!r}")


def command_line(bin_dir: Path, model: Path) -> None:
    # The rest ask the batch, which calls cachesim.mjs's run: here the program itself, as a reader
    # runs it, a good run and a bad one.
    for args in (["-s", "2", "-E", "2", "-b", "3", "-t", str(CACHELAB / "yi.trace")], ["-s", "1", "-E", "1"]):
        native = run([str(bin_dir / "cachesim"), *args])
        node = run(["node", str(model / "cachesim.mjs"), *args])
        checked["command lines"] += 1
        if (node.returncode, node.stdout, node.stderr) != (native.returncode, native.stdout, native.stderr):
            failures.append(f"node cachesim.mjs {' '.join(args)}: status {node.returncode}, {node.stdout!r} "
                            f"{node.stderr!r}; native: status {native.returncode}, {native.stdout!r} {native.stderr!r}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", type=Path, required=True, help="holds the native cachesim")
    ap.add_argument("--model", type=Path, required=True, help="where build_model.py writes the model")
    ap.add_argument("--random", type=int, default=200, help="random traces (default 200)")
    args = ap.parse_args()
    if not (args.bin / "cachesim").exists():
        print(f"model_test: error: {args.bin / 'cachesim'} not built (cmake --build build --target cachesim)",
              file=sys.stderr)
        return 2
    built = run([sys.executable, str(HERE / "build_model.py"), "--out", str(args.model)])
    if built.returncode != 0:
        sys.stderr.write(built.stderr)
        return built.returncode
    print(built.stdout.strip())
    started = [NodeModel(args.model) for _ in range(WORKERS)]
    for n in started:
        nodes.put(n)
    with tempfile.TemporaryDirectory() as tmp:
        for part in (command_line, cachelab_traces, bad_input):
            part(args.bin, args.model)
        for part in (transpose_traces, walk_verbose, course_tables):
            part(args.bin, args.model, Path(tmp))
        random_cases(args.bin, args.model, Path(tmp), args.random)
        for job in pending:
            job.result()
    for n in started:
        n.close()
    print("model_test: " + ", ".join(f"{v} {k}" for k, v in checked.items()) + " compared")
    for f in failures:
        print("DIFFERS: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
