#!/usr/bin/python3
"""cachesim beside cachegrind, on one real program (book/cachesim.md).

Records the memory accesses of BIN/cachesim_demo with valgrind's lackey,
simulates them with BIN/cachesim on a 32 KiB 8-way D1 of 64-byte lines under
three sets of rules, runs cachegrind's own simulation of the same program with
the same D1, and prints the four side by side; --json FILE writes every figure
(the page's numbers come from there). --check exits 1 unless the counts relate
as book/cachesim.md explains.

usage: compare_cachegrind.py --bin BUILD/bin [--json FILE] [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

D1 = {"sets_bits": 6, "ways": 8, "block_bits": 6}  # 64 sets x 8 ways x 64 B = 32 KiB
D1_BYTES = (1 << D1["sets_bits"]) * D1["ways"] * (1 << D1["block_bits"])
VARIANTS = [
    ("reference", [], "cachesim (csim-ref rules)"),
    ("modify_once", ["--modify-once"], "cachesim --modify-once"),
    ("cachegrind_rules", ["--modify-once", "--split"], "cachesim --modify-once --split"),
]


def fail(msg: str) -> None:
    print(f"compare_cachegrind: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {r.returncode}: {r.stderr.strip()[-500:]}")
    return r


def trace_counts(path: Path) -> dict:
    """Operations in the trace, and data accesses that straddle a line."""
    counts = {"I": 0, "L": 0, "S": 0, "M": 0, "straddling": 0}
    line_bytes = 1 << D1["block_bits"]
    with open(path) as f:
        for text in f:
            parts = text.split()
            if len(parts) != 2 or parts[0] not in counts:
                continue
            op = parts[0]
            counts[op] += 1
            if op != "I":
                address, size = parts[1].split(",")
                a = int(address, 16)
                if a // line_bytes != (a + int(size) - 1) // line_bytes:
                    counts["straddling"] += 1
    return counts


def cachegrind_summary(out_file: Path) -> dict:
    events, summary = None, None
    for text in out_file.read_text().splitlines():
        if text.startswith("events:"):
            events = text.split()[1:]
        elif text.startswith("summary:"):
            summary = [int(x) for x in text.split()[1:]]
    if not events or not summary:
        fail(f"{out_file}: no events/summary lines")
    return dict(zip(events, summary))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="the build's bin directory (cachesim, cachesim_demo)")
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--check", action="store_true", help="exit 1 unless the counts relate as the page says")
    args = ap.parse_args()
    bin_dir = Path(args.bin).resolve()
    demo, cachesim = bin_dir / "cachesim_demo", bin_dir / "cachesim"
    for p in (demo, cachesim):
        if not p.exists():
            fail(f"{p} does not exist; build first (make build)")
    if shutil.which("valgrind") is None:
        # Status 77: ctest reports the comparison as skipped, with this reason, not as passed.
        print("compare_cachegrind: valgrind is not installed (Debian: valgrind); nothing to compare",
              file=sys.stderr)
        return 77

    with tempfile.TemporaryDirectory(prefix="cachesim-compare-") as tmp_name:
        tmp = Path(tmp_name)
        trace = tmp / "lackey.trace"
        printed = run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={trace}", str(demo)]).stdout
        ops = trace_counts(trace)
        m = re.search(r"matrix at (0x[0-9a-f]+), (\d+) bytes", printed)
        if not m:
            fail(f"{demo} did not print where its matrix is: {printed!r}")
        matrix_start, matrix_bytes = m.group(1), int(m.group(2))

        results = {}
        for key, flags, _ in VARIANTS:
            out = tmp / f"{key}.json"
            run([str(cachesim), "-s", str(D1["sets_bits"]), "-E", str(D1["ways"]), "-b", str(D1["block_bits"]),
                 "-t", str(trace), "--json", str(out), *flags])
            level = json.loads(out.read_text())["levels"][0]
            results[key] = {"references": level["hits"] + level["misses"], "hits": level["hits"],
                            "misses": level["misses"], "evictions": level["evictions"]}

        # Why they miss, and the fewest misses any policy could take: --classify under LRU and under OPT.
        kinds = {}
        for policy in ("lru", "opt"):
            out = tmp / f"kinds_{policy}.json"
            run([str(cachesim), "-s", str(D1["sets_bits"]), "-E", str(D1["ways"]), "-b", str(D1["block_bits"]),
                 "-t", str(trace), "--json", str(out), "--policy", policy, "--classify"])
            kinds[policy] = json.loads(out.read_text())["classify"]

        # Which misses are the matrix's: the same run, cachegrind's rules, with a region.
        out = tmp / "regions.json"
        run([str(cachesim), "-s", str(D1["sets_bits"]), "-E", str(D1["ways"]), "-b", str(D1["block_bits"]),
             "-t", str(trace), "--json", str(out), "--modify-once", "--split",
             "--region", f"matrix:{matrix_start}:{matrix_bytes}"])
        level = json.loads(out.read_text())["levels"][0]
        regions = {name: {"misses": c["misses"], "references": c["hits"] + c["misses"]}
                   for name, c in level["regions"].items()}

        cg_out = tmp / "cachegrind.out"
        d1 = f"{D1_BYTES},{D1['ways']},{1 << D1['block_bits']}"
        run(["valgrind", "--tool=cachegrind", "--cache-sim=yes", f"--D1={d1}", f"--I1={d1}",
             "--LL=8388608,16,64", f"--cachegrind-out-file={cg_out}", str(demo)])
        cg = cachegrind_summary(cg_out)

    cachegrind = {"Dr": cg["Dr"], "Dw": cg["Dw"], "D1mr": cg["D1mr"], "D1mw": cg["D1mw"], "Ir": cg["Ir"],
                  "references": cg["Dr"] + cg["Dw"], "misses": cg["D1mr"] + cg["D1mw"]}
    data = {"d1": {"bytes": D1_BYTES, "ways": D1["ways"], "line_bytes": 1 << D1["block_bits"],
                   "sets": 1 << D1["sets_bits"], "cachegrind_option": f"--D1={d1}",
                   "cachesim_options": f"-s {D1['sets_bits']} -E {D1['ways']} -b {D1['block_bits']}"},
            "trace": {"lines": sum(ops[k] for k in "ILSM"), **ops, "data": ops["L"] + ops["S"] + ops["M"]},
            "cachesim": results, "cachegrind": cachegrind,
            "matrix": {"start": matrix_start, "bytes": matrix_bytes, **regions["matrix"]},
            "outside_matrix": regions["other"], "kinds": kinds}
    data["differences"] = {
        "modify_extra_references": results["reference"]["references"] - results["modify_once"]["references"],
        "split_extra_misses": results["cachegrind_rules"]["misses"] - results["modify_once"]["misses"],
        "references_vs_cachegrind": results["cachegrind_rules"]["references"] - cachegrind["references"],
        "misses_vs_cachegrind": results["cachegrind_rules"]["misses"] - cachegrind["misses"],
        "instructions_traced_minus_cachegrind": ops["I"] - cachegrind["Ir"],
    }

    print("The column sum of tools/cachesim/demo/column_sum.cpp, the whole run, traced by lackey")
    print(f"D1: {D1_BYTES // 1024} KiB, {D1['ways']}-way, {1 << D1['block_bits']}-byte lines "
          f"(cachesim {data['d1']['cachesim_options']}; cachegrind {data['d1']['cachegrind_option']})\n")
    print(f"  trace: {data['trace']['lines']} lines: {ops['I']} I, {ops['L']} L, {ops['S']} S, {ops['M']} M; "
          f"{ops['straddling']} data accesses straddle a line\n")
    print(f"  {'':34} {'references':>12} {'misses':>10}")
    for key, _, label in VARIANTS:
        print(f"  {label:34} {results[key]['references']:>12} {results[key]['misses']:>10}")
    print(f"  {'cachegrind D1 (Dr+Dw, D1mr+D1mw)':34} {cachegrind['references']:>12} {cachegrind['misses']:>10}")

    print(f"\n  --region matrix:{matrix_start}:{matrix_bytes}: {regions['matrix']['misses']} of the misses are the "
          f"matrix's ({regions['matrix']['references']} references), {regions['other']['misses']} are elsewhere")

    for policy in ("lru", "opt"):
        k = kinds[policy]
        print(f"  --policy {policy} --classify: misses:{k['misses']} compulsory:{k['compulsory']} "
              f"capacity:{k['capacity']} conflict:{k['conflict']}")

    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n")

    if args.check:
        d = data["differences"]
        problems = []
        if d["modify_extra_references"] != ops["M"]:
            problems.append(f"csim-ref rules should add one reference per M ({ops['M']}), added {d['modify_extra_references']}")
        if results["reference"]["misses"] != results["modify_once"]["misses"]:
            problems.append("the store half of an M should never miss")
        if d["instructions_traced_minus_cachegrind"] != 0:
            problems.append(f"lackey traced {d['instructions_traced_minus_cachegrind']} more fetches than cachegrind counted")
        if results["modify_once"]["references"] != data["trace"]["data"]:
            problems.append("--modify-once should make one reference per data line")
        if d["references_vs_cachegrind"] != 0:
            problems.append(f"references differ from cachegrind's by {d['references_vs_cachegrind']}")
        if d["misses_vs_cachegrind"] != 0:
            problems.append(f"misses differ from cachegrind's by {d['misses_vs_cachegrind']}")
        int_bytes, line_bytes = 4, 1 << D1["block_bits"]
        expect = matrix_bytes // int_bytes + matrix_bytes // line_bytes  # every column-sum access, one per line of the fill
        if regions["matrix"]["misses"] != expect:
            problems.append(f"the matrix should miss {expect} times (the page says why), missed {regions['matrix']['misses']}")
        for policy in ("lru", "opt"):
            k = kinds[policy]
            if k["compulsory"] + k["capacity"] + k["conflict"] != k["misses"]:
                problems.append(f"--classify under {policy}: the three kinds do not add up to the misses")
        if kinds["lru"]["misses"] != results["reference"]["misses"]:
            problems.append("--classify should not change the misses")
        if kinds["opt"]["misses"] > kinds["lru"]["misses"]:
            problems.append("OPT should never miss more than LRU")
        if 2 * kinds["lru"]["conflict"] <= kinds["lru"]["misses"] or kinds["opt"]["conflict"] <= 0:
            problems.append("the page says conflict misses are most of LRU's, and OPT still has some")
        for p in problems:
            print(f"compare_cachegrind: check failed: {p}", file=sys.stderr)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
