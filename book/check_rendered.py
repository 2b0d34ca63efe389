#!/usr/bin/python3
"""Reads the built book as a reader gets it and fails on what must not be on a page.

    check_rendered.py --build BUILD     (ctest book.rendered; after `make book`)

Every HTML page of BUILD/book/html (the book's pages and the chapters) is parsed, and
its text is checked. A page fails on:

- template leftovers: `{{`, `}}`, a role or directive printed as written (`{given}`,
  `{notes}`, `{doc}`, `{chart}`, ...);
- `<measured>`, the mask of the golden files, which a built page never shows;
- a raw Markdown table: a row of cells between pipes over a rule of dashes (`|---|---:|`, or
  the dashes Sphinx made typographic), printed as text where an HTML table belongs;
- a `?` where a figure belongs (alone, or before a unit or a sign), `nan` or `inf`;
- an empty section: a heading with nothing under it;
- a substituted value that is empty where its expression gives text, or that is not what
  its expression gives with the JSON results of this build (book/cachebook_sphinx.py marks
  each `{{ expr }}` of the prose as <span class="cb-value" data-expr="expr">; the expression
  is evaluated again here);
- an output block that is not, line for line, part of what its program printed in this
  build (BUILD/book/generated/PROGRAM.txt);
- a "Predict first" prompt (class cb-predict) whose answer, the first output block after
  it, is not folded (in a <details> the reader opens);
- a conditional sentence (`{{ A if TEST else B }}`) whose TEST comes out otherwise on the
  numbers as the page shows them (each value's printed `_text`) than on the JSON's, or that
  reads a printed value the page does not show (book/conditions_shown.py).

And the book as a whole fails when more than one code or output block in ten scrolls sideways
at 1280 px, its folds open (book/block_widths.py measures them in headless Chromium; without
Chromium that part is reported as not measured).

Source listings (C++, CMake) are not read: `?` and `{{` are code there. Exit status: 0 clean,
1 defects (one line each), 77 when the book has not been built.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

BOOK = Path(__file__).resolve().parent
sys.path.insert(0, str(BOOK))

from block_widths import width_defects  # noqa: E402
from conditions_shown import condition_defects  # noqa: E402
from cachebook_results import load_substitutions, plain_typography, render_substitution, shown_text  # noqa: E402

SKIP = 77
# The elements whose text is read (nested ones are read twice; a defect is reported once).
BLOCKS = ["p", "li", "td", "th", "dt", "dd", "figcaption", "caption", "pre", "h1", "h2", "h3", "h4", "h5", "h6"]
LEFTOVERS = [
    (re.compile(r"\{\{|\}\}"), "template leftover"),
    (re.compile(r"\{(?:given|notes|seed|doc|ref|chart|program-output|stepper|literalinclude|code)\}"),
     "role or directive printed as written"),
    (re.compile(r"<measured>"), "golden-mode mask <measured>"),
    (re.compile(r"(?:^|(?<=[\s(=:/]))\?(?=$|[\s%),.;:/x×]|\s*(?:ms|ns|s|GHz|KiB|MiB|GiB|B)\b)"),
     "'?' in place of a figure"),
    (re.compile(r"(?<![\w.-])[-+]?(?:nan|inf)(?![\w-])", re.I), "nan or inf"),
    (re.compile(r"\|[ \t]*:?(?:-+|[\u2013\u2014]+-*):?[ \t]*\|"), "raw Markdown table"),
]


def _snippet(text: str, start: int, end: int) -> str:
    return " ".join(text[max(0, start - 40):end + 40].split())


def text_defects(text: str, where: str, documents_the_mask: bool = False) -> list[str]:
    found = []
    for pattern, what in LEFTOVERS:
        if documents_the_mask and "<measured>" in what:
            continue
        for m in pattern.finditer(text):
            found.append(f"{where}: {what}: ...{_snippet(text, m.start(), m.end())}...")
    return found


def _is_listing(block) -> bool:
    """A source listing (literalinclude, code fence), not program output."""
    classes = block.get("class", [])
    return any(c.startswith("highlight-") for c in classes) and "program-output" not in classes


def empty_sections(article) -> list[str]:
    found = []
    for section in article.find_all("section"):
        heading = section.find(re.compile(r"^h[1-6]$"))
        rest = [c for c in section.children
                if c is not heading and (getattr(c, "name", None) or str(c).strip())]
        if not rest:
            title = heading.get_text(" ", strip=True).rstrip("#¶ ") if heading else section.get("id", "?")
            found.append(f"empty section: '{title}'")
    return found


def value_defects(article, subs: dict) -> list[str]:
    found = []
    for span in article.select("span.cb-value"):
        expr, got = span.get("data-expr", ""), " ".join(plain_typography(span.get_text()).split())
        try:
            want = shown_text(render_substitution(expr, subs))
        except Exception as error:  # a key missing from this build's JSON, a bad expression
            found.append(f"substitution {{{{ {expr} }}}} cannot be evaluated on this build's JSON: {error}")
            continue
        if want and not got:  # e.g. "<not supported>" read as an HTML tag
            found.append(f"substitution {{{{ {expr} }}}} is empty on the page; this build's JSON gives '{want}'")
        elif got != want:
            found.append(f"substitution {{{{ {expr} }}}} shows '{got}', this build's JSON gives '{want}'")
    return found


def conditional_defects(article, subs: dict) -> list[str]:
    """Each conditional sentence against the numbers the page shows (book/conditions_shown.py)."""
    spans = article.select("span.cb-value")
    text, exprs = article.get_text(" "), " ".join(s.get("data-expr", "") for s in spans)
    found = []
    for span in spans:
        found += condition_defects(span.get("data-expr", ""), subs, text, exprs)
    return list(dict.fromkeys(found))


def _contains_block(printed: list[str], block: list[str]) -> bool:
    printed = [p.strip() for p in printed]
    block = [b.strip() for b in block]
    return any(printed[k:k + len(block)] == block for k in range(len(printed) - len(block) + 1))


def output_defects(article, outputs: dict[str, str]) -> list[str]:
    found = []
    for block in article.select("div.program-output"):
        program = next((c[len("cb-output-"):] for c in block.get("class", []) if c.startswith("cb-output-")), None)
        if program is None:
            continue
        text = block.find("pre").get_text() if block.find("pre") else block.get_text()
        lines = text.rstrip("\n").split("\n")
        if program not in outputs:
            found.append(f"output block of {program}: no saved output of it in this build")
        elif not _contains_block(outputs[program].splitlines(), lines):
            found.append(f"output block of {program} starting '{lines[0].strip()}' is not what it printed in this build")
    return found


def prediction_defects(article) -> list[str]:
    found = []
    for k, prompt in enumerate(article.select("div.cb-predict"), start=1):
        answer = prompt.find_next("div", class_="program-output")
        if answer is not None and answer.find_parent("details") is None:
            found.append(f"'Predict first' prompt {k}: its answer (the next output block) is not folded")
    return found


def page_defects(html: str, subs: dict, outputs: dict[str, str], documents_the_mask: bool = False) -> list[str]:
    """Every defect of one built page (its HTML), as one line each. The API page documents
    the golden mask itself (`documents_the_mask`): there `<measured>` is the subject."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    article = soup.find("article") or soup.body or soup
    for tag in article.find_all(["script", "style"]):
        tag.decompose()
    found = (value_defects(article, subs) + output_defects(article, outputs) + empty_sections(article)
             + prediction_defects(article) + conditional_defects(article, subs))
    for block in [b for b in article.find_all("div") if _is_listing(b)]:
        if not block.decomposed:  # a listing inside one already removed
            block.decompose()
    for a in article.select("a.headerlink"):
        a.decompose()
    texts = [block.get_text("") for block in article.find_all(BLOCKS)]
    return found + list(dict.fromkeys(d for t in texts for d in text_defects(t, "text", documents_the_mask)))


def pages_of(html_root: Path) -> list[Path]:
    pages = sorted((html_root / "book").glob("*.html")) + sorted((html_root / "chapters").glob("*/*.html"))
    return [p for p in pages if p.name not in ("genindex.html", "search.html")]


def main() -> int:
    ap = argparse.ArgumentParser(description="Check the text of every built page of the book.")
    ap.add_argument("--build", required=True, help="the CMake build directory (holds book/html)")
    args = ap.parse_args()
    book = Path(args.build).resolve() / "book"
    html_root, generated = book / "html", book / "generated"
    if not (html_root / "book" / "index.html").exists():
        print(f"skipped: the book is not built ({html_root}); run `make book` first")
        return SKIP
    subs = load_substitutions(generated)
    outputs = {p.stem: p.read_text() for p in generated.glob("*.txt")}
    pages = pages_of(html_root)
    bad = 0
    for page in pages:
        for defect in page_defects(page.read_text(), subs, outputs, documents_the_mask=page.name == "api.html"):
            print(f"{page.relative_to(html_root)}: {defect}")
            bad += 1
    values = sum(page.read_text().count('class="cb-value"') for page in pages)
    blocks = sum(len(re.findall(r'class="[^"]*\bcb-output-', page.read_text())) for page in pages)
    widths, line = width_defects(Path(args.build).resolve())
    for defect in widths:
        print(f"book: {defect}")
    bad += len(widths)
    print(line)
    print(f"{len(pages)} pages read ({values} substituted values and {blocks} output blocks checked "
          f"against this build's results), {bad} defect(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
