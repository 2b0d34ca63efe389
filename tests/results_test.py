#!/usr/bin/python3
"""make check-results finds what it must (tools/reader/bundle.py, check_results.py).

Built on a small bundle made here, not on results/: a good bundle passes; one exact count
changed by hand fails with one line naming its key; a measured value changed fails naming its
chapter and key; a changed header fails; a bundle from an older commit whose exact value has
since changed is stale, not failed; a file that is not a bundle fails with one line; an empty
results directory fails. Exit 1 naming each case that went otherwise.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "reader"))
import bundle as bundles  # noqa: E402

CHAPTER = {"orders": [{"order": "ijk", "misses": 9, "ms": 2.5}, {"order": "ikj", "misses": 3, "ms": 1.25}],
           "n": 64, "measured": {"ratio": 2.0},
           "exact_keys": ["n", "orders[0].order", "orders[0].misses", "orders[1].order", "orders[1].misses"]}


def good_bundle(commit: str) -> dict:
    return {"format": bundles.FORMAT, "commit": commit, "date": "2026-12-02T00:00:00Z", "compiler": "g++ 12",
            "flags": "Release: -O3", "emulated": False, "emulator": "", "machine": {"cpu": "Test CPU", "usable_cpus": 2},
            "conditions": [], "chapters": {"ch01_row_major": copy.deepcopy(CHAPTER)}}


def check(results: Path, current: Path) -> tuple[int, list[str]]:
    r = subprocess.run([sys.executable, str(ROOT / "tools/reader/check_results.py"), "--current", str(current),
                        "--results", str(results)], capture_output=True, text=True)
    return r.returncode, r.stdout.splitlines()


def case(name: str, tmp: Path, bundle, sealed: bool = True, raw: bytes | None = None):
    results = tmp / name
    results.mkdir()
    path = results / "test.json.gz"
    if raw is not None:
        path.write_bytes(raw)
    elif sealed:
        bundles.write(bundle, path)
    else:  # written as sealed before, then changed: the checksums are the old ones
        import gzip
        with gzip.open(path, "wt") as f:
            json.dump(bundle, f)
    return results


def main() -> int:
    head = bundles.current_commit()
    root_commit = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--max-parents=0", "HEAD"],
                                 capture_output=True, text=True).stdout.split()[-1]
    failures = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        current = tmp / "current"
        current.mkdir()
        # this commit's run of the (only) chapter; every other chapter of the tree is absent here
        (current / "ch01_row_major.json").write_text(json.dumps(CHAPTER))
        expectations = []

        expectations.append(("a good bundle passes", case("good", tmp, good_bundle(head)), 0, "ok: test.json.gz"))

        edited = bundles.seal(good_bundle(head))
        edited["chapters"]["ch01_row_major"]["orders"][1]["misses"] = 4
        expectations.append(("an exact count changed by hand", case("exact", tmp, edited, sealed=False), 1,
                             "FAILED: test.json.gz: edited by hand: ch01_row_major orders[1].misses is 4 here, "
                             "this commit computes 3"))

        measured = bundles.seal(good_bundle(head))
        measured["chapters"]["ch01_row_major"]["measured"]["ratio"] = 20.0
        expectations.append(("a measured value changed by hand", case("measured", tmp, measured, sealed=False), 1,
                             "FAILED: test.json.gz: edited by hand: ch01_row_major.measured does not match its checksum"))

        header = bundles.seal(good_bundle(head))
        header["machine"]["cpu"] = "Faster CPU"
        expectations.append(("a header changed by hand", case("header", tmp, header, sealed=False), 1,
                             "FAILED: test.json.gz: edited by hand: the header"))

        old = good_bundle(root_commit)
        old["chapters"]["ch01_row_major"]["orders"][0]["misses"] = 10  # what the older code computed
        expectations.append(("a bundle older than a change of an exact value", case("stale", tmp, old), 0,
                             f"stale: test.json.gz: stale, made at {root_commit[:12]}: ch01_row_major orders[0].misses"))

        expectations.append(("a file that is not a bundle", case("junk", tmp, None, raw=b"not gzip at all\n"), 1,
                             "FAILED: test.json.gz: not a gzip file"))
        empty = tmp / "empty"
        empty.mkdir()
        expectations.append(("an empty results directory", empty, 1, "check-results: "))

        for name, results, status, start in expectations:
            got_status, lines = check(results, current)
            if got_status != status or not lines or not lines[0].startswith(start):
                failures.append(f"{name}: status {got_status} (wanted {status}), first line {lines[:1]}, "
                                f"wanted it to start {start!r}")
    for f in failures:
        print(f)
    print(f"results_test: {7 - len(failures)} of 7 cases as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
