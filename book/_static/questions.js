// Questions on the model (the model-question directive of book/cachebook_sphinx.py): an
// answer box checked by the book's model in the page (live.js), and the worked count on request.
(function () {
  "use strict";

  const el = window.cachebookEl;  // dom.js

  // The walk in the cache: totals, per array, and the lines touched (each one's first access misses).
  function count(model, spec) {
    const walk = model.walk(spec.walk);
    const cache = model.cache(spec.cache);
    cache.runWalk(walk);
    const lines = new Set();
    for (let k = 0; k < walk.length; k++) lines.add(Math.floor(walk.address(k) / spec.cache.lineBytes));
    const result = { all: cache.totals(0), arrays: [1, 2, 3].map((s) => cache.totals(s)), distinct: lines.size };
    cache.free();
    return result;
  }

  // The misses beyond the first touch of each line: lines fetched again after an eviction.
  function again(count, cache, evictions) {
    const evicted = evictions + " line" + (evictions === 1 ? "" : "s");
    if (count === 0) {
      return "No line is fetched twice: " + cache + (evictions === 0 ? " evicted none." : " evicted " + evicted +
        ", each after its last use.");
    }
    return "The other " + count + (count === 1 ? " miss fetches" : " misses fetch") + " a line again after " + cache +
      " evicted it; it evicted " + evicted + " in all.";
  }

  function worked(spec, r) {
    const c = spec.cache;
    const t = r.all;
    const names = ["A", "B", "C"];
    const per = r.arrays.map((a, k) => [names[k], a]).filter(([, a]) => a.accesses > 0);
    const split = per.length > 1 ? " (" + per.map(([n, a]) => n + ": " + a.accesses + " accesses, " + a.misses + " misses").join("; ") + ")" : "";
    return [
      "The walk makes " + t.accesses + " accesses" + split + ".",
      "They touch " + r.distinct + " different lines of " + c.lineBytes + " bytes; the first access to each line misses: " +
        r.distinct + " misses.",
      again(t.misses - r.distinct, "the cache (" + c.sets + " set" + (c.sets > 1 ? "s" : "") + " x " + c.ways + " way" +
        (c.ways > 1 ? "s" : "") + ", " + c.policy + ")", t.evictions),
      "In all: " + t.misses + " misses and " + t.hits + " hits.",
    ].concat(spec.expect === undefined ? [] : [agreement(spec, r.all[spec.ask])]);
  }

  // The chapter's program counted the same walk natively; the page says whether the two agree.
  function agreement(spec, answer) {
    if (spec.expect === answer) return "The chapter's program, run natively, counts the same " + answer + " " + spec.ask + ".";
    return "The chapter's program, run natively, counts " + spec.expect + " " + spec.ask + ", not " + answer +
      ": the model in this page disagrees with it, which is a bug in the book.";
  }

  function build(box, model) {
    const spec = JSON.parse(box.dataset.spec);
    const r = count(model, spec);
    const answer = r.all[spec.ask];
    box.dataset.modelAnswer = String(answer);
    const note = box.querySelector(".cb-question-noscript");
    if (note) note.remove();
    const form = el("form", "cb-question-form");
    const label = el("label", "", "Your answer (" + spec.ask + "): ");
    const input = el("input");
    input.type = "text";
    input.inputMode = "numeric";
    input.size = 8;
    label.appendChild(input);
    const checkButton = el("button", "cb-question-check", "Check");
    checkButton.type = "submit";
    const verdict = el("span", "cb-question-verdict");
    verdict.setAttribute("aria-live", "polite");
    form.append(label, checkButton, verdict);
    const reveal = el("details", "cb-question-worked");
    reveal.appendChild(el("summary", "", "Show the worked count"));
    for (const line of worked(spec, r)) reveal.appendChild(el("p", "", line));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const given = input.value.trim();
      if (!/^[0-9]+$/.test(given)) {
        verdict.textContent = " A whole number, please.";
      } else if (Number(given) === answer) {
        verdict.textContent = " Right: the model counts " + answer + " " + spec.ask + ".";
      } else {
        verdict.textContent = " Not " + given + ": the model counts " + (Number(given) < answer ? "more" : "fewer") +
          ". Try again, or open the worked count.";
      }
    });
    box.append(form, reveal);
  }

  function init() {
    const boxes = document.querySelectorAll(".cb-question[data-spec]");
    if (!boxes.length || !window.cachebookModel) return;
    window.cachebookModel().then((model) => boxes.forEach((b) => build(b, model)), () => {});
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
