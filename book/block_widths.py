#!/usr/bin/python3
"""Which code and output blocks of the built book scroll sideways at a given width, and by how much.

    block_widths.py --build BUILD [--width 1280] [--list]

Every page of BUILD/book/html is opened from a copy on disk in headless Chromium (the setup of
book/browser_test.py) with its folds opened, and every <pre> of the page's article is measured:
the columns its longest line needs, the columns the block shows, and whether it scrolls. --list
prints each block that scrolls. book/check_rendered.py runs the same measurement and fails when
more than MAX_SCROLLING of the blocks scroll at 1280 px. Exit status: 0, 1 over the limit, 77 when
the book is not built or there is no Chromium.
"""

from __future__ import annotations

import argparse
import html as htmllib
import json
import re
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BOOK = Path(__file__).resolve().parent
sys.path.insert(0, str(BOOK))

SKIP = 77
DESKTOP = 1280
MAX_SCROLLING = 0.10  # at most one block in ten scrolls sideways at DESKTOP px

# Opens every fold, then reports each visible <pre> of the article: the width of one character
# of its font, the longest line, the width it shows and the width it needs.
PROBE = r"""
window.addEventListener("load", function () {
  setTimeout(function () {
    Array.prototype.forEach.call(document.querySelectorAll("article details"), function (d) { d.open = true; });
    var out = Array.prototype.filter.call(document.querySelectorAll("article pre"), function (p) {
      return p.getClientRects().length > 0;
    }).map(function (p) {
      var probe = document.createElement("span");
      probe.textContent = "0000000000";
      probe.style.visibility = "hidden";
      p.appendChild(probe);
      var ch = probe.getBoundingClientRect().width / 10;
      p.removeChild(probe);
      var lines = p.textContent.split("\n");
      var longest = lines.reduce(function (a, b) { return b.length > a.length ? b : a; }, "");
      var box = p.closest(".program-output") ? "output" : "listing";
      var cap = p.closest(".literal-block-wrapper, .program-output, div[class*=highlight]");
      var label = cap && cap.querySelector(".caption-text") ? cap.querySelector(".caption-text").textContent : "";
      var cs = getComputedStyle(p);
      var pad = parseFloat(cs.paddingLeft) + parseFloat(cs.paddingRight);
      return {kind: box, label: label.slice(0, 80), first: lines[0].slice(0, 60), columns: longest.length,
              shows: Math.floor((p.clientWidth - pad) / ch), scrolls: p.scrollWidth > p.clientWidth + 1,
              font: cs.fontSize};
    });
    var pre = document.createElement("pre");
    pre.id = "cb-widths";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }, 300);
});
"""


def pages_of(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if not p.relative_to(site).as_posix().startswith(("_static/", "_sources/", "_images/"))
                  and p.name not in ("genindex.html", "search.html", "index.html"))


def measure(build: Path, width: int = DESKTOP) -> tuple[dict[str, list[dict]] | None, str]:
    """Each page's blocks as the probe reports them, or None and the reason it cannot be measured."""
    from browser_test import find_chromium
    import headless

    site = build / "book" / "html"
    if not (site / "book" / "index.html").exists():
        return None, f"the book is not built ({site})"
    browser = find_chromium()
    if browser is None:
        return None, "no Chromium to open the pages in"
    pages = pages_of(site)
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as profile, \
            headless.Chromium(browser, profile) as chrome:
        disk = Path(scratch) / "html"
        shutil.copytree(site, disk)
        for page in pages:
            f = disk / page
            f.write_text(f.read_text().replace("<head>", "<head><script>" + PROBE + "</script>", 1))

        def load(page: str) -> list[dict]:
            with chrome.page(width, 1000) as tab:
                dom = tab.load((disk / page).as_uri(), 5000, timeout=90)
            m = re.search(r'<pre id="cb-widths">(.*?)</pre>', dom, re.S)
            if not m:
                raise RuntimeError(f"{page}: no report from the page")
            return json.loads(htmllib.unescape(m.group(1)))

        # Two pages at once, each in a tab of the one Chromium.
        with ThreadPoolExecutor(2) as pool:
            found = list(pool.map(load, pages))
    return dict(zip(pages, found)), ""


def summary(report: dict[str, list[dict]], width: int = DESKTOP) -> tuple[int, int, list[str]]:
    """(blocks, blocks that scroll, one line per block that scrolls)."""
    blocks = sum(len(b) for b in report.values())
    wide = [f"{page}: {b['kind']} '{b['label'] or b['first']}': {b['columns']} columns, {b['shows']} shown"
            for page, bs in report.items() for b in bs if b["scrolls"]]
    return blocks, len(wide), wide


def width_defects(build: Path) -> tuple[list[str], str]:
    """Defects (more than MAX_SCROLLING of the blocks scroll at 1280 px) and a one-line summary."""
    report, why = measure(build)
    if report is None:
        return [], f"block widths not measured: {why}"
    blocks, scrolling, _ = summary(report)
    line = f"{scrolling} of {blocks} code and output blocks scroll sideways at {DESKTOP} px (folds open)"
    if blocks and scrolling > MAX_SCROLLING * blocks:
        return [f"{line}: more than {MAX_SCROLLING:.0%} (book/block_widths.py --list names them)"], line
    return [], line


def main() -> int:
    ap = argparse.ArgumentParser(description="Measure which blocks of the built book scroll sideways.")
    ap.add_argument("--build", required=True)
    ap.add_argument("--width", type=int, default=DESKTOP)
    ap.add_argument("--list", action="store_true", help="name every block that scrolls")
    args = ap.parse_args()
    if args.width < 200 or args.width > 4000:
        print(f"block_widths.py: --width {args.width}: give 200 to 4000 px", file=sys.stderr)
        return 2
    report, why = measure(Path(args.build).resolve(), args.width)
    if report is None:
        print(f"skipped: {why}")
        return SKIP
    blocks, scrolling, wide = summary(report, args.width)
    if args.list:
        print("\n".join(wide))
    print(f"{scrolling} of {blocks} code and output blocks scroll sideways at {args.width} px (folds open)")
    return 1 if blocks and scrolling > MAX_SCROLLING * blocks else 0


if __name__ == "__main__":
    sys.exit(main())
