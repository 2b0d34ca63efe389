#!/usr/bin/python3
"""make check-results and the appendix "On other machines" find what they must (tools/reader/).

    results_test.py [--build BUILD]

Built on small bundles made here, not on results/: a good bundle passes with every chapter
valid; one exact value of one chapter changed by older code is stale for that chapter only and
the other chapter and its claim still count; a measured value edited by hand fails naming the
key, in a valid chapter and in a stale one; an exact value edited and sealed again fails where
the chapter's code is the same; a changed header fails; a file that is not a bundle fails; an
empty results directory, or one whose bundles count for no chapter, fails; a bundle of the
build's own run is counted once; a claim needing two cpus does not count on one; a claim
the run was too busy to time counts as inconclusive.
With --build (after make book): the built appendix's claims and thresholds are the programs'
claims.<name> records, every claim says "held on k of n" with n at least 1, and its tables are
HTML tables (exit 77 when the book is not built). Exit 1 naming each case that went otherwise.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "reader"))
import bundle as bundles  # noqa: E402
import gallery as galleries  # noqa: E402

SKIP = 77
CH01 = {"orders": [{"order": "ijk", "misses": 9, "ms": 2.5}, {"order": "ikj", "misses": 3, "ms": 1.25}],
        "n": 64, "measured": {"ratio": 2.0}, "machine": {"detected": {"cpu": "Build CPU", "usable_cpus": 2}},
        "exact_keys": ["n", "orders[0].order", "orders[0].misses", "orders[1].order", "orders[1].misses"]}
CH02 = {"n": 16, "claims": {"column_sum": {"text": "column / row", "threshold": 2.0, "needs_cpus": 1,
                                           "verdict": "holds", "effect": 3.5, "noise": 0.02, "reason": "clears"},
                            "two_cores": {"text": "packed / padded, 2 cores", "threshold": 1.5, "needs_cpus": 2,
                                          "verdict": "fails", "effect": 1.1, "noise": 0.01, "reason": "short"}},
        "exact_keys": ["n", "claims.column_sum.threshold", "claims.two_cores.threshold"]}
CURRENT = {"ch01_row_major": CH01, "ch02_loop_orders": CH02}


def good_bundle(commit: str, cpus: int = 2, same_run: bool = False) -> dict:
    """A bundle of another run than the build's (its measured values differ), unless `same_run`."""
    chapters = copy.deepcopy(CURRENT)
    if not same_run:
        chapters["ch01_row_major"]["orders"][0]["ms"] = 2.6
        chapters["ch02_loop_orders"]["claims"]["two_cores"]["effect"] = 0.98
    return {"format": bundles.FORMAT, "commit": commit, "date": "2026-12-02T00:00:00Z", "compiler": "g++ 12",
            "flags": "Release: -O3", "emulated": False, "emulator": "",
            "machine": {"cpu": "Test CPU", "usable_cpus": cpus}, "conditions": [],
            "chapters": chapters}


def check(results: Path, current: Path) -> tuple[int, list[str]]:
    r = subprocess.run([sys.executable, str(ROOT / "tools/reader/check_results.py"), "--current", str(current),
                        "--results", str(results)], capture_output=True, text=True)
    return r.returncode, r.stdout.splitlines()


def place(name: str, tmp: Path, bundle, sealed: bool = True, raw: bytes | None = None) -> Path:
    """A results directory holding one file, test.json.gz: the bundle sealed, written as it is
    (an edit after sealing: the checksums are the old ones), or raw bytes."""
    results = tmp / name
    results.mkdir()
    path = results / "test.json.gz"
    if raw is not None:
        path.write_bytes(raw)
    elif sealed:
        bundles.write(bundle, path)
    else:
        with gzip.open(path, "wt") as f:
            json.dump(bundle, f)
    return results


def edited(commit: str, change) -> dict:
    b = bundles.seal(good_bundle(commit))
    change(b["chapters"])
    return b


def verdict_cases(tmp: Path, head: str, root: str) -> list[tuple[str, Path, int, str]]:
    """(what, results directory, wanted exit status, a line the output must hold)."""
    older = good_bundle(root)
    older["chapters"]["ch01_row_major"]["orders"][0]["misses"] = 10  # what the older code computed
    stale_edit = bundles.seal(copy.deepcopy(older))
    stale_edit["chapters"]["ch01_row_major"]["measured"]["ratio"] = 20.0
    all_stale = good_bundle(root)
    all_stale["chapters"]["ch01_row_major"]["n"] = 32
    all_stale["chapters"]["ch02_loop_orders"]["n"] = 8
    resealed = good_bundle(head)
    resealed["chapters"]["ch01_row_major"]["orders"][1]["misses"] = 4
    header = bundles.seal(good_bundle(head))
    header["machine"]["cpu"] = "Faster CPU"
    return [
        ("a good bundle passes", place("good", tmp, good_bundle(head)), 0,
         "ok: test.json.gz: Test CPU, 2026-12-02, commit " + head[:12] + ": 2 of 2 chapters valid"),
        ("one exact value of one chapter from older code: that chapter stale, the other valid",
         place("stale", tmp, older), 0,
         f"ok: test.json.gz: Test CPU, 2026-12-02, commit {root[:12]}: 1 of 2 chapters valid; stale: ch01_row_major "
         f"(made at {root[:12]}: orders[0].misses is 10 there, this commit computes 9)"),
        ("a measured value edited in a valid chapter",
         place("measured", tmp, edited(head, lambda c: c["ch01_row_major"]["measured"].update(ratio=20.0)), False),
         1, "FAILED: test.json.gz: edited by hand: ch01_row_major.measured does not match its checksum"),
        ("a measured value edited in a stale chapter", place("stale_edit", tmp, stale_edit, False), 1,
         "FAILED: test.json.gz: edited by hand: ch01_row_major.measured does not match its checksum"),
        ("a claim's effect edited", place("claim_edit", tmp, edited(
            head, lambda c: c["ch02_loop_orders"]["claims"]["column_sum"].update(effect=9.0)), False), 1,
         "FAILED: test.json.gz: edited by hand: ch02_loop_orders.claims does not match its checksum"),
        ("an exact value edited and sealed again, the chapter's code the same", place("resealed", tmp, resealed), 1,
         "FAILED: test.json.gz: edited by hand: ch01_row_major orders[1].misses is 4 here, this commit computes 3, "
         "and the chapter's code is the same"),
        ("a header changed by hand", place("header", tmp, header, False), 1,
         "FAILED: test.json.gz: edited by hand: the header (commit, machine, conditions, ...) does not match"),
        ("a file that is not a bundle", place("junk", tmp, None, raw=b"not gzip at all\n"), 1,
         "FAILED: test.json.gz: not a gzip file"),
        ("a bundle whose every chapter is stale", place("all_stale", tmp, all_stale), 1,
         "check-results: no bundle counts for any chapter"),
    ]


def gallery_cases(tmp: Path, head: str, root: str) -> list[str]:
    """The gallery itself: what counts where. Returns a line per case that went otherwise."""
    failures = []
    current_dir = tmp / "current"
    own = bundles.own_run(current_dir, CURRENT, head)

    older = good_bundle(root)
    older["chapters"]["ch01_row_major"]["orders"][0]["misses"] = 10
    g = galleries.collect(place("g_stale", tmp, older), CURRENT, own)
    other = g.machines[1]
    col, two = g.claims
    if [m.name for m in g.machines] != [galleries.OWN, "test"]:
        failures.append(f"stale bundle: machines {[m.name for m in g.machines]}, wanted the build's run and test")
    if other.valid() != ["ch02_loop_orders"] or other.stale() != ["ch01_row_major"]:
        failures.append(f"stale bundle: valid {other.valid()}, stale {other.stale()}")
    if g.tally(col) != "held on 2 of 2":
        failures.append(f"a claim of the valid chapter: {g.tally(col)!r}, wanted 'held on 2 of 2'")

    one_cpu = galleries.collect(place("g_one_cpu", tmp, good_bundle(head, cpus=1)), CURRENT, own)
    cell = one_cpu.cell(one_cpu.machines[1], two)
    if cell.counts or cell.text != "needs 2 cpus" or one_cpu.tally(two) != "held on 0 of 1; fails on this build":
        failures.append(f"a two-cpu claim on one cpu: {cell.text!r}, tally {one_cpu.tally(two)!r}")

    busy = good_bundle(head)
    busy["chapters"]["ch02_loop_orders"]["claims"]["column_sum"].update(effect=None, verdict="inconclusive")
    untimed = galleries.collect(place("g_busy", tmp, busy), CURRENT, own)
    cell = untimed.cell(untimed.machines[1], col)
    if not cell.counts or cell.text != "not timed, inconclusive" or untimed.tally(col) != \
            "held on 1 of 2; inconclusive on test":
        failures.append(f"a claim too busy to time: {cell.text!r}, tally {untimed.tally(col)!r}")

    same = galleries.collect(place("g_same", tmp, good_bundle(head, same_run=True)), CURRENT, own)
    if len(same.machines) != 1 or same.machines[0].same_run_as != ["test"] or same.tally(col) != "held on 1 of 1":
        failures.append(f"a bundle of the build's own run: machines {[m.name for m in same.machines]}, "
                        f"tally {same.tally(col)!r}, wanted it counted once")

    claims = [(c.chapter, c.name, c.text, c.threshold, c.needs_cpus) for c in g.claims]
    if claims != [("ch02_loop_orders", "column_sum", "column / row", 2.0, 1),
                  ("ch02_loop_orders", "two_cores", "packed / padded, 2 cores", 1.5, 2)]:
        failures.append(f"the claims are not the programs' records: {claims}")
    return failures


def appendix_claims(html: str) -> tuple[list[tuple[int, str, float, str]], int]:
    """(chapter, name, threshold, tally) per row of the claims table, and how many raw table rows."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    table = soup.select_one("table.cb-gallery-claims")
    rows = []
    for tr in table.select("tbody tr") if table else []:
        cells = tr.find_all("td")
        label = cells[0].get_text(" ", strip=True)
        chapter = int(re.match(r"chapter (\d+)", label).group(1))
        rows.append((chapter, cells[0].find("code").get_text(strip=True),
                     float(cells[1].get_text(strip=True).rstrip("x")), cells[2].get_text(" ", strip=True)))
    raw = len(re.findall(r"\|\s*:?(?:-{3,}|[\u2013\u2014]+):?\s*\|", soup.get_text()))
    return rows, raw


def appendix_defects(build: Path) -> list[str] | None:
    page = build / "book" / "html" / "book" / "machines.html"
    generated = build / "book" / "generated"
    if not page.exists():
        return None
    found = sorted(p.stem for p in generated.glob("ch[0-9][0-9]_*.json"))
    current = bundles.read_current(generated, found)
    programs = [(int(c.chapter[2:4]), c.name, c.threshold) for c in galleries.program_claims(current)]
    rows, raw = appendix_claims(page.read_text())
    failures = []
    if [(ch, name, t) for ch, name, t, _ in rows] != programs:
        failures.append(f"the appendix's claims {[r[:3] for r in rows]} are not the programs' {programs}")
    if not programs:
        failures.append("the programs of this build recorded no claim")
    for chapter in found:  # the record's contract (cachebook::report_claim): the words and the cpus are in it
        for name, record in (json.loads((generated / f"{chapter}.json").read_text()).get("claims") or {}).items():
            if isinstance(record, dict) and "verdict" in record and not {"text", "needs_cpus"} <= record.keys():
                failures.append(f"{chapter} claims.{name} records no text or needs_cpus")
    if any("queue" in name for _, name, _, _ in rows):
        failures.append("the appendix lists a claim on the queue, which no program makes")
    cpus = bundles.usable_cpus(bundles.own_run(generated, current, ""))
    needs = {(int(c.chapter[2:4]), c.name): c.needs_cpus for c in galleries.program_claims(current)}
    for ch, name, _, tally in rows:  # the build's own run counts for every claim its cpus allow
        m = re.match(r"held on (\d+) of (\d+)", tally)
        if not m or (int(m.group(2)) < 1 and needs.get((ch, name), 1) <= cpus):
            failures.append(f"claim {name} (chapter {ch}) says {tally!r}: not counted on the build's own run")
    if raw:
        failures.append(f"the appendix shows {raw} raw Markdown table row(s)")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", help="the CMake build directory: also check its built appendix")
    args = ap.parse_args()
    if args.build:
        failures = appendix_defects(Path(args.build))
        if failures is None:
            print(f"skipped: the book is not built in {args.build}; run make book first")
            return SKIP
        for f in failures:
            print(f)
        print(f"results_test: the built appendix, {len(failures)} defect(s)")
        return 1 if failures else 0
    head = bundles.current_commit()
    root = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--max-parents=0", "HEAD"],
                          capture_output=True, text=True).stdout.split()[-1]
    failures = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        current = tmp / "current"
        current.mkdir()
        for chapter, data in CURRENT.items():  # this commit's run of the two chapters
            (current / f"{chapter}.json").write_text(json.dumps(data))
        cases = verdict_cases(tmp, head, root)
        empty = tmp / "empty"
        empty.mkdir()
        cases.append(("an empty results directory", empty, 1, "check-results: "))
        for name, results, status, want in cases:
            got_status, lines = check(results, current)
            if got_status != status or not any(line.startswith(want) for line in lines):
                failures.append(f"{name}: status {got_status} (wanted {status}), no line starting {want!r} in {lines}")
        failures += gallery_cases(tmp, head, root)
    for f in failures:
        print(f)
    print(f"results_test: {len(failures)} case(s) went otherwise")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
