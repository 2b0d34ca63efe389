// The stepper widget: steps through a simulated walk, one read at a time.
// Driven by a chapter's JSON (the `stepper` directive puts it in data-runs): a list
// of walks, each {walk, rows, cols, elem, line_bytes, cache_lines, hits, misses,
// steps: [{i, j, line, hit, cache_after: [line per way]}]}.
(function () {
  "use strict";

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function label(run) {
    return run.walk + " walk, " + run.cache_lines + "-line cache";
  }

  function build(root) {
    const runs = JSON.parse(root.dataset.runs);
    root.textContent = "";
    let run = runs[0];
    let at = 0; // steps taken

    const picker = el("div", "cb-picker");
    picker.setAttribute("role", "group");
    picker.setAttribute("aria-label", "walk");
    const pickButtons = runs.map((r, k) => {
      const b = el("button", "cb-pick", label(r));
      b.type = "button";
      b.addEventListener("click", () => { run = runs[k]; at = 0; layout(); draw(); });
      picker.appendChild(b);
      return b;
    });

    const controls = el("div", "cb-controls");
    const mk = (text, title, f) => {
      const b = el("button", "cb-step", text);
      b.type = "button";
      b.title = title;
      b.addEventListener("click", f);
      controls.appendChild(b);
      return b;
    };
    const first = mk("« start", "back to the start", () => { at = 0; draw(); });
    const back = mk("◀ back", "one read back", () => { if (at > 0) at--; draw(); });
    const fwd = mk("forward ▶", "one read forward", () => { if (at < run.steps.length) at++; draw(); });
    fwd.classList.add("cb-forward");
    const last = mk("end »", "to the end", () => { at = run.steps.length; draw(); });
    const counter = el("span", "cb-counter");
    controls.appendChild(counter);

    const grid = el("table", "cb-grid");
    const side = el("div", "cb-side");
    const cacheTitle = el("div", "cb-cache-title");
    const cache = el("div", "cb-cache");
    const note = el("p", "cb-note");
    const totals = el("p", "cb-totals");
    side.append(cacheTitle, cache, totals);
    const body = el("div", "cb-body");
    body.append(grid, side);
    root.append(picker, controls, body, note);
    root.tabIndex = 0;
    root.addEventListener("keydown", (e) => {
      if (e.key === "ArrowRight") { fwd.click(); e.preventDefault(); }
      if (e.key === "ArrowLeft") { back.click(); e.preventDefault(); }
    });

    let cells = [];
    function layout() {
      grid.textContent = "";
      const head = el("tr");
      head.appendChild(el("th", "", ""));
      for (let j = 0; j < run.cols; j++) head.appendChild(el("th", "", "j=" + j));
      head.appendChild(el("th", "cb-lines", "lines"));
      grid.appendChild(head);
      cells = [];
      const perLine = run.line_bytes / run.elem;
      for (let i = 0; i < run.rows; i++) {
        const tr = el("tr");
        tr.appendChild(el("th", "", "i=" + i));
        const row = [];
        for (let j = 0; j < run.cols; j++) {
          const td = el("td", "cb-cell");
          const line = Math.floor((i * run.cols + j) / perLine);
          td.classList.add(line % 2 ? "cb-odd" : "cb-even");
          td.title = "a[" + i + "][" + j + "], line L" + line;
          tr.appendChild(td);
          row.push(td);
        }
        const l0 = Math.floor((i * run.cols) / perLine);
        const l1 = Math.floor((i * run.cols + run.cols - 1) / perLine);
        tr.appendChild(el("td", "cb-lines", "L" + l0 + (l1 > l0 ? "–L" + l1 : "")));
        grid.appendChild(tr);
        cells.push(row);
      }
      pickButtons.forEach((b, k) => b.setAttribute("aria-pressed", runs[k] === run ? "true" : "false"));
      cacheTitle.textContent = "cache: " + run.cache_lines + " lines of " + run.line_bytes + " bytes";
    }

    function draw() {
      let hits = 0, misses = 0;
      const lastUse = {};
      for (let i = 0; i < run.rows; i++) for (let j = 0; j < run.cols; j++) {
        cells[i][j].textContent = "·";
        cells[i][j].classList.remove("cb-hit", "cb-miss", "cb-now");
      }
      for (let s = 0; s < at; s++) {
        const st = run.steps[s];
        const td = cells[st.i][st.j];
        td.textContent = st.hit ? "H" : "M";
        td.classList.remove("cb-hit", "cb-miss");
        td.classList.add(st.hit ? "cb-hit" : "cb-miss");
        if (st.hit) hits++; else misses++;
        lastUse[st.line] = s;
      }
      const now = at > 0 ? run.steps[at - 1] : null;
      if (now) cells[now.i][now.j].classList.add("cb-now");

      cache.textContent = "";
      const held = now ? now.cache_after : [];
      const before = at > 1 ? run.steps[at - 2].cache_after : [];
      let lru = null;
      if (held.length === run.cache_lines) {
        lru = held.reduce((a, b) => (lastUse[a] <= lastUse[b] ? a : b));
      }
      for (let w = 0; w < run.cache_lines; w++) {
        const slot = el("div", "cb-slot");
        if (w < held.length) {
          slot.textContent = "L" + held[w];
          if (now && held[w] === now.line) slot.classList.add(now.hit ? "cb-hit" : "cb-miss");
          if (held[w] === lru && run.cache_lines > 1) slot.appendChild(el("span", "cb-lru", "LRU"));
        } else {
          slot.textContent = "empty";
          slot.classList.add("cb-empty");
        }
        cache.appendChild(slot);
      }

      counter.textContent = "read " + at + " of " + run.steps.length;
      totals.textContent = misses + " misses, " + hits + " hits so far";
      if (!now) {
        note.textContent = "The cache starts empty. Press forward (or the right arrow key) to read a[0][0].";
      } else {
        const evicted = before.filter((l) => !held.includes(l));
        let text = "Read a[" + now.i + "][" + now.j + "], in line L" + now.line + ": " +
          (now.hit ? "a hit, the line is in the cache." : "a miss, the line is fetched");
        if (!now.hit) text += evicted.length ? " and L" + evicted[0] + ", least recently used, is evicted." : " into a free slot.";
        note.textContent = text;
      }
      first.disabled = back.disabled = at === 0;
      fwd.disabled = last.disabled = at === run.steps.length;
    }

    layout();
    draw();
  }

  function init() {
    document.querySelectorAll(".cb-stepper[data-runs]").forEach(build);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
