#!/usr/bin/python3
"""The model in the built pages against the native programs: `browser_model_check.py --build BUILD`.

In a copy of BUILD/book/html opened from disk (file://) in headless Chromium, a script
added to the page changes a setting the way a reader does (a select or a field, then its
change event) and writes the counts the page then shows. They must equal the native
programs' for the same setting:

- the playground, on a pasted lackey trace (cachelab's yi.trace) and on a transpose walk,
  before and after a change of policy or of ways: native cachesim's line;
- chapter 1's stepper, after a change to a 3-line cache and each walk: the hits and misses
  of `ch01_row_major --lines 3` (its JSON's stepper runs);
- chapter 1's questions: each box's answer is the miss count of `ch01_row_major`'s own
  stepper run; a reader's right count is called right, a wrong one (one too many) wrong,
  and the worked count opens with the walk's accesses;
- chapters 2 and 4's questions: every box that carries the chapter's own count agrees with it;
- every simulated table of chapters 1, 2 and 4 (prefetchers included), set up in the playground
  as a reader sets it up (the walk, its sizes, the cache in its fields, then the change event
  of the last field edited): each count the page shows equals the one in the chapter's JSON
  (book/model/playground_tables.py says which table is which walk and cache).

book/browser_test.py calls check(); run alone, exit status 1 names each difference.
"""

from __future__ import annotations

import argparse
import html as htmllib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "book"))
import headless  # noqa: E402
YI = ROOT / "tests/data/cachelab/yi.trace"

# Runs in the page: waits for `ready`, then for each change sets the fields and reads `what`.
DRIVER = r"""
<script>
(function () {
  var report = [];
  function set(form, name, value) {
    var f = form.querySelector("[name=" + name + "]");
    f.value = value;
    f.dispatchEvent(new Event("change", {bubbles: true}));
  }
  function done() {
    var pre = document.createElement("pre");
    pre.id = "cb-model-report";
    pre.textContent = JSON.stringify(report);
    document.body.appendChild(pre);
  }
  var tries = 0;
  (function wait() {
    var form = document.querySelector(FORM);
    if (!form) { if (++tries < 3000) return setTimeout(wait, 100); report.push({error: "no " + FORM}); return done(); }
    report.push({before: document.querySelector(WHAT) ? document.querySelector(WHAT).textContent : ""});
    CHANGES.forEach(function (change) {
      Object.keys(change).forEach(function (k) { set(form, k, change[k]); });
      report.push({change: change, shown: document.querySelector(WHAT).textContent});
    });
    done();
  })();
})();
</script>
"""


def driven_page(site: Path, page: str, form: str, what: str, changes: list[dict]) -> Path:
    """A copy of `page` beside it with the driver added; returns its path."""
    src = site / page
    script = (DRIVER.replace("FORM", json.dumps(form)).replace("WHAT", json.dumps(what))
              .replace("CHANGES", json.dumps(changes)))
    out = src.with_name(src.stem + ".model-check.html")
    out.write_text(src.read_text().replace("</body>", script + "</body>"))
    return out


def report_of(browser: headless.Chromium, url: str, timeout: int = 180) -> list[dict]:
    try:
        with browser.page(800, 600) as tab:
            dom = tab.load(url, 600000, timeout=timeout)
    except TimeoutError:
        return [{"error": "the page did not settle in time"}]
    m = re.search(r'<pre id="cb-model-report">(.*?)</pre>', dom, re.S)
    return json.loads(htmllib.unescape(m.group(1))) if m else [{"error": "no report from the page"}]


# Runs in the page: answers question box k with ANSWERS[k] (null: leaves it), as a reader types
# and presses "Check", and reports each box's model answer, verdict and worked count.
QUESTION_DRIVER = r"""
<script>
(function () {
  var tries = 0;
  (function wait() {
    var boxes = document.querySelectorAll(".cb-question");
    var forms = document.querySelectorAll(".cb-question form");
    if (!boxes.length || forms.length < boxes.length) { if (++tries < 3000) return setTimeout(wait, 100); }
    var report = Array.prototype.map.call(boxes, function (box, k) {
      var form = box.querySelector("form");
      if (!form) return {error: "box " + k + " has no answer form"};
      if (ANSWERS[k] !== null && ANSWERS[k] !== undefined) {
        form.querySelector("input").value = String(ANSWERS[k]);
        form.querySelector("button").click();
      }
      var worked = box.querySelector(".cb-question-worked");
      return {answer: box.dataset.modelAnswer, verdict: box.querySelector(".cb-question-verdict").textContent,
              worked: worked ? worked.textContent : ""};
    });
    var pre = document.createElement("pre");
    pre.id = "cb-model-report";
    pre.textContent = JSON.stringify(report);
    document.body.appendChild(pre);
  })();
})();
</script>
"""


def native_line(bin_dir: Path, args: list[str], trace: Path) -> str:
    return subprocess.run([str(bin_dir / "cachesim"), *args, "-t", str(trace)], capture_output=True,
                          text=True).stdout.strip()


def playground_cases(bin_dir: Path, tmp: Path) -> list[tuple[dict, list[dict], list[str]]]:
    """(state in the URL, changes, native lines expected before and after each change)."""
    transpose = tmp / "transpose32.trace"
    transpose.write_text(subprocess.run([str(bin_dir / "cachesim"), "--generate-transpose", "32"],
                                        capture_output=True, text=True).stdout)
    yi = {"walk": "trace", "trace": YI.read_text(), "cache": "custom", "sets": "16", "ways": "2", "line": "16"}
    tr = {"walk": "transpose", "n": "32", "elem": "4", "tile": "0", "cache": "custom", "sets": "32", "ways": "1",
          "line": "32"}
    return [
        (yi, [{"policy": "fifo"}, {"policy": "plru"}],
         [native_line(bin_dir, ["-s", "4", "-E", "2", "-b", "4", "--policy", p], YI) for p in ("lru", "fifo", "plru")]),
        (tr, [{"ways": "2"}, {"line": "64"}],
         [native_line(bin_dir, ["-s", "5", "-E", e, "-b", b], transpose) for e, b in (("1", "5"), ("2", "5"),
                                                                                     ("2", "6"))]),
    ]


def check_playground(browser: headless.Chromium, site: Path, bin_dir: Path, tmp: Path) -> list[str]:
    failures = []
    for state, changes, want in playground_cases(bin_dir, tmp):
        page = driven_page(site, "book/playground.html", "form.cb-pg-form", ".cb-pg-line", changes)
        url = page.as_uri() + "#" + urllib.parse.urlencode(state)
        rep = report_of(browser, url)
        shown = [r.get("before", r.get("shown")) for r in rep]
        if shown != want:
            failures.append(f"playground {state['walk']}: the page shows {shown}, native cachesim {want}"
                            f"{' (' + rep[0]['error'] + ')' if 'error' in rep[0] else ''}")
    return failures


def check_stepper(browser: headless.Chromium, site: Path, bin_dir: Path, tmp: Path) -> list[str]:
    out = tmp / "ch01.json"
    subprocess.run([str(bin_dir / "ch01_row_major"), "--lines", "3", "--json", str(out)], capture_output=True)
    runs = {r["walk"]: r for r in json.loads(out.read_text())["stepper"]}
    chapter = next(p.relative_to(site).as_posix() for p in site.rglob("chapters/01_*/chapter.html"))
    changes = [{"ways": "3", "sets": "1", "policy": "lru", "walk": w} for w in ("row", "column")]
    page = driven_page(site, chapter, "form.cb-live", ".cb-live-status", changes)
    rep = report_of(browser, page.as_uri())
    failures = []
    for r, walk in zip(rep[1:], ("row", "column")):
        m = re.search(r"(\d+) misses, (\d+) hits", r.get("shown", ""))
        got = (int(m.group(1)), int(m.group(2))) if m else r
        want = (runs[walk]["misses"], runs[walk]["hits"])
        if got != want:
            failures.append(f"chapter 1 stepper, {walk} walk in 3 lines: the page shows {got}, "
                            f"ch01_row_major --lines 3 {want}")
    if len(rep) != 3:
        failures.append(f"chapter 1 stepper: no live controls ({rep})")
    return failures


def check_questions(browser: headless.Chromium, site: Path, bin_dir: Path, tmp: Path) -> list[str]:
    """Chapter 1's boxes ask the misses of its stepper runs 0 (row walk), 1 (column walk) and 3
    (column walk, larger cache), in the page's order."""
    out = tmp / "ch01-default.json"
    subprocess.run([str(bin_dir / "ch01_row_major"), "--json", str(out)], capture_output=True)
    runs = json.loads(out.read_text())["stepper"]
    want = [runs[0]["misses"], runs[1]["misses"], runs[3]["misses"]]
    answers = [want[0], want[1] + 1, None]  # right, wrong, left unanswered
    chapter = next(p for p in site.rglob("chapters/01_*/chapter.html"))
    page = chapter.with_name("chapter.questions-check.html")
    page.write_text(chapter.read_text().replace("</body>", QUESTION_DRIVER.replace("ANSWERS", json.dumps(answers))
                                                + "</body>"))
    rep = report_of(browser, page.as_uri())
    if len(rep) != len(want) or any("error" in r for r in rep):
        return [f"chapter 1 questions: {len(want)} boxes with forms expected, the page gives {rep}"]
    failures = []
    for k, (r, count) in enumerate(zip(rep, want)):
        if r["answer"] != str(count):
            failures.append(f"chapter 1 question {k + 1}: the model answers {r['answer']}, ch01_row_major {count}")
        if (not r["worked"].startswith("Show the worked count") or f"In all: {count} misses" not in r["worked"]
                or "run natively, counts the same" not in r["worked"]):
            failures.append(f"chapter 1 question {k + 1}: the worked count reads {r['worked']!r}")
    if not rep[0]["verdict"].startswith(f" Right: the model counts {want[0]} misses"):
        failures.append(f"chapter 1 question 1, answered {want[0]}: the page says {rep[0]['verdict']!r}")
    if not rep[1]["verdict"].startswith(f" Not {want[1] + 1}: the model counts fewer"):
        failures.append(f"chapter 1 question 2, answered {want[1] + 1}: the page says {rep[1]['verdict']!r}")
    if rep[2]["verdict"]:
        failures.append(f"chapter 1 question 3, not answered: the page says {rep[2]['verdict']!r}")
    return failures


def check_agreement(browser: headless.Chromium, site: Path) -> list[str]:
    """Every question box of chapters 2 and 4 whose options give the chapter's own count
    (:expect:) says that the model in the page counts the same, on whichever of the chapter's
    pages the box is."""
    failures = []
    pages = [p for p in sorted(site.rglob("chapters/0[24]_*/*.html")) if not p.name.endswith(".questions-check.html")]
    for chapter in (p for p in pages if "cb-question" in p.read_text()):
        page = chapter.with_name(chapter.stem + ".questions-check.html")
        page.write_text(chapter.read_text().replace("</body>", QUESTION_DRIVER.replace("ANSWERS", "[]") + "</body>"))
        rep = report_of(browser, page.as_uri())
        expecting = chapter.read_text().count("&quot;expect&quot;")
        agreeing = sum("run natively, counts the same" in r.get("worked", "") for r in rep)
        if not rep or agreeing != expecting:
            failures.append(f"{chapter.parent.name}: {agreeing} of {expecting} boxes with the chapter's count agree "
                            f"with the model ({rep})")
    return failures


# Runs in the playground: for each case, sets its fields as a reader would and reads back what
# the page shows (the totals table, the misses by kind and OPT, the prefetcher's line, an error).
TABLE_DRIVER = r"""
<script>
(function () {
  var tries = 0;
  function number(text, re) { var m = re.exec(text); return m ? Number(m[1]) : null; }
  (function wait() {
    var form = document.querySelector("form.cb-pg-form");
    if (!form) { if (++tries < 3000) return setTimeout(wait, 100); }
    var report = CASES.map(function (c) {
      if (!form) return {error: "no playground form"};
      var names = Object.keys(c.state);
      names.forEach(function (k, at) {
        var f = form.querySelector("[name=" + k + "]");
        if (!f) return;
        f.value = c.state[k];
        // One change event after the last field, as when a reader edits a field and leaves it:
        // the page then reads every field.
        if (at === names.length - 1) f.dispatchEvent(new Event("change", {bubbles: true}));
      });
      var shown = {};
      Array.prototype.forEach.call(document.querySelectorAll(".cb-pg-totals tr[data-stream]"), function (tr) {
        var td = Array.prototype.map.call(tr.querySelectorAll("td"), function (x) { return Number(x.textContent); });
        shown[tr.dataset.stream] = {accesses: td[0], hits: td[1], misses: td[2], evictions: td[3], dirty: td[4]};
      });
      var kinds = document.querySelector(".cb-pg-kinds"), summary = document.querySelector(".cb-pg-summary");
      var error = document.querySelector(".cb-pg-error");
      if (kinds) {
        var t = kinds.textContent;
        shown.compulsory = number(t, /(-?\d+) compulsory/);
        shown.capacity = number(t, /(-?\d+) capacity/);
        shown.conflict = number(t, /(-?\d+) conflict/);
        shown.optimal = number(t, /\(OPT\)[^:]*: (\d+) misses/);
      }
      if (summary) {
        shown.issued = number(summary.textContent, /issued (\d+) prefetch/);
        shown.useful = number(summary.textContent, /, (\d+) of them useful/);
      }
      if (error) shown.error = error.textContent;
      return shown;
    });
    var pre = document.createElement("pre");
    pre.id = "cb-model-report";
    pre.textContent = JSON.stringify(report);
    document.body.appendChild(pre);
  })();
})();
</script>
"""


def check_tables(browser: headless.Chromium, site: Path, generated: Path) -> list[str]:
    """Each simulated table of chapters 1, 2 and 4 in the playground: the page's counts against
    the chapter's JSON."""
    import playground_tables
    failures, compared = [], 0
    cases = playground_tables.cases(generated)
    # A page a batch: a batch's walks are small enough that a page settles well within the time.
    for batch in playground_tables.batches(cases):
        page = site / "book" / "playground.html"
        out = page.with_name(f"playground.tables-{batch[0]['table'].split(':')[0]}-{id(batch)}.html")
        out.write_text(page.read_text().replace("</body>", TABLE_DRIVER.replace(
            "CASES", json.dumps([{"state": c["state"]} for c in batch])) + "</body>"))
        rep = report_of(browser, out.as_uri(), timeout=900)
        if len(rep) != len(batch):
            failures.append(f"playground tables: {len(batch)} cases, the page reported {rep}")
            continue
        for case, shown in zip(batch, rep):
            got = playground_tables.counts_shown(shown)
            for key, want in case["want"].items():
                compared += 1
                if got.get(key) != want:
                    failures.append(f"{case['table']}, {case['label']}: {key} is {want} in the chapter, the playground "
                                    f"shows {got.get(key)}{' (' + shown['error'] + ')' if 'error' in shown else ''}")
    print(f"  playground: {len(cases)} settings from the tables of chapters 1, 2 and 4, {compared} counts compared "
          f"with the chapters' JSON")
    for table, why in playground_tables.LEFT_OUT.items():
        print(f"  playground: left out, {table}: {why}")
    if not cases:
        failures.append("playground tables: no case (are the chapters' JSON files in BUILD/book/generated?)")
    return failures


def check(binary: str, build: Path) -> list[str]:
    """Every check, in one Chromium of its own (pages from disk may read the site's files)."""
    site, bin_dir = build / "book" / "html", build / "bin"
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as profile, \
            headless.Chromium(binary, profile, ("--allow-file-access-from-files",)) as browser:
        copy = Path(tmp) / "html"
        shutil.copytree(site, copy)
        return (check_playground(browser, copy, bin_dir, Path(tmp)) + check_stepper(browser, copy, bin_dir, Path(tmp))
                + check_questions(browser, copy, bin_dir, Path(tmp)) + check_agreement(browser, copy)
                + check_tables(browser, copy, build / "book" / "generated"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", type=Path, required=True)
    ap.add_argument("--browser", default="chromium")
    args = ap.parse_args()
    failures = check(args.browser, args.build.resolve())
    for f in failures:
        print("DIFFERS: " + f)
    print(f"browser_model_check: {'failed' if failures else 'the pages show the native counts'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
