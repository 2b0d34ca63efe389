"""The appendix "On other machines": every results bundle in results/, and on how many of the
machines each measured claim of book/claims.json held.

The directive {results-gallery} verifies each bundle against this build's own results (the
generated directory) with tools/reader/bundle.py: valid bundles are shown, stale and failed
ones are listed apart with the reason, never mixed in. An emulated bundle is shown, but its
times count for no claim; nor does a machine with fewer cpus than a claim needs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "reader"))
import bundle as bundles  # noqa: E402


def cache_size(machine: dict, name: str) -> str:
    for c in machine.get("caches") or []:
        if c.get("name") == name and c.get("size_text"):
            return c["size_text"]
    return "unknown"


def to_note(bundle: dict) -> str:
    items = [c["item"] for c in bundle.get("conditions", []) if not c.get("fit", True)]
    return ", ".join(items) if items else "none"


def machine_rows(shown: list[tuple[str, dict]]) -> list[str]:
    rows = ["| bundle | CPU | L1d | L2 | L3 | cpus | date | commit | to note |", "|---|---|---|---|---|---:|---|---|---|"]
    for name, b in shown:
        m = b["machine"]
        cpu = (m.get("cpu") or "unknown") + (" (emulated)" if b["emulated"] else "")
        rows.append(f"| `{name}` | {cpu} | {cache_size(m, 'L1d')} | {cache_size(m, 'L2')} | {cache_size(m, 'L3')} | "
                    f"{bundles.usable_cpus(b)} | {b['date'][:10]} | `{b['commit'][:10]}` | {to_note(b)} |")
    return rows


def claim_cell(bundle: dict, claim: dict) -> tuple[str, bool | None]:
    """The cell's text, and True/False where the claim held or not, None where it counts not."""
    if bundle["emulated"]:
        return "emulated", None
    if bundles.usable_cpus(bundle) < claim.get("needs_cpus", 1):
        return f"needs {claim['needs_cpus']} cpus", None
    value = bundles.claim_value(bundle, claim)
    if value is None:
        return "not run", None
    held = value >= claim["at_least"]
    return f"{value:.2f} {'holds' if held else 'fails'}", held


def claim_rows(shown: list[tuple[str, dict]], claims: list[dict]) -> list[str]:
    rows = ["| claim | at least | held on | " + " | ".join(f"`{n}`" for n, _ in shown) + " |",
            "|---|---:|---|" + "---:|" * len(shown)]
    for claim in claims:
        cells, held, counted, missed = [], 0, 0, []
        for name, b in shown:
            text, ok = claim_cell(b, claim)
            cells.append(text)
            if ok is not None:
                counted += 1
                held += ok
                if not ok:
                    missed.append(f"`{name}` (to note: {to_note(b)})")
        verdict = f"{held} of {counted}" + (f"; not on {', '.join(missed)}" if missed else "")
        chapter = int(claim["chapter"][2:4])
        rows.append(f"| {claim['text']} (chapter {chapter}) | {claim['at_least']} | {verdict} | "
                    + " | ".join(cells) + " |")
    return rows


def gallery_lines(results: Path, generated: Path, claims: list[dict]) -> list[str]:
    files = sorted(results.glob("*.json.gz"))
    if not files:
        return ["No results bundle is in `results/` yet: `make share` writes one."]
    found = sorted(p.stem for p in generated.glob("ch[0-9][0-9]_*.json"))
    current = bundles.read_current(generated, found)
    head = bundles.current_commit()
    shown, apart = [], []
    for f in files:
        try:
            b = bundles.load(f)
            verdict = bundles.verify(f.name, b, current, head)
        except bundles.BundleError as e:
            apart.append(f"- `{f.name}`: {e}")
            continue
        if verdict.status == "valid":
            shown.append((f.name.removesuffix(".json.gz"), b))
        else:
            apart.append(f"- {verdict.line}")
    lines = ["**The machines.**", "", *machine_rows(shown), "",
             "\"To note\" lists the conditions of the run that can distort a measurement "
             "(`make doctor` explains each).", "",
             "**The measured claims.**", "", *claim_rows(shown, claims), ""]
    if apart:
        lines += ["**Left out.**", "", "These bundles do not match what this commit computes:", "", *apart, ""]
    return lines


class ResultsGallery(SphinxDirective):
    has_content = False

    def run(self):
        generated = Path(self.env.config.cachebook_generated)
        claims = json.loads((ROOT / "book" / "claims.json").read_text())["claims"]
        self.env.note_dependency(str(ROOT / "book" / "claims.json"))
        for f in sorted((ROOT / "results").glob("*.json.gz")):
            self.env.note_dependency(str(f))
        lines = gallery_lines(ROOT / "results", generated, claims)
        node = nodes.container(classes=["results-gallery"])
        self.state.nested_parse(StringList(lines, source="results-gallery"), self.content_offset, node)
        return [node]
