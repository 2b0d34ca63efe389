"""The chapters of the book: every chapters/NN_slug directory, in order."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Chapter:
    dir: Path  # chapters/NN_slug

    @property
    def name(self) -> str:  # "01_row_major"
        return self.dir.name

    @property
    def key(self) -> str:  # "ch01": the name of its JSON in substitutions
        return "ch" + self.name.split("_", 1)[0]

    @property
    def program(self) -> str:  # "ch01_row_major"
        return "ch" + self.name

    @property
    def page(self) -> Path:  # chapters/NN_slug/chapter.md
        return self.dir / "chapter.md"

    @property
    def pages(self) -> list[Path]:  # chapter.md, then the chapter's other pages (its toctree reaches them)
        return [self.page] + sorted(p for p in self.dir.glob("*.md") if p.name != "chapter.md")

    @property
    def docname(self) -> str:  # Sphinx document name
        return f"chapters/{self.name}/chapter"


def chapters() -> list[Chapter]:
    """Every chapters/NN_slug directory (two digits, underscore), sorted."""
    return [Chapter(d) for d in sorted((ROOT / "chapters").glob("[0-9][0-9]_*")) if d.is_dir()]


def chapter_numbered(number: str) -> Chapter:
    """The chapter whose directory starts with NUMBER (two digits); ValueError saying why if none."""
    if not re.fullmatch(r"\d\d", number):
        raise ValueError(f"chapter must be two digits (01 to 09), not '{number}'")
    found = [c for c in chapters() if c.name.startswith(number + "_")]
    if not found:
        raise ValueError(f"no chapter {number}")
    return found[0]


def chapters_with_pages() -> list[Chapter]:
    return [c for c in chapters() if c.page.exists()]


# One line per chapter for the landing page, in reading order.
SUMMARIES = {
    "01_row_major": "where `a[i][j]` lives in memory, which cache line holds it, and what a walk touches",
    "02_loop_orders": "walking rows against walking columns: misses counted, the power-of-two trap, the time it costs",
    "03_six_orders": "the six loop orders of a matrix product, misses per iteration predicted and simulated",
    "04_tiling": "cutting the working set to the size of the cache: tiled matrix product and transpose",
    "05_layout": "arrays of structs or structs of arrays, padding, alignment, pointer chasing, prefetching",
    "06_false_sharing": "two threads, two counters, one cache line: false sharing measured and explained",
    "07_measurement": "how to time code honestly: each common mistake shown wrong, then right",
    "08_cliff": "finding this machine's caches and line size from the time of a pointer chase",
    "09_matmul": "a matrix product from naive to within reach of OpenBLAS, step by measured step",
}
