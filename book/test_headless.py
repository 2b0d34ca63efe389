#!/usr/bin/python3
"""book/headless.py on a page with known faults: what the browser test relies on it to pass on.

A page from disk with an uncaught error, a console.error call, a fetch that Chromium blocks (a
file:// page may not read another file) and a timer 2.5 s after load that adds an element:
the DOM read after the load holds the timer's element (virtual time ran), and the console
messages hold the three faults, each once; a second load in its own context starts with no
message and at its own width. Exit 77 (skipped) without Chromium.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import headless  # noqa: E402

PAGE = """<!DOCTYPE html><html><head></head><body><script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var p = document.createElement("pre"); p.id = "late"; p.textContent = "width " + innerWidth;
    document.body.appendChild(p);
  }, 2500);
});
console.error("a console error");
fetch("elsewhere.json").catch(function () {});
notDefinedAnywhere();
</script></body></html>
"""


def main() -> int:
    binary = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    if binary is None:
        print("SKIPPED: no Chromium here")
        return 77
    problems = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as profile, \
            headless.Chromium(binary, profile) as browser:
        page = Path(tmp) / "faults.html"
        page.write_text(PAGE)
        with browser.page(1280, 800) as tab:
            dom = tab.load(page.as_uri(), 15000, timeout=90)
            console = list(tab.console)
        if '<pre id="late">width 1280</pre>' not in dom:
            problems.append("the element a timer adds 2.5 s after load is not in the DOM at 1280 px")
        for want in ("a console error", "Uncaught ReferenceError: notDefinedAnywhere is not defined",
                     "blocked by CORS policy"):
            if sum(want in c for c in console) != 1:
                problems.append(f"console: {want!r} not there once: {console}")
        with browser.page(390, 800) as tab:
            dom = tab.load(page.as_uri(), 15000, timeout=90)
            if '<pre id="late">width 390</pre>' not in dom:
                problems.append("a second load, 390 px wide, does not show its own width")
            if sum("a console error" in c for c in tab.console) != 1:
                problems.append(f"a second load's console holds another load's messages: {tab.console}")
    for p in problems:
        print("FAIL " + p)
    print("headless: " + ("ok" if not problems else f"{len(problems)} problems"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
