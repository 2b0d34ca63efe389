"""The appendix "On other machines": the build's own run and every results bundle in results/,
which of their chapters count, and on how many machines each measured claim of the programs held.

The directive {results-gallery} holds each bundle against this build's own results (the
generated directory) with tools/reader/gallery.py: a bundle's chapter counts where its exact
values are this commit's, and is stale where older code computed them; a bundle edited by hand
is listed apart with the key. The claims are the `claims.<name>` records of the programs' JSON.
The tables are built as docutils tables, so they render as HTML tables whatever the parser.
"""

from __future__ import annotations

import sys
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools" / "reader"))
import bundle as bundles  # noqa: E402
import gallery as galleries  # noqa: E402


def cache_size(machine: dict, name: str) -> str:
    for c in machine.get("caches") or []:
        if c.get("name") == name and c.get("size_text"):
            return c["size_text"]
    return "unknown"


def to_note(bundle: dict) -> str:
    items = [c["item"] for c in bundle.get("conditions", []) if not c.get("fit", True)]
    return ", ".join(items) if items else "none"


def chapter_number(chapter: str) -> int:
    return int(chapter[2:4])


def code(text: str) -> nodes.literal:
    return nodes.literal(text, text)


def entry(content) -> nodes.entry:
    """A table cell from text or a list of text and inline nodes."""
    para = nodes.paragraph()
    for part in content if isinstance(content, list) else [content]:
        para += nodes.Text(part) if isinstance(part, str) else part
    return nodes.entry("", para)


def table(headers: list, rows: list[list], classes: list[str]) -> nodes.table:
    """A docutils table: the header row, then the rows (each a list of cells)."""
    group = nodes.tgroup(cols=len(headers))
    for _ in headers:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    head += nodes.row("", *[entry(h) for h in headers])
    body = nodes.tbody()
    for cells in rows:
        body += nodes.row("", *[entry(c) for c in cells])
    group += head
    group += body
    return nodes.table("", group, classes=["cb-gallery-table", *classes])


def machine_label(m: galleries.Machine) -> list:
    if m.own:
        also = f" (also in results/ as {', '.join(m.same_run_as)})" if m.same_run_as else ""
        return [f"this build: the machine that built this book{also}"]
    return [code(m.name)]


def chapters_cell(m: galleries.Machine) -> str:
    valid = [str(chapter_number(ch)) for ch in m.valid()]
    counted = f"{len(valid)} of {len(m.chapters)}"
    if m.bundle["emulated"]:
        return f"{counted} valid (emulated: shown, not counted)"
    return f"{counted} count" + (f": {', '.join(valid)}" if valid and len(valid) < len(m.chapters) else "")


def machines_table(g: galleries.Gallery) -> nodes.table:
    rows = []
    for m in g.machines:
        b, mach = m.bundle, m.bundle["machine"]
        cpu = bundles.cpu_name(b) + (" (emulated)" if b["emulated"] else "")
        rows.append([machine_label(m), cpu, cache_size(mach, "L1d"), cache_size(mach, "L2"), cache_size(mach, "L3"),
                     str(bundles.usable_cpus(b)), b["date"][:10], [code(b["commit"][:10])], chapters_cell(m),
                     to_note(b)])
    return table(["run", "CPU", "L1d", "L2", "L3", "cpus", "date", "commit", "chapters", "to note"], rows,
                 ["cb-gallery-machines"])


def stale_items(g: galleries.Gallery) -> nodes.bullet_list | None:
    items = nodes.bullet_list()
    for m in g.machines:
        for ch, v in m.chapters.items():
            if v.status != "valid":
                items += nodes.list_item("", nodes.paragraph("", "", code(m.name), nodes.Text(
                    f": chapter {chapter_number(ch)} ({ch}) {v.status}: {v.why}")))
    return items if len(items) else None


def claims_table(g: galleries.Gallery) -> nodes.table:
    rows = []
    for c in g.claims:
        label = [f"chapter {chapter_number(c.chapter)}, ", code(c.name), f": {c.text}"]
        cells = [g.cell(m, c).text for m in g.machines]
        rows.append([label, f"{c.threshold:.2f}x", g.tally(c), *cells])
    return table(["claim", "at least", "held on", *[[code(m.name)] for m in g.machines]], rows, ["cb-gallery-claims"])


def paragraph(*parts) -> nodes.paragraph:
    p = nodes.paragraph()
    for part in parts:
        p += nodes.Text(part) if isinstance(part, str) else part
    return p


def gallery_nodes(g: galleries.Gallery) -> list[nodes.Node]:
    out = [paragraph(nodes.strong("", "The machines.")), machines_table(g),
           paragraph("\"To note\" lists the conditions of the run that can distort a measurement "
                     "(", code("make doctor"), " explains each).")]
    stale = stale_items(g)
    if stale is not None:
        out += [paragraph(nodes.strong("", "Chapters that do not count."),
                          " A stale chapter's exact values were computed by older code than this book's:"), stale]
    out += [paragraph(nodes.strong("", "The measured claims."),
                      " Each claim as its chapter's program states and decides it; a cell gives the run's "
                      "ratio and verdict where the claim counts."), claims_table(g)]
    if g.failed:
        items = nodes.bullet_list()
        for line in g.failed:
            items += nodes.list_item("", paragraph(line))
        out += [paragraph(nodes.strong("", "Left out."), " These bundles fail the check (make check-results):"),
                items]
    return out


class ResultsGallery(SphinxDirective):
    has_content = False

    def run(self):
        generated = Path(self.env.config.cachebook_generated)
        found = sorted(p.stem for p in generated.glob("ch[0-9][0-9]_*.json"))
        current = bundles.read_current(generated, found)
        for f in sorted((ROOT / "results").glob("*.json.gz")) + [generated / f"{ch}.json" for ch in found]:
            self.env.note_dependency(str(f))
        own = bundles.own_run(generated, current, bundles.current_commit())
        node = nodes.container(classes=["results-gallery"])
        node.extend(gallery_nodes(galleries.collect(ROOT / "results", current, own)))
        return [node]


def pages_to_reread(app, env, added, changed, removed) -> list[str]:
    """Sphinx's env-get-outdated: the pages holding the gallery are read again on every build,
    since what they show depends on files Sphinx does not know of (a bundle added to results/,
    the commit, tools/reader/)."""
    return [doc for doc in env.found_docs
            if doc not in added | changed and "{results-gallery}" in Path(env.doc2path(doc)).read_text()]
