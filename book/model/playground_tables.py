"""The simulated tables of chapters 1, 2 and 4 as settings of the playground (book/playground.md).

cases(generated) reads the chapters' JSON (BUILD/book/generated/chNN_*.json) and returns, for
every row of every simulated table, the playground's fields as a reader sets them (the walk,
its sizes, then the cache) and the counts the chapter prints for them. browser_model_check.py
sets each up in the page and compares. A table the playground cannot set up is listed in
LEFT_OUT with the reason.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# Tables (or columns) of the three chapters that the playground cannot reproduce, and why.
LEFT_OUT = {
    "ch02 §1": "a formula (misses per element from the line size), not a simulation",
    "ch04 §2": "the tile rule's arithmetic, not a simulation",
    "ch04 §7, §11 'recursive'": "the recursive (cache-oblivious) walks are not among the playground's walks",
}


def cache_fields(sets: int, ways: int, line: int, policy: str = "lru", prefetch: str = "none") -> dict:
    return {"cache": "custom", "sets": str(sets), "ways": str(ways), "line": str(line), "policy": policy,
            "prefetch": prefetch}


def array_walk(walk: str, rows: int, cols: int, lead: int, elem: int) -> dict:
    return {"walk": walk, "rows": str(rows), "cols": str(cols), "lead": str(lead), "elem": str(elem)}


def case(table: str, label: str, state: dict, want: dict) -> dict:
    return {"table": table, "label": label, "state": state, "want": want}


def _json(generated: Path, program: str) -> dict | None:
    path = generated / f"{program}.json"
    return json.loads(path.read_text()) if path.exists() else None


def chapter1(ch01: dict) -> list[dict]:
    """§3: the stepper's walks of int a[4][8] in fully associative LRU caches."""
    out = []
    for run in ch01["stepper"]:
        state = array_walk(run["walk"], run["rows"], run["cols"], run["cols"], run["elem"])
        state.update(cache_fields(1, run["cache_lines"], run["line_bytes"]))
        out.append(case("ch01 §3", f"{run['walk']} walk, cache of {run['cache_lines']} lines", state,
                        {"all.misses": run["misses"], "all.hits": run["hits"]}))
    return out


def chapter2(ch02: dict) -> list[dict]:
    out = []
    notes = ch02["matrix_reads_cache"]
    square = lambda walk, n: array_walk(walk, n, n, n, 8)  # noqa: E731
    # §2: each n x n matrix in the course notes' cache, its misses by kind and OPT.
    for row in ch02["matrix_reads"]:
        for walk in ("row", "column"):
            state = square(walk, row["n"]) | cache_fields(notes["sets"], notes["ways"], notes["line_bytes"])
            out.append(case("ch02 §2", f"{walk} walk, n = {row['n']}", state, {"all.misses": row[walk]}))
    for g in ch02["geometries"]:
        for key in (k for k in g if re.fullmatch(r"n\d+", k)):
            for walk in ("row", "column"):
                state = square(walk, int(key[1:])) | cache_fields(g["sets"], g["ways"], notes["line_bytes"])
                out.append(case("ch02 §2, every 4 KiB cache", f"{g['ways']} ways, {walk} walk, n = {key[1:]}", state,
                                {"all.misses": g[key][walk]}))
    for k in ch02["miss_kinds"]:
        state = square(k["walk"], k["n"]) | cache_fields(notes["sets"], notes["ways"], notes["line_bytes"])
        out.append(case("ch02 §2, why each walk misses", f"{k['walk']} walk, n = {k['n']}", state,
                        {"all.misses": k["misses"], "compulsory": k["compulsory"], "capacity": k["capacity"],
                         "conflict": k["conflict"], "optimal": k["optimal"],
                         "fully_associative": k["fully_associative"]}))
    # §3: the first columns of a padded array; the misses of column c are those of columns
    # 0..c less those of columns 0..c-1.
    caches = [("ch02 §3", ch02["trap_cache"], ch02["trap"])]
    machine = ch02.get("trap_machine") or {}
    if machine.get("walks"):
        m = re.match(r"\d+ B, (\d+) sets? x (\d+) ways? x (\d+) B lines, (\w+)", machine["cache"])
        if m:
            caches.append(("ch02 §3, this machine's L1d", {"sets": int(m[1]), "ways": int(m[2]), "line_bytes": int(m[3])},
                           machine["walks"]))
    for table, cache, walks in caches:
        for w in walks:
            elem = w["row_bytes"] // w["leading"]
            fields = cache_fields(cache["sets"], cache["ways"], cache["line_bytes"])
            shown = len(w.get("misses_per_column", [])[:9])
            out.append(case(table, f"leading {w['leading']}, {w['cols_walked']} columns",
                            array_walk("column", w["rows"], w["cols_walked"], w["leading"], elem) | fields,
                            {"all.misses": w["total"]}))
            for c in range(1, shown + 1):
                out.append(case(table, f"leading {w['leading']}, columns 0-{c - 1}",
                                array_walk("column", w["rows"], c, w["leading"], elem) | fields,
                                {"all.misses": sum(w["misses_per_column"][:c])}))
    return out


def walk_of(kind: str, n: int, tile: int = 0, elem: int = 8, **extra) -> dict:
    state = {"walk": kind, "n": str(n), "elem": str(elem), "tile": str(tile)}
    state.update({k: str(v) for k, v in extra.items()})
    return state


def tile_of(key: str) -> int:
    """A tile's key in the JSON ("none", "ikj", "t8" or "8") as the playground's tile field (0: untiled)."""
    digits = re.sub(r"\D", "", key)
    return int(digits) if digits else 0


def chapter4(ch04: dict) -> list[dict]:
    out = []
    # The lab's cache (ch04::lab_cache(), the course notes' 4 KiB): the chapter prints it in §7,
    # §9 and §10 but records it only as the first cache of §11.
    m = re.match(r"\d+ B, (\d+) sets? x (\d+) ways? x (\d+) B lines", ch04["oblivious"]["transpose"]["caches"][0]["cache"])
    lab_fields = cache_fields(int(m[1]), int(m[2]), int(m[3]))
    # §3: the tile stepper's runs (C = A x B, fully associative), misses per array.
    for run in ch04["stepper"]:
        state = walk_of("tiled", run["n"], run.get("tile") or 0, run["elem"]) | cache_fields(1, run["cache_lines"],
                                                                                                run["line_bytes"])
        want = {"all.misses": run["misses"], "all.hits": run["hits"]}
        want |= {f"{name}.misses": misses for name, misses in run["misses_by_matrix"].items()}
        out.append(case("ch04 §3", f"{run['walk']}, {run['cache_lines']}-line cache", state, want))
    # §6: the transpose's misses per element in a fully associative cache of 32 lines.
    model = ch04["transpose_model"]
    for key, tile in (("naive", 0), ("tiled", 8)):
        state = walk_of("transpose", 64, tile) | cache_fields(1, 32, 64)
        out.append(case("ch04 §6", key, state, {"A.per_element": float(model[key]["src"]),
                                                "B.per_element": float(model[key]["dst"])}))
    # §7: misses_by_tile, and the misses by kind with OPT.
    for key, misses in ch04["misses_by_tile"].items():
        if not isinstance(misses, int) or key in ("best", "largest", "gain"):
            continue
        out.append(case("ch04 §7", f"tile {key}", walk_of("transpose", 73, tile_of(key)) | lab_fields,
                        {"all.misses": misses}))
    for k in ch04["miss_kinds"]:
        if not re.fullmatch(r"none|\d+", str(k["walk"])):
            continue  # the recursive walk (LEFT_OUT)
        out.append(case("ch04 §7, why each walk misses", f"tile {k['walk']}",
                        walk_of("transpose", 73, tile_of(str(k["walk"]))) | lab_fields,
                        {"all.misses": k["misses"], "compulsory": k["compulsory"], "capacity": k["capacity"],
                         "conflict": k["conflict"], "optimal": k["optimal"], "fully_associative": k["fully_associative"]}))
    # §9: the study's walks (the same counts for every series; one series is enough to set up).
    study = ch04["study"]["series"][0]
    n = ch04["study"]["n"]
    for walk in ("row", "column"):
        out.append(case("ch04 §9", f"{walk} walk", array_walk(walk, n, n, n, 8) | lab_fields, {"all.misses": study[walk]}))
    for key, misses in study["by_tile"].items():
        out.append(case("ch04 §9", f"transpose, tile {key}", walk_of("transpose", n, tile_of(key)) | lab_fields,
                        {"all.misses": misses}))
    # §10: the prefetchers: demand misses, useful and issued prefetches.
    pf = ch04["prefetch"]
    walks = {"row": array_walk("row", pf["n"], pf["n"], pf["n"], 8), "column": array_walk("column", pf["n"], pf["n"], pf["n"], 8),
             "tiled": walk_of("transpose", pf["n"], pf["tile"]), "chase": walk_of("chase", pf["n"] ** 2, seed=7)}
    for name, state in walks.items():
        row = pf[name]
        for kind in ("none", "next_line", "stride"):
            counts = row[kind]
            want = {"all.misses": counts["misses"], "all.accesses": row["accesses"]}
            if kind != "none":
                want |= {"useful": counts["useful"], "issued": counts["issued"]}
            out.append(case("ch04 §10", f"{name} walk, prefetcher {kind}",
                            state | lab_fields | {"prefetch": kind.replace("_", "-")}, want))
    # §11: the same walks in a 4 KiB and a 32 KiB cache, tiled (the recursive column: LEFT_OUT).
    for what, kind in (("transpose", "transpose"), ("product", "tiled")):
        block = ch04["oblivious"][what]
        for c in block["caches"]:
            m = re.match(r"\d+ B, (\d+) sets? x (\d+) ways? x (\d+) B lines", c["cache"])
            fields = cache_fields(int(m[1]), int(m[2]), int(m[3]))
            for key, misses in c["by_tile"].items():
                out.append(case("ch04 §11", f"{what}, {c['kib']} KiB, tile {key}",
                                walk_of(kind, block["n"], tile_of(key)) | fields, {"all.misses": misses}))
    return out


def counts_shown(shown: dict) -> dict:
    """The page's report as flat keys: 'all.misses', 'A.hits', 'prefetch.accesses', 'compulsory'..."""
    flat = {}
    for stream, counts in shown.items():
        if isinstance(counts, dict):
            for k, v in counts.items():
                flat[f"{stream}.{k}"] = v
        else:
            flat[stream] = counts
    if shown.get("compulsory") is not None and shown.get("capacity") is not None:
        flat["fully_associative"] = shown["compulsory"] + shown["capacity"]
    # Misses per element of the transpose's arrays, as chapter 4 prints them (three decimals).
    for name in ("A", "B"):
        if f"{name}.accesses" in flat and flat[f"{name}.accesses"]:
            flat[f"{name}.per_element"] = round(flat[f"{name}.misses"] / flat[f"{name}.accesses"], 3)
    return flat


def cases(generated: Path) -> list[dict]:
    out = []
    for program, make in (("ch01_row_major", chapter1), ("ch02_loop_orders", chapter2), ("ch04_tiling", chapter4)):
        data = _json(generated, program)
        if data is not None:
            out += make(data)
    return out


def batches(all_cases: list[dict], budget: int = 4_000_000) -> list[list[dict]]:
    """Cases in page loads of at most about `budget` accesses (a product of 96 x 96 is 2.7 million)."""
    out, size = [[]], 0
    for c in all_cases:
        cost = accesses(c["state"])
        if out[-1] and size + cost > budget:
            out.append([])
            size = 0
        out[-1].append(c)
        size += cost
    return [b for b in out if b]


def accesses(state: dict) -> int:
    walk = state["walk"]
    if walk in ("row", "column"):
        return int(state["rows"]) * int(state["cols"])
    n = int(state["n"])
    return {"matmul": 3 * n ** 3, "tiled": 3 * n ** 3, "transpose": 2 * n * n}.get(walk, n)
