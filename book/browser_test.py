#!/usr/bin/python3
"""Browser test of the built book: `browser_test.py --build BUILD`.

Serves BUILD/book/html on 127.0.0.1 and opens every page in headless Chromium
(`--dump-dom`). A small script, added to each page as it is served, records
JavaScript errors and failed loads, measures the images, clicks the stepper, and
writes a report into the page, which the DOM dump carries back. The test fails when:

- a page has a JavaScript error, or a file it asks for is missing (HTTP 404);
- an image (plots are SVG images) has zero width or height;
- an internal link points to a missing page or to a missing #anchor;
- a chapter page lacks a source excerpt (literalinclude) or an output block, or a
  plot while book/plots/chNN.py exists for it;
- a chapter with a stepper (chapters 1 and 4, and any whose chapter.md uses the directive)
  shows none; a stepper does not advance when its forward button is clicked, or go back;
  a stepper with groups (chapter 4's tile steps) does not jump a group, with its tiles;
- the search page finds nothing for "cache".

It writes a screenshot of every chapter page (and the front page) to
BUILD/book/screenshots/. Exit status 77 (skipped, with the reason) when the book
has not been built, or when Chromium is missing and cannot be installed here;
missing but installable is a failure that says how to install it.
"""

from __future__ import annotations

import argparse
import html as htmllib
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = 77
# The course notes' steppers: chapter 1's walks and chapter 4's 4 x 4 tiles.
STEPPER_CHAPTERS = {"01", "04"}


def has_stepper(number: str) -> bool:
    """True when chapters/NN_*/chapter.md uses the stepper directive."""
    return any("{stepper}" in p.read_text() for p in ROOT.glob(f"chapters/{number}_*/chapter.md"))

PROBE = r"""
(function () {
  if (location.search.indexOf("shot=1") >= 0) return;
  var errors = [];
  window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && (t.src || t.href)) errors.push("failed to load " + (t.src || t.href));
    else errors.push("uncaught: " + (e.message || e.type));
  }, true);
  window.addEventListener("unhandledrejection", function (e) { errors.push("unhandled rejection: " + e.reason); });
  var ce = console.error;
  console.error = function () {
    errors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    return ce.apply(console, arguments);
  };
  function stepperCheck(st) {
    var fwd = st.querySelector("button.cb-forward");
    var counter = st.querySelector(".cb-counter");
    if (!fwd || !counter) return {ok: false, why: "no forward button or counter"};
    var marked = function () { return st.querySelectorAll(".cb-grid td.cb-hit, .cb-grid td.cb-miss").length; };
    var taken = function () { var m = /(\d+) of (\d+)/.exec(counter.textContent); return m ? +m[1] : -1; };
    var r = {before: counter.textContent, markedBefore: marked(), takenBefore: taken()};
    fwd.click(); fwd.click(); fwd.click();
    r.after = counter.textContent; r.markedAfter = marked(); r.takenAfter = taken();
    var backBtn = Array.prototype.filter.call(st.querySelectorAll("button"), function (b) {
      return b.textContent.indexOf("back") >= 0; })[0];
    if (backBtn) backBtn.click();
    r.afterBack = counter.textContent; r.markedAfterBack = marked(); r.takenAfterBack = taken();
    r.pickers = st.querySelectorAll("button.cb-pick").length;
    r.grids = st.querySelectorAll("table.cb-grid").length;
    // Walks in groups (chapter 4's tile steps): the group button jumps, and the framed tile moves.
    var jumps = Array.prototype.filter.call(st.querySelectorAll("button.cb-group-step"), function (b) {
      return !b.hidden; });
    if (jumps.length === 2) {
      var group = st.querySelector(".cb-group");
      var framed = function () {
        return Array.prototype.map.call(st.querySelectorAll(".cb-grid td.cb-cell"), function (td) {
          return td.classList.contains("cb-tile-t") || td.classList.contains("cb-tile-b") ? "1" : "0"; }).join("");
      };
      jumps[1].click();
      r.group1 = {taken: taken(), label: group.textContent, framed: framed(),
                  framedCells: st.querySelectorAll(".cb-grid td.cb-tile-t").length};
      jumps[1].click(); fwd.click();
      r.group2 = {taken: taken(), label: group.textContent, framed: framed()};
      jumps[0].click();
      r.groupBack = {taken: taken()};
    }
    return r;
  }
  function report() {
    var r = {url: location.href, errors: errors};
    r.images = Array.prototype.map.call(document.images, function (i) {
      return {src: i.currentSrc || i.src, w: i.naturalWidth, h: i.naturalHeight, complete: i.complete};
    });
    r.links = Array.prototype.map.call(document.querySelectorAll("a[href]"), function (a) { return a.href; });
    var filled = function (sel) {
      return Array.prototype.filter.call(document.querySelectorAll(sel), function (e) {
        return e.textContent.trim().length > 0; }).length;
    };
    r.sourceExcerpts = filled("article div.highlight-cpp pre, article div.highlight-c pre");
    r.outputs = filled("article .program-output pre");
    r.charts = document.querySelectorAll("article figure.cachebook-chart img").length;
    r.steppers = Array.prototype.map.call(document.querySelectorAll(".cb-stepper"), stepperCheck);
    r.searchResults = document.querySelectorAll("#search-results li").length;
    r.height = document.documentElement.scrollHeight;
    var pre = document.createElement("pre");
    pre.id = "cb-test-report";
    pre.textContent = JSON.stringify(r);
    document.body.appendChild(pre);
  }
  window.addEventListener("load", function () { setTimeout(report, 2000); });
})();
"""


class Site(http.server.SimpleHTTPRequestHandler):
    missing: list[str] = []

    def log_message(self, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        if code == 404 and not self.path.startswith("/favicon.ico"):
            Site.missing.append(self.path)
        super().send_error(code, message, explain)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/__probe__.js":
            body = PROBE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/javascript")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        local = Path(self.translate_path(url.path))
        if local.is_dir():
            local = local / "index.html"
        if local.suffix == ".html" and local.is_file():
            text = local.read_text()
            text = text.replace("<head>", '<head><script src="/__probe__.js"></script>', 1)
            body = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def installable() -> bool:
    if not shutil.which("apt-cache"):
        return False
    out = subprocess.run(["apt-cache", "policy", "chromium"], capture_output=True, text=True).stdout
    m = re.search(r"Candidate:\s*(\S+)", out)
    return bool(m and m.group(1) != "(none)")


def chromium(browser: str, profile: str, args: list[str], timeout: int = 90) -> subprocess.CompletedProcess:
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def ids_in(path: Path) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', path.read_text(errors="replace")))


def main() -> int:
    ap = argparse.ArgumentParser(description="Open every page of the built book in headless Chromium.")
    ap.add_argument("--build", required=True)
    args = ap.parse_args()
    build = Path(args.build).resolve()
    site = build / "book" / "html"
    required = os.environ.get("CACHEBOOK_REQUIRE_BROWSER_TEST") == "1"

    def skip(reason: str) -> int:
        if required:
            print(f"FAILED: {reason} (CACHEBOOK_REQUIRE_BROWSER_TEST=1: this run must test the book)")
            return 1
        print(f"SKIPPED: {reason}")
        return SKIP

    if not (site / "book" / "index.html").exists():
        return skip(f"the book is not built ({site}); run `make book` first")
    browser = find_chromium()
    if browser is None:
        if installable():
            print("FAILED: Chromium is not installed but can be: run `bash tools/dev/deps.sh --book`")
            return 1
        return skip("Chromium is not installed and no package for it is available here")

    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if not p.relative_to(site).as_posix().startswith(("_static/", "_sources/", "_images/"))
                   and p.relative_to(site).as_posix() != "index.html")
    shots = build / "book" / "screenshots"
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             lambda *a, **k: Site(*a, directory=str(site), **k))
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{port}/"
    plots = {p.stem[:4] for p in (ROOT / "book" / "plots").glob("ch[0-9][0-9]*.py")}
    failures: list[str] = []
    links: set[str] = set()

    def fail(page: str, msg: str) -> None:
        failures.append(f"{page}: {msg}")

    with tempfile.TemporaryDirectory() as profile:
        for page in pages:
            url = base + page + ("?q=cache" if page == "search.html" else "")
            r = chromium(browser, profile, ["--window-size=1280,1000", "--virtual-time-budget=15000", "--dump-dom", url])
            m = re.search(r'<pre id="cb-test-report">(.*?)</pre>', r.stdout, re.S)
            if not m:
                fail(page, f"no report from the page (did it load? chromium status {r.returncode}: "
                           f"{r.stderr.strip().splitlines()[-1:] if r.stderr.strip() else ''})")
                continue
            rep = json.loads(htmllib.unescape(m.group(1)))
            for e in rep["errors"]:
                fail(page, e)
            for img in rep["images"]:
                if not img["complete"] or img["w"] <= 0 or img["h"] <= 0:
                    fail(page, f"image {img['src']} has no size ({img['w']} x {img['h']})")
            links.update(urllib.parse.urljoin(url, h) for h in rep["links"])
            chapter = re.fullmatch(r"chapters/(\d\d)_[^/]+/chapter\.html", page)
            summary = f"{len(rep['images'])} images, {len(rep['links'])} links"
            if chapter:
                key = "ch" + chapter.group(1)
                if rep["sourceExcerpts"] < 1:
                    fail(page, "no source excerpt (literalinclude of the chapter's code)")
                if rep["outputs"] < 1:
                    fail(page, "no output block (program-output)")
                if key in plots and rep["charts"] < 1:
                    fail(page, f"book/plots/{key}.py exists but the page shows no plot")
                summary += (f", {rep['sourceExcerpts']} source excerpts, {rep['outputs']} output blocks, "
                            f"{rep['charts']} plots")
            for k, st in enumerate(rep.get("steppers", [])):
                ok = (st.get("markedAfter", 0) == st.get("markedBefore", -1) + 3 and st["before"] != st["after"]
                      and st.get("markedAfterBack") == st["markedAfter"] - 1
                      and st.get("takenAfter") == st.get("takenBefore", -9) + 3
                      and st.get("takenAfterBack") == st["takenAfter"] - 1)
                if not ok:
                    fail(page, f"stepper {k + 1} did not step as clicked: {st}")
                summary += f", stepper {k + 1}: '{st.get('before')}' -> '{st.get('after')}' -> back '{st.get('afterBack')}'"
                if "group1" in st:
                    g1, g2 = st["group1"], st["group2"]
                    if not (g1["taken"] > st["takenAfterBack"] + 1 and g2["taken"] > g1["taken"] + 1
                            and g1["label"] != g2["label"] and g1["framedCells"] > 0 and g1["framed"] != g2["framed"]
                            and st["groupBack"]["taken"] < g2["taken"]):
                        fail(page, f"stepper {k + 1}: a group jump did not move to the next group and its tiles: {st}")
                    summary += f", jumps to '{g1['label']}' then '{g2['label']}'"
            if chapter and (chapter.group(1) in STEPPER_CHAPTERS or has_stepper(chapter.group(1))) \
                    and not rep.get("steppers"):
                fail(page, "the chapter has a stepper but the page shows none")
            if page == "search.html":
                if rep["searchResults"] < 1:
                    fail(page, "searching for 'cache' found nothing")
                summary += f", search for 'cache': {rep['searchResults']} results"
            print(f"  {page}: {summary}", flush=True)
            if chapter or page == "book/index.html":
                name = "index" if not chapter else Path(page).parent.name
                height = max(800, min(int(rep["height"]), 16000))
                out = shots / f"{name}.png"
                chromium(browser, profile, ["--hide-scrollbars", f"--window-size=1280,{height}",
                                            f"--screenshot={out}", base + page + "?shot=1"])
                if not out.exists() or out.stat().st_size < 10000:
                    fail(page, f"screenshot {out} missing or blank")

    server.shutdown()
    # Internal links: the page exists, and so does its #anchor.
    checked = 0
    for link in sorted(links):
        u = urllib.parse.urlsplit(link)
        if u.netloc != f"127.0.0.1:{port}" or u.path == "/__probe__.js":
            continue
        target = site / urllib.parse.unquote(u.path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        checked += 1
        if not target.is_file():
            fail("links", f"{u.path} does not exist")
        elif u.fragment and target.suffix == ".html" and u.fragment not in ids_in(target):
            fail("links", f"{u.path}#{u.fragment}: no such anchor")
    for path in sorted(set(Site.missing)):
        fail("server", f"404 for {path}")
    print(f"  {checked} internal links checked; screenshots in {shots}")
    if failures:
        print("\n".join(f"FAIL {f}" for f in failures))
        return 1
    print(f"browser test: {len(pages)} pages passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
