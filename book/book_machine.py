"""What machine the book was built on, for captions: CPU, caches and where each came from, date.

The figures are the programs' own: chapter 1's --json holds everything the machine module
detected (`machine.detected`: hwloc, then sysconf, then sysfs), so the book says what the
programs saw, and builds whatever the machine reports (an unknown figure is left out, and the
summary says it is unknown).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

SOURCE_JSON = "ch01_row_major.json"


def detected(generated: Path) -> dict:
    """The machine module's figures from chapter 1's results, or {} when they are missing."""
    try:
        data = json.loads((generated / SOURCE_JSON).read_text())
    except (OSError, ValueError):
        return {}
    return ((data.get("machine") or {}).get("detected")) or {}


def describe(generated: Path) -> dict:
    d = detected(generated)
    cs = []
    for c in d.get("caches") or []:
        if c.get("type") == "Instruction":
            continue
        cs.append({"name": c["name"], "size": c["size_text"], "ways": c.get("ways") or "",
                   "line_bytes": c.get("line_bytes") or "", "source": c.get("source", "unknown")})
    cache_text = ", ".join(f"{c['name']} {c['size']}" + (f" {c['ways']}-way" if c["ways"] else "") for c in cs)
    if d.get("line_bytes"):
        cache_text += f", {d['line_bytes']}-byte lines"
    sources = sorted({c["source"] for c in cs})
    if cache_text:
        cache_text += f" (from {' and '.join(sources)})"
    cpu = d.get("cpu") or "an unknown CPU"
    cpus = d.get("usable_cpus") or "an unknown number of"
    date = datetime.date.today().isoformat()
    summary = f"{cpu}, {cpus} CPUs; {cache_text or 'caches unknown: no source reports them'}; {date}"
    return {"cpu": cpu, "cpus": cpus, "caches": cs, "cache_text": cache_text, "date": date, "summary": summary}
