"""What machine the book was built on: CPU model, caches (sysfs), date. For captions."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path

SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")


def _read(p: Path) -> str:
    try:
        return p.read_text().strip()
    except OSError:
        return ""


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def caches() -> list[dict]:
    out = []
    for d in sorted(SYSFS_CACHE.glob("index[0-9]*")):
        kind = _read(d / "type")
        if kind == "Instruction":
            continue
        level = _read(d / "level")
        name = f"L{level}" + ("d" if kind == "Data" else "")
        out.append({
            "name": name,
            "size": _read(d / "size"),
            "ways": _read(d / "ways_of_associativity"),
            "line_bytes": _read(d / "coherency_line_size"),
        })
    return out


def describe() -> dict:
    cs = caches()
    cache_text = ", ".join(f"{c['name']} {c['size']}" + (f" {c['ways']}-way" if c["ways"] else "") for c in cs)
    line = next((c["line_bytes"] for c in cs if c["line_bytes"]), "")
    if line:
        cache_text += f", {line}-byte lines"
    date = datetime.date.today().isoformat()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    summary = f"{cpu_model()}, {cpus} CPUs; {cache_text or 'caches not reported by sysfs'}; {date}"
    return {"cpu": cpu_model(), "cpus": cpus, "caches": cs, "cache_text": cache_text, "date": date, "summary": summary}
