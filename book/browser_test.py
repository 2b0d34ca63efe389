#!/usr/bin/python3
"""Browser test of the built book: `browser_test.py --build BUILD`.

Opens every page of BUILD/book/html in headless Chromium three ways, as readers do: served
over http on 127.0.0.1 (a server the test starts and stops) at desktop width (1280 px), the
same at phone width (390 px), and from disk (`file://`, a copy of the site) at desktop width. A small script, added to each page, records JavaScript errors,
console errors and failed loads, measures the images, clicks the stepper and presses its
keys, presses the arrow keys on the page, and writes a report into the page, which the DOM
dump carries back (Chromium's own console messages, such as a blocked fetch, are read from
the DevTools protocol). One Chromium serves every load, each in a fresh context
(book/headless.py); the model's checks run in a second one, which lets pages from disk read
the site's files. The test fails when, in any of the three:

- a page has a JavaScript error or a console error, or a file it asks for is missing (HTTP 404);
- an arrow key leaves the page (the page flips to another one);
- an image (plots are SVG images) has zero width or height;
- an internal link points to a missing page or to a missing #anchor;
- a chapter page lacks a source excerpt (literalinclude) or an output block, or a
  plot while book/plots/chNN.py exists for it;
- a chapter with a stepper (chapters 1 and 4, and any whose chapter.md uses the directive)
  shows none; a stepper does not advance when its forward button is clicked, or go back;
  a stepper with groups (chapter 4's tile steps) does not jump a group, with its tiles;
- a stepper's arrow keys do not step it, Home and End do not go to the first and last step,
  focus leaves it when its "end" button disables itself, or it lacks a role, a name or a
  live counter;
- a stepper is wider than its frame (at phone width);
- the output block that answers a "Predict first" prompt, or anything after the prompt up to the
  next heading or prompt (the paragraphs that read the answer, the figure that plots it), is in
  view before it is revealed;
- at 1280 px (over http), a text fails WCAG 2.1 AA contrast (4.5:1, 3:1 when large) or a control's
  or a marked cell's edge is under 3:1, in the light theme or the dark one (colours composited
  through backgrounds and opacities), folds opened and each form showing its message for a value
  it refuses; a form shows no such message; a link or control cannot take the focus, or shows no
  change when it has it;
- in a frame 390 px wide, the text column pans sideways (something in it is wider, outside a
  frame of its own that scrolls), or a code or output block still scrolls sideways once its
  "Wrap the lines" button (shown on a narrow screen where an output is wider than the column)
  is pressed;
- at 1024, 1280, 1366, 1440 and 1920 px (frames of those widths), more than 5 % of all code and
  output blocks (folded ones opened) scroll sideways;
- after a change of setting, the playground's line or chapter 1's live stepper's counts differ
  from native cachesim's and ch01_row_major's for the same setting (book/model/browser_model_check.py);
- the search page finds nothing for "cache" (over http) or "false sharing" (from disk; it
  must then say once how to get excerpts).

It prints, per way and per desktop width, the number of code and output blocks that scroll
sideways (and which, at 1024 and 1366 px).

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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book"))
import headless  # noqa: E402
SKIP = 77
# The course notes' steppers: chapter 1's walks and chapter 4's 4 x 4 tiles.
STEPPER_CHAPTERS = {"01", "04"}
# A phone's width, in CSS px.
PHONE = 390
# The desktop widths at which code and output blocks are counted, and the share of them that
# may scroll sideways at each.
DESKTOP_WIDTHS = (1024, 1280, 1366, 1440, 1920)
WIDE_SHARE = 0.05
# Pages loading at once, each in a tab of the one Chromium.
WORKERS = max(2, min(4, os.cpu_count() or 2))


def has_stepper(number: str) -> bool:
    """True when chapters/NN_*/chapter.md uses the stepper directive."""
    return any("{stepper}" in p.read_text() for p in ROOT.glob(f"chapters/{number}_*/chapter.md"))

PROBE = r"""
(function () {
  if (location.search.indexOf("shot=1") >= 0) return;
  // In the widths harness (WIDTHS below) a page only measures its blocks, for the parent.
  if (window !== window.top) {
    // Every block counts, folded ones too: the folds are opened while the blocks are measured.
    window.cbMeasure = function () {
      var closed = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
      closed.forEach(function (d) { d.open = true; });
      var blocks = Array.prototype.filter.call(document.querySelectorAll("article pre"), function (e) {
        return e.getClientRects().length > 0; });
      var wide = blocks.filter(function (b) { return b.scrollWidth > b.clientWidth + 1; });
      var out = {blocks: blocks.length, scrolling: wide.length, widest: wide.map(function (b) {
        return Math.round(100 * b.clientWidth / b.scrollWidth) + " % shown: " + b.textContent.split("\n")[0].slice(0, 60); })};
      // On a phone an output wider than the column offers to wrap its lines: pressed, none scrolls.
      if (window.cachebookOfferWrap) window.cachebookOfferWrap();
      var wraps = Array.prototype.filter.call(document.querySelectorAll("article button.cb-wrap"), function (b) {
        return b.getClientRects().length > 0; });
      wraps.forEach(function (b) { b.click(); });
      out.wrapped = wraps.length;
      out.scrollingWrapped = blocks.filter(function (b) { return b.scrollWidth > b.clientWidth + 1; }).map(function (b) {
        return b.textContent.split("\n")[0].slice(0, 60); });
      wraps.forEach(function (b) { b.click(); });
      closed.forEach(function (d) { d.open = false; });
      out.pans = pans();
      return out;
    };
    // The text column (the theme's .content scrolls sideways when something in it is too wide):
    // how far it pans, and what sticks out of it outside any frame of its own that scrolls.
    function pans() {
      var col = document.querySelector(".content") || document.body, root = document.documentElement;
      var over = Math.max(col.scrollWidth - col.clientWidth, root.scrollWidth - root.clientWidth);
      if (over <= 1) return [];
      var right = col.getBoundingClientRect().right + 1, out = [];
      Array.prototype.forEach.call(col.querySelectorAll("*"), function (e) {
        if (!e.getClientRects().length || e.getBoundingClientRect().right <= right) return;
        for (var x = e.parentElement; x && x !== col; x = x.parentElement) {
          if (/auto|scroll|hidden/.test(getComputedStyle(x).overflowX)) return;
        }
        out.push(e.tagName.toLowerCase() + (typeof e.className === "string" && e.className ? "." + e.className.split(" ")[0] : "") +
          " '" + e.textContent.trim().slice(0, 30) + "'");
      });
      return ["the text column pans " + over + " px"].concat(out.slice(-5));
    }
    return;
  }
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
    // Keys: the arrows step, Home and End go to either end; "end »" keeps focus in the widget.
    var key = function (k) {
      st.dispatchEvent(new KeyboardEvent("keydown", {key: k, bubbles: true, cancelable: true}));
      return taken();
    };
    var total = +((/of (\d+)/.exec(counter.textContent) || [0, -1])[1]);
    st.focus();
    var k0 = taken();
    r.keys = {right: key("ArrowRight") === k0 + 1, left: key("ArrowLeft") === k0,
              end: key("End") === total, home: key("Home") === 0};
    var endBtn = Array.prototype.filter.call(st.querySelectorAll("button"), function (b) {
      return b.textContent.indexOf("end") === 0; })[0];
    if (endBtn) { endBtn.focus(); endBtn.click(); }
    r.keys.focusKept = !!endBtn && st.contains(document.activeElement) && !document.activeElement.disabled;
    key("Home");
    r.aria = {role: st.getAttribute("role"), name: st.getAttribute("aria-label"),
              live: counter.getAttribute("aria-live")};
    r.overflow = st.scrollWidth - st.clientWidth;
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
  // In view: laid out and not inside a closed fold (whose content Chromium may still lay out).
  function inView(e) { return e.getClientRects().length > 0 && !e.closest("details:not([open])"); }
  // The output block that answers a "Predict first" prompt: the first after it in the page.
  function predictions() {
    var outputs = Array.prototype.slice.call(document.querySelectorAll("article .program-output"));
    var shown = [];
    Array.prototype.forEach.call(document.querySelectorAll("article .cb-predict"), function (p, k) {
      var next = outputs.filter(function (o) {
        return p.compareDocumentPosition(o) & Node.DOCUMENT_POSITION_FOLLOWING; })[0];
      if (next && inView(next)) shown.push(k + 1);
    });
    // Everything after a box up to the next heading or the next box (its output, the paragraphs
    // that read it, the figure that plots it): none of it may be in view before it is opened.
    var prose = [];
    var boxes = Array.prototype.slice.call(document.querySelectorAll("article .cb-predict"));
    var all = Array.prototype.slice.call(document.querySelectorAll(
      "article h1, article h2, article h3, article h4, article .cb-predict, article p, article figure, article img, " +
      "article pre, article table, article li"));
    boxes.forEach(function (box, k) {
      var at = all.indexOf(box), seen = [];
      for (var q = at + 1; q < all.length; q++) {
        var e = all[q];
        if (/^H\d$/.test(e.tagName) || e.classList.contains("cb-predict")) break;
        // A stepper is the reader's to work (it starts at step 0); the fold ends before it and
        // the paragraph that introduces it.
        if (e.closest(".cb-stepper")) {
          if (seen.length && seen[seen.length - 1] === "p" && all[q - 1].tagName === "P" && inView(all[q - 1])) seen.pop();
          break;
        }
        if (box.contains(e) || e.closest("summary")) continue;
        if (inView(e) && e.textContent.trim() + (e.tagName === "IMG" ? "img" : "") !== "") seen.push(e.tagName.toLowerCase());
      }
      if (seen.length) prose.push({box: k + 1, shown: seen.slice(0, 5)});
    });
    return {prompts: document.querySelectorAll("article .cb-predict").length, answersInView: shown, proseInView: prose};
  }
  // Code and output blocks (visible ones) that scroll sideways.
  function wide() {
    var blocks = Array.prototype.filter.call(document.querySelectorAll("article pre"), inView);
    return {blocks: blocks.length, scrolling: blocks.filter(function (b) { return b.scrollWidth > b.clientWidth + 1; }).length};
  }
  // WCAG 2.1 contrast: text at least 4.5:1 (3:1 when large), a control's or a marked cell's
  // edge at least 3:1 against what is around it. Colours are composited through the
  // backgrounds and opacities of the element's ancestors.
  function rgba(c) {
    var m = /rgba?\(([^)]*)\)/.exec(c || "");
    if (!m) return null;
    var v = m[1].split(/[\s,\/]+/).filter(Boolean).map(parseFloat);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  }
  function over(top, below) {
    var a = top[3];
    return [top[0] * a + below[0] * (1 - a), top[1] * a + below[1] * (1 - a), top[2] * a + below[2] * (1 - a), 1];
  }
  function chainOf(e) { var c = []; for (var x = e; x && x.nodeType === 1; x = x.parentElement) c.unshift(x); return c; }
  // The background an element's own box shows, and its opacity through its ancestors.
  function backdrop(e) {
    var bg = [255, 255, 255, 1], opacity = 1;
    chainOf(e).forEach(function (x) {
      var st = getComputedStyle(x);
      opacity *= parseFloat(st.opacity);
      var c = rgba(st.backgroundColor);
      if (c && c[3] > 0) bg = over([c[0], c[1], c[2], c[3] * opacity], bg);
    });
    return {bg: bg, opacity: opacity};
  }
  function luminance(c) {
    var f = function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  }
  function ratio(a, b) {
    var x = luminance(a), y = luminance(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  }
  function shown(e) {
    if (!inView(e) || e.closest(".cb-sr, #cb-test-report, [hidden]")) return false;
    var r = e.getBoundingClientRect();
    return r.width > 1 && r.height > 1 && getComputedStyle(e).visibility === "visible";
  }
  function describe(e) {
    return e.tagName.toLowerCase() + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "") +
      " '" + (e.textContent || e.value || "").trim().slice(0, 30) + "'";
  }
  function contrast() {
    var failures = [], texts = 0, controls = 0;
    Array.prototype.forEach.call(document.body.querySelectorAll("*"), function (e) {
      var own = Array.prototype.some.call(e.childNodes, function (n) { return n.nodeType === 3 && n.textContent.trim(); });
      if (!own || !shown(e) || e.closest(":disabled")) return;  // WCAG exempts inactive controls
      var st = getComputedStyle(e), d = backdrop(e), fg = rgba(st.color);
      if (!fg) return;
      var size = parseFloat(st.fontSize), bold = parseInt(st.fontWeight, 10) >= 700;
      var need = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      var got = ratio(over([fg[0], fg[1], fg[2], fg[3] * d.opacity], d.bg), d.bg);
      texts++;
      if (got < need) failures.push(describe(e) + ": text " + got.toFixed(2) + ":1 < " + need);
    });
    var edges = "article button, article input, article select, article textarea, .sidebar-drawer input";
    Array.prototype.forEach.call(document.querySelectorAll(edges), function (e) {
      if (!shown(e) || e.disabled) return;
      controls++;
      var st = getComputedStyle(e), around = backdrop(e.parentElement).bg, own = backdrop(e).bg;
      var border = parseFloat(st.borderTopWidth) > 0 && st.borderTopStyle !== "none" ? rgba(st.borderTopColor) : null;
      var best = Math.max(ratio(own, around), border ? ratio(over(border, around), around) : 1);
      if (best < 3) failures.push(describe(e) + ": edge " + best.toFixed(2) + ":1 < 3");
    });
    // A cell whose line is cached carries a bar (an inset shadow) against the cell's colour.
    Array.prototype.forEach.call(document.querySelectorAll("td.cb-cached"), function (e) {
      if (!shown(e)) return;
      controls++;
      var bar = rgba(getComputedStyle(e).boxShadow), d = backdrop(e);
      if (!bar) return;
      var got = ratio(over([bar[0], bar[1], bar[2], bar[3] * d.opacity], d.bg), d.bg);
      if (got < 3) failures.push(describe(e) + ": cached bar " + got.toFixed(2) + ":1 < 3");
    });
    return {texts: texts, controls: controls, failures: failures};
  }
  // Every control can be reached with the Tab key and shows where the focus is.
  function keyboard() {
    var failures = [], checked = 0;
    var sel = "a[href], button, input, select, textarea, summary, [tabindex]";
    var look = function (e) {
      var st = getComputedStyle(e);
      return [st.outlineStyle !== "none" && parseFloat(st.outlineWidth) > 0 ? st.outlineStyle + st.outlineWidth + st.outlineColor : "",
              st.boxShadow, st.backgroundColor, st.borderTopColor, st.borderBottomColor, st.textDecorationLine].join("|");
    };
    Array.prototype.forEach.call(document.querySelectorAll(sel), function (e) {
      if (!shown(e) || e.disabled || e.getAttribute("tabindex") === "-1" && !e.matches("a[href], button, input, select, textarea, summary")) return;
      checked++;
      if (e.tabIndex < 0) { failures.push(describe(e) + ": not reachable with Tab"); return; }
      var before = look(e);
      e.focus({preventScroll: true});
      var after = look(e), focused = document.activeElement === e;
      e.blur();
      if (!focused) failures.push(describe(e) + ": does not take the focus");
      else if (after === before) failures.push(describe(e) + ": no visible focus");
    });
    return {checked: checked, failures: failures};
  }
  // A reader's slips show text that is otherwise absent: a live stepper's or the playground's
  // error, a checked question's verdict. Each form gets a value it refuses (put back afterwards),
  // so that the message's colours are checked too; a form that shows no message is reported.
  function provokeSlips() {
    var undo = [], silent = [], forms = 0;
    var message = function (f) {
      return Array.prototype.some.call(f.parentNode.querySelectorAll(".cb-pg-error, .cb-live-error, .cb-question-verdict"),
        function (m) { return m.textContent.trim() !== ""; });
    };
    Array.prototype.forEach.call(document.querySelectorAll("article form.cb-live, article form.cb-pg-form, article form.cb-question-form"), function (f) {
      var input = Array.prototype.filter.call(f.querySelectorAll("input"), function (i) {
        return (i.type === "number" || i.type === "text") && i.getClientRects().length > 0; })[0];
      if (!input) return;
      forms++;
      var was = input.value;
      input.value = f.classList.contains("cb-question-form") ? "x" : "-1";
      if (f.classList.contains("cb-question-form")) f.requestSubmit();
      else input.dispatchEvent(new Event("change", {bubbles: true}));
      if (!message(f)) silent.push(describe(f));
      undo.push(function () {
        input.value = was;
        if (f.classList.contains("cb-question-form")) {
          Array.prototype.forEach.call(f.querySelectorAll(".cb-question-verdict"), function (v) { v.textContent = ""; });
        } else input.dispatchEvent(new Event("change", {bubbles: true}));
      });
    });
    return {forms: forms, silent: silent, undo: function () { undo.forEach(function (u) { u(); }); }};
  }
  function accessibility() {
    // The steppers at their last step, so that every cell shows its mark.
    Array.prototype.forEach.call(document.querySelectorAll(".cb-stepper"), function (st) {
      var end = Array.prototype.filter.call(st.querySelectorAll("button"), function (b) { return b.textContent.indexOf("end") === 0; })[0];
      if (end) end.click();
    });
    // Folded text (answers, long outputs and listings) is checked as a reader who opens it sees it.
    var closed = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) { return !d.open; });
    closed.forEach(function (d) { d.open = true; });
    var slips = provokeSlips();
    var theme = document.body.dataset.theme;
    document.body.dataset.theme = "light";
    var light = contrast();
    document.body.dataset.theme = "dark";
    var dark = contrast();
    document.body.dataset.theme = theme || "auto";
    var keys = keyboard();
    slips.undo();
    closed.forEach(function (d) { d.open = false; });
    return {light: light, dark: dark, keyboard: keys, folds: closed.length, slips: {forms: slips.forms, silent: slips.silent}};
  }
  // Arrow keys pressed on the page itself: the page must stay where it is.
  function pressPageKeys() {
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    ["ArrowRight", "ArrowLeft"].forEach(function (k) {
      document.dispatchEvent(new KeyboardEvent("keydown", {key: k, bubbles: true, cancelable: true}));
    });
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
    r.predictions = early.predictions;
    r.a11y = early.a11y;
    r.wide = early.wide;
    r.steppers = early.steppers;
    r.searchNotes = document.querySelectorAll(".cb-search-note").length;
    r.searchResults = document.querySelectorAll("#search-results li").length;
    r.height = document.documentElement.scrollHeight;
    var pre = document.createElement("pre");
    pre.id = "cb-test-report";
    pre.textContent = JSON.stringify(r);
    document.body.appendChild(pre);
  }
  // First what a reader does (steppers, keys), early enough that a page flip would show in
  // the dump; then the report.
  var early = {};
  window.addEventListener("load", function () {
    setTimeout(function () {
      early.predictions = predictions();
      early.wide = wide();
      early.steppers = Array.prototype.map.call(document.querySelectorAll(".cb-stepper"), stepperCheck);
      pressPageKeys();
    }, 300);
    // After the model has loaded (the playground, the live steppers and the questions build on it).
    setTimeout(function () { if (location.search.indexOf("a11y=1") >= 0) early.a11y = accessibility(); }, 1500);
    setTimeout(report, 2500);
  });
})();
"""


class Site(http.server.SimpleHTTPRequestHandler):
    missing: list[str] = []
    harness: dict[str, str] = {}  # page -> the widths harness that frames it

    def log_message(self, *args):
        pass

    def send_error(self, code, message=None, explain=None):
        if code == 404 and not self.path.startswith("/favicon.ico"):
            Site.missing.append(self.path)
        super().send_error(code, message, explain)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/__widths__.html":
            page = urllib.parse.parse_qs(url.query).get("page", [""])[0]
            body = Site.harness.get(page, "").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
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


def ids_in(path: Path) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', path.read_text(errors="replace")))


def main() -> int:
    ap = argparse.ArgumentParser(description="Open every page of the built book in headless Chromium.")
    ap.add_argument("--build", required=True)
    ap.add_argument("--page", action="append", default=[],
                    help="only the pages whose path contains this text (repeatable; links to others are not checked)")
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
    if args.page:
        pages = [p for p in pages if any(s in p for s in args.page)]
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

    # Chromium's own console messages that mean a reader sees something fail.
    console_error = re.compile(r"Uncaught|blocked by CORS|Failed to (fetch|load)|net::ERR_|Not allowed to load")

    # One Chromium for every load (book/headless.py): WORKERS tabs at once, each load in a fresh
    # browser context. Set in the `with` below.
    chrome: list[headless.Chromium] = []

    def load(url: str, width: int) -> tuple[dict | None, str]:
        try:
            with chrome[0].page(width, 1000) as tab:
                dom = tab.load(url, 15000, timeout=90)
                console = tab.console
        except TimeoutError:
            return None, "the page did not settle in time (does a key press flip from page to page?)"
        m = re.search(r'<pre id="cb-test-report">(.*?)</pre>', dom, re.S)
        if not m:
            return None, "no report from the page (did it load?)"
        rep = json.loads(htmllib.unescape(m.group(1)))
        rep["errors"] = rep["errors"] + [f"console: {c[:300]}" for c in console if console_error.search(c)]
        return rep, ""

    def screenshot(url: str, width: int, height: int, out: Path) -> None:
        try:
            with chrome[0].page(width, height) as tab:
                tab.screenshot(url, str(out))
        except TimeoutError:
            pass  # the missing file is reported

    def measure_widths(page: str) -> tuple[dict | None, str]:
        """The page in an iframe of each desktop width (one Chromium run): its blocks that scroll."""
        frames = "".join(f'<iframe data-w="{w}" style="width:{w}px;height:900px;border:0;display:block" '
                         f'src="/{page}"></iframe>' for w in DESKTOP_WIDTHS + (PHONE,))
        harness = ("<!DOCTYPE html><html><body style='margin:0'>" + frames + "<script>"
                   "window.addEventListener('load', function () { setTimeout(function () {"
                   "var out = {}; document.querySelectorAll('iframe').forEach(function (f) {"
                   "out[f.dataset.w] = f.contentWindow.cbMeasure ? f.contentWindow.cbMeasure() : null; });"
                   "var pre = document.createElement('pre'); pre.id = 'cb-widths'; pre.textContent = JSON.stringify(out);"
                   "document.body.appendChild(pre); }, 1500); });</script></body></html>")
        Site.harness[page] = harness
        try:
            with chrome[0].page(2000, 1000) as tab:
                dom = tab.load(base + "__widths__.html?page=" + urllib.parse.quote(page), 10000, timeout=90)
        except TimeoutError:
            return None, "the widths harness did not settle in time"
        m = re.search(r'<pre id="cb-widths">(.*?)</pre>', dom, re.S)
        if not m:
            return None, "no report from the widths harness"
        measured = json.loads(htmllib.unescape(m.group(1)))
        if any(v is None for v in measured.values()):
            return None, f"a frame did not measure: {measured}"
        return measured, ""

    def common(way: str, page: str, url: str, rep: dict) -> None:
        """What must hold in every way of opening a page."""
        for e in rep["errors"]:
            fail(page, f"{way}: {e}")
        if urllib.parse.urlsplit(rep["url"]).path != urllib.parse.urlsplit(url).path:
            fail(page, f"{way}: an arrow key left the page for {rep['url']}")
        shown = rep.get("predictions", {}).get("answersInView", [])
        if shown:
            fail(page, f"{way}: the answer to 'Predict first' prompt(s) {shown} is in view before it is revealed")
        for box in rep.get("predictions", {}).get("proseInView", []):
            fail(page, f"{way}: after 'Predict first' prompt {box['box']}, before the next heading, "
                       f"{', '.join(box['shown'])} in view before the answer is opened")
        answers[0] += rep.get("predictions", {}).get("prompts", 0)
        answers[1] += len(rep.get("predictions", {}).get("proseInView", []))
        for k, st in enumerate(rep.get("steppers", [])):
            keys, aria = st.get("keys", {}), st.get("aria", {})
            if not all(keys.get(n) for n in ("right", "left", "end", "home", "focusKept")):
                fail(page, f"{way}: stepper {k + 1}'s keys or focus: {keys}")
            if not (aria.get("role") and aria.get("name") and aria.get("live")):
                fail(page, f"{way}: stepper {k + 1} lacks a role, a name or a live counter: {aria}")
            if st.get("overflow", 0) > 1:
                fail(page, f"{way}: stepper {k + 1} is {st['overflow']} px wider than its frame")
        wide[way][0] += rep.get("wide", {}).get("blocks", 0)
        wide[way][1] += rep.get("wide", {}).get("scrolling", 0)

    wide = {way: [0, 0] for way in ("http 1280 px", f"http {PHONE} px", "file:// 1280 px")}
    # Pages measured in a phone-wide frame, pages whose text column pans, blocks that scroll in
    # their own frame, wrap buttons offered, blocks, blocks that scroll with their lines wrapped.
    phone_frames = [0, 0, 0, 0, 0, 0]
    answers = [0, 0]  # prompts seen, prompts with some of their answer in view (all three ways)
    desktop_wide = {w: [0, 0, []] for w in DESKTOP_WIDTHS}
    checked_a11y = {"pages": 0, "texts": 0, "controls": 0, "focusable": 0, "folds": 0, "slips": 0}
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as profile, \
            headless.Chromium(browser, profile) as one_chromium, ThreadPoolExecutor(WORKERS) as pool:
        chrome.append(one_chromium)
        # From disk: a copy of the site, the probe written into each page.
        disk = Path(scratch) / "html"
        shutil.copytree(site, disk)
        for page in pages:
            f = disk / page
            f.write_text(f.read_text().replace("<head>", "<head><script>" + PROBE + "</script>", 1))
        urls = {page: base + page + ("?q=cache" if page == "search.html" else "") for page in pages}
        a11y_urls = {page: urls[page] + ("&" if "?" in urls[page] else "?") + "a11y=1" for page in pages}
        disk_urls = {page: (disk / page).as_uri() + ("?q=false+sharing" if page == "search.html" else "")
                     for page in pages}
        desktop = {page: pool.submit(load, a11y_urls[page], 1280) for page in pages}
        widths = {page: pool.submit(measure_widths, page) for page in pages}
        phone = {page: pool.submit(load, urls[page], PHONE) for page in pages}
        from_disk = {page: pool.submit(load, disk_urls[page], 1280) for page in pages}
        for page in pages:
            url = urls[page]
            rep, why = desktop[page].result()
            if rep is None:
                fail(page, why)
                continue
            common("http 1280 px", page, url, rep)
            a11y = rep.get("a11y") or {}
            if not a11y:
                fail(page, "no accessibility report (contrast, keyboard)")
            for theme in ("light", "dark"):
                for f in (a11y.get(theme) or {}).get("failures", [])[:8]:
                    fail(page, f"contrast, {theme} theme: {f}")
            for f in (a11y.get("keyboard") or {}).get("failures", [])[:8]:
                fail(page, f"keyboard: {f}")
            for f in (a11y.get("slips") or {}).get("silent", []):
                fail(page, f"a value the form refuses shows no message: {f}")
            if a11y:
                checked_a11y["pages"] += 1
                checked_a11y["folds"] += a11y["folds"]
                checked_a11y["slips"] += a11y["slips"]["forms"]
                checked_a11y["texts"] += a11y["light"]["texts"] + a11y["dark"]["texts"]
                checked_a11y["controls"] += a11y["light"]["controls"] + a11y["dark"]["controls"]
                checked_a11y["focusable"] += a11y["keyboard"]["checked"]
            measured, why = widths[page].result()
            if measured is None:
                fail(page, f"widths: {why}")
            else:
                if measured[str(PHONE)]["pans"]:
                    fail(page, f"{PHONE} px (a frame of that width): {'; '.join(measured[str(PHONE)]['pans'])}")
                for b in measured[str(PHONE)]["scrollingWrapped"]:
                    fail(page, f"{PHONE} px: a block still scrolls sideways with its lines wrapped: {b}")
                phone_frames[0] += 1
                phone_frames[1] += bool(measured[str(PHONE)]["pans"])
                phone_frames[2] += measured[str(PHONE)]["scrolling"]
                phone_frames[3] += measured[str(PHONE)]["wrapped"]
                phone_frames[4] += measured[str(PHONE)]["blocks"]
                phone_frames[5] += len(measured[str(PHONE)]["scrollingWrapped"])
                for w, m in measured.items():
                    if int(w) == PHONE:
                        continue
                    desktop_wide[int(w)][0] += m["blocks"]
                    desktop_wide[int(w)][1] += m["scrolling"]
                    desktop_wide[int(w)][2] += [f"{page}: {b}" for b in m["widest"]]
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
                            f"{rep['charts']} plots, {rep['predictions']['prompts']} predictions")
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
            # At phone width: no error, and the steppers fit their frame.
            rep, why = phone[page].result()
            if rep is None:
                fail(page, f"http {PHONE} px: {why}")
            else:
                common(f"http {PHONE} px", page, url, rep)
                summary += ", phone: " + ", ".join(f"stepper {k + 1} {'fits' if st.get('overflow', 0) <= 1 else 'overflows'}"
                                                   for k, st in enumerate(rep.get("steppers", []))) if rep.get("steppers") else ""
            print(f"  {page}: {summary}", flush=True)
            if chapter or page == "book/index.html":
                name = "index" if not chapter else Path(page).parent.name
                height = max(800, min(int(rep["height"] if rep else 4000), 16000))
                out = shots / f"{name}.png"
                screenshot(base + page + "?shot=1", 1280, height, out)
                if not out.exists() or out.stat().st_size < 10000:
                    fail(page, f"screenshot {out} missing or blank")
                if chapter and (chapter.group(1) in STEPPER_CHAPTERS or has_stepper(chapter.group(1))):
                    screenshot(base + page + "?shot=1", PHONE, 16000, shots / (name + "-phone.png"))

        for page in pages:
            url = disk_urls[page]
            rep, why = from_disk[page].result()
            if rep is None:
                fail(page, f"file://: {why}")
                continue
            common("file:// 1280 px", page, url, rep)
            if page == "search.html":
                if rep["searchResults"] < 1:
                    fail(page, "file://: searching for 'false sharing' found nothing")
                if rep["searchNotes"] != 1:
                    fail(page, f"file://: {rep['searchNotes']} notes on how to get excerpts (one expected)")
                print(f"  file:// search.html: 'false sharing': {rep['searchResults']} results, "
                      f"{len(rep['errors'])} errors", flush=True)

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
    for way, (blocks, scrolling) in wide.items():
        print(f"  {way}: {scrolling} of {blocks} code and output blocks in view scroll sideways")
    for w, (blocks, scrolling, which) in desktop_wide.items():
        share = scrolling / blocks if blocks else 0
        print(f"  {w} px: {scrolling} of {blocks} code and output blocks (folded ones opened) scroll sideways "
              f"({100 * share:.1f} %)" + "".join(f"\n    {b}" for b in which if w in (1024, 1366)))
        if share > WIDE_SHARE:
            fail("widths", f"at {w} px {scrolling} of {blocks} blocks scroll sideways, more than {100 * WIDE_SHARE:.0f} %")
    print(f"  {PHONE} px frames: the text column pans sideways on {phone_frames[1]} of {phone_frames[0]} pages; "
          f"{phone_frames[2]} of {phone_frames[4]} code and output blocks (folded ones opened) scroll in their own frame, "
          f"{phone_frames[3]} offer to wrap their lines, {phone_frames[5]} scroll with their lines wrapped")
    print(f"  'Predict first': {answers[1]} of {answers[0]} prompts (three ways) show some of their answer before it is opened")
    print(f"  accessibility: {checked_a11y['pages']} pages, {checked_a11y['texts']} texts and {checked_a11y['controls']} "
          f"controls or cells checked for contrast (both themes), {checked_a11y['folds']} folds opened for it, "
          f"{checked_a11y['slips']} forms shown a refused value, {checked_a11y['focusable']} focusable elements for focus")
    # The model in the pages: a stepper's and the playground's counts after a change of
    # setting equal the native programs' (book/model/browser_model_check.py).
    sys.path.insert(0, str(ROOT / "book" / "model"))
    import browser_model_check  # noqa: E402
    for f in browser_model_check.check(browser, build):
        fail("model", f)
    if failures:
        print("\n".join(f"FAIL {f}" for f in failures))
        return 1
    print(f"browser test: {len(pages)} pages passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
