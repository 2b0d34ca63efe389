// The stepper widget: steps through a simulated walk, one access at a time.
// Driven by a chapter's JSON (the `stepper` directive puts it in data-runs): a list
// of walks, each {walk, rows, cols, elem, line_bytes, cache_lines, hits, misses,
// steps: [{i, j, line, hit, cache_after: [line per way]}]}.
// A live run (stepper_live.js) also has live: {sets, ways, policy, prefetch}: its cache_after
// lists the lines of every set, set 0 first, and each step has set (the line's set),
// sets_after (the lines of each set), and with a prefetcher prefetched (the lines it fetched)
// and from_prefetch (a hit on a line it fetched that no access had touched yet).
// Optional, for walks over several arrays (chapter 4's product):
//   arrays: [{name, rows, cols, first_line, index: [row name, column name], access: "read" | "update"}],
//     and each step's `array` (an index into arrays); lines are then named after their array (A0, B3);
//   tile: T, and each step's tile_at: [[row, col] of the current tile's corner, per array];
//   group_name ("tile step"), and each step's `group` (its label): buttons jump a group at a time.
(function () {
  "use strict";

  const el = window.cachebookEl;  // dom.js

  function count(n, word) {
    return n + " " + word + (n === 1 ? "" : /(s|ch|sh|x)$/.test(word) ? "es" : "s");
  }

  function label(run) {
    return run.walk + " walk, " + run.cache_lines + "-line cache";
  }

  // The arrays of a walk; a walk without `arrays` is one array a[rows][cols] from line 0.
  function arraysOf(run) {
    if (run.arrays) return run.arrays;
    return [{ name: "a", rows: run.rows, cols: run.cols, first_line: 0, index: ["i", "j"], access: "read" }];
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
    const back = mk("◀ back", "one access back", () => { if (at > 0) at--; draw(); });
    const fwd = mk("forward ▶", "one access forward", () => { if (at < run.steps.length) at++; draw(); });
    fwd.classList.add("cb-forward");
    const last = mk("end »", "to the end", () => { at = run.steps.length; draw(); });
    // Group jumps: to the end of the previous group, or of the group the next access is in.
    const groupEnds = () => {
      const ends = [];
      for (let s = 1; s <= run.steps.length; s++) {
        if (s === run.steps.length || run.steps[s].group !== run.steps[s - 1].group) ends.push(s);
      }
      return ends;
    };
    const prevGroup = mk("", "", () => {
      at = groupEnds().filter((e) => e < at).pop() || 0; draw();
    });
    const nextGroup = mk("", "", () => {
      at = groupEnds().find((e) => e > at) || run.steps.length; draw();
    });
    prevGroup.classList.add("cb-group-step");
    nextGroup.classList.add("cb-group-step");
    const counter = el("span", "cb-counter");
    counter.setAttribute("aria-live", "polite"); // a screen reader says where a step went
    counter.setAttribute("aria-atomic", "true");
    controls.appendChild(counter);
    const groupNow = el("div", "cb-group");

    const grids = el("div", "cb-arrays");
    const side = el("div", "cb-side");
    const cacheTitle = el("div", "cb-cache-title");
    const cache = el("div", "cb-cache");
    const note = el("p", "cb-note");
    note.setAttribute("aria-live", "polite");
    const totals = el("p", "cb-totals");
    const legend = el("p", "cb-legend");
    side.append(cacheTitle, cache, totals);
    const body = el("div", "cb-body");
    root.append(picker, controls, groupNow, body, note);
    root.tabIndex = 0;
    root.setAttribute("role", "group");
    root.setAttribute("aria-roledescription", "stepper");
    // Arrow keys step, Home and End go to the first and last step; the key goes no further
    // (nothing else on the page acts on a key the stepper used).
    root.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      const act = { ArrowRight: fwd, ArrowLeft: back, Home: first, End: last }[e.key];
      if (!act) return;
      e.preventDefault();
      e.stopPropagation();
      if (!act.disabled) act.click();
    });

    let cells = [];     // cells[array][i][j]
    let arrays = [];
    let perLine = 1;
    const multi = () => !!run.arrays;
    const lineOf = (a, i, j) => arrays[a].first_line + Math.floor((i * arrays[a].cols + j) / perLine);
    function lineName(line) {
      if (!multi()) return "L" + line;
      for (const a of arrays) {
        const local = line - a.first_line;
        if (local >= 0 && local < (a.rows * a.cols) / perLine) return a.name + local;
      }
      return "L" + line;
    }
    const cellName = (a, i, j) => arrays[a].name + "[" + i + "][" + j + "]";

    function table(a) {
      const arr = arrays[a];
      const grid = el("table", "cb-grid");
      const head = el("tr");
      head.appendChild(el("th", "", ""));
      for (let j = 0; j < arr.cols; j++) head.appendChild(el("th", "", arr.index[1] + "=" + j));
      head.appendChild(el("th", "cb-lines", "lines"));
      grid.appendChild(head);
      const rows = [];
      for (let i = 0; i < arr.rows; i++) {
        const tr = el("tr");
        tr.appendChild(el("th", "", arr.index[0] + "=" + i));
        const row = [];
        for (let j = 0; j < arr.cols; j++) {
          const td = el("td", "cb-cell");
          const line = lineOf(a, i, j);
          td.classList.add((line - arr.first_line) % 2 ? "cb-odd" : "cb-even");
          td.title = cellName(a, i, j) + ", line " + lineName(line);
          td.dataset.name = td.title;
          tr.appendChild(td);
          row.push(td);
        }
        const l0 = lineOf(a, i, 0), l1 = lineOf(a, i, arr.cols - 1);
        tr.appendChild(el("td", "cb-lines", lineName(l0) + (l1 > l0 ? "–" + lineName(l1) : "")));
        grid.appendChild(tr);
        rows.push(row);
      }
      cells.push(rows);
      return grid;
    }

    function layout() {
      arrays = arraysOf(run);
      perLine = run.line_bytes / run.elem;
      body.textContent = "";
      grids.textContent = "";
      cells = [];
      if (multi()) {
        arrays.forEach((arr, a) => {
          const box = el("div", "cb-array");
          box.append(el("div", "cb-array-name", arr.name), table(a));
          grids.appendChild(box);
        });
        body.append(grids, side);
        body.classList.add("cb-multi");
        legend.textContent = "";
        const key = (cls, text, words) => legend.append(el("span", "cb-key " + cls, text), words);
        key("cb-miss", "M", " miss, ");
        key("cb-hit", "H", " hit (a cell shows its latest access); ");
        if (run.tile) key("cb-key-tile", "\u00a0", " the current tiles; ");
        key("cb-key-cached", "\u00a0", " the cell's line is in the cache");
        side.appendChild(legend);
      } else {
        body.append(table(0), side);
        body.classList.remove("cb-multi");
        legend.remove();
      }
      const grouped = !!run.steps[0].group;
      prevGroup.hidden = nextGroup.hidden = groupNow.hidden = !grouped;
      if (grouped) {
        prevGroup.textContent = "◀◀ " + run.group_name;
        nextGroup.textContent = run.group_name + " ▶▶";
        prevGroup.title = "to the end of the previous " + run.group_name;
        nextGroup.title = "to the end of this " + run.group_name;
      }
      const unit = multi() ? "access" : "read";
      back.title = "one " + unit + " back";
      fwd.title = "one " + unit + " forward";
      pickButtons.forEach((b, k) => b.setAttribute("aria-pressed", runs[k] === run ? "true" : "false"));
      root.setAttribute("aria-label", "Cache stepper, " + label(run) +
        ": arrow keys step, Home and End go to the first and last access");
      const sets = run.live ? run.live.sets : 1;
      cacheTitle.textContent = "cache: " + run.cache_lines + " lines of " + run.line_bytes + " bytes" +
        (sets > 1 ? ", " + sets + " sets of " + run.live.ways + " ways (a line L goes to set L mod " + sets + ")" : "");
      cache.classList.toggle("cb-cache-sets", sets > 1);
    }

    // A cell shows a symbol; a screen reader reads words (its name, line and state).
    function mark(td, symbol, words) {
      td.textContent = "";
      const shown = el("span", "", symbol);
      shown.setAttribute("aria-hidden", "true");
      td.append(shown, el("span", "cb-sr", td.dataset.name + ": " + words));
    }

    // When the focused button is disabled by a step (end, start), focus moves to the button
    // that goes the other way, so the keyboard stays inside the widget.
    const opposite = new Map([[fwd, back], [last, first], [nextGroup, prevGroup],
      [back, fwd], [first, last], [prevGroup, nextGroup]]);

    function draw() {
      const focused = root.contains(document.activeElement) ? document.activeElement : null;
      let hits = 0, misses = 0;
      const missesOf = arrays.map(() => 0);
      const lastUse = {};
      cells.forEach((rows) => rows.forEach((row) => row.forEach((td) => {
        mark(td, "·", "not accessed yet");
        td.classList.remove("cb-hit", "cb-miss", "cb-now", "cb-off", "cb-cached",
          "cb-tile-t", "cb-tile-b", "cb-tile-l", "cb-tile-r");
      })));
      for (let s = 0; s < at; s++) {
        const st = run.steps[s];
        const td = cells[st.array || 0][st.i][st.j];
        mark(td, st.hit ? "H" : "M", st.hit ? "a hit" : "a miss");
        td.classList.remove("cb-hit", "cb-miss");
        td.classList.add(st.hit ? "cb-hit" : "cb-miss");
        if (st.hit) hits++; else { misses++; missesOf[st.array || 0]++; }
        lastUse[st.line] = s;
      }
      const now = at > 0 ? run.steps[at - 1] : null;
      if (now) cells[now.array || 0][now.i][now.j].classList.add("cb-now");
      const held = now ? now.cache_after : [];

      if (multi()) {
        // The tiles of the access just made (or of the first one, before any), and the cached lines.
        const shown = now || run.steps[0];
        cells.forEach((rows, a) => rows.forEach((row, i) => row.forEach((td, j) => {
          if (held.includes(lineOf(a, i, j))) td.classList.add("cb-cached");
          if (!shown.tile_at) return;
          const r0 = shown.tile_at[a][0], c0 = shown.tile_at[a][1], t = run.tile;
          if (i < r0 || i >= r0 + t || j < c0 || j >= c0 + t) { td.classList.add("cb-off"); return; }
          if (i === r0) td.classList.add("cb-tile-t");
          if (i === r0 + t - 1) td.classList.add("cb-tile-b");
          if (j === c0) td.classList.add("cb-tile-l");
          if (j === c0 + t - 1) td.classList.add("cb-tile-r");
        })));
        groupNow.textContent = shown.group ? run.group_name + ": " + shown.group : "";
      }

      cache.textContent = "";
      const before = at > 1 ? run.steps[at - 2].cache_after : [];
      let lru = null;
      const oneLruSet = !run.live || (run.live.sets === 1 && run.live.policy === "lru");
      if (held.length === run.cache_lines && oneLruSet) {
        lru = held.reduce((a, b) => (lastUse[a] <= lastUse[b] ? a : b));
      }
      // One row of slots per set (a recorded walk, or one set: a single row).
      const sets = run.live ? run.live.sets : 1;
      const ways = run.live ? run.live.ways : run.cache_lines;
      const bySet = now && now.sets_after ? now.sets_after : [held];
      for (let s = 0; s < sets; s++) {
        const row = el("div", "cb-set");
        if (sets > 1) row.appendChild(el("span", "cb-set-name", "set " + s));
        const lines = bySet[s] || [];
        for (let w = 0; w < ways; w++) {
          const slot = el("div", "cb-slot");
          if (w < lines.length) {
            slot.textContent = lineName(lines[w]);
            if (now && lines[w] === now.line) slot.classList.add(now.hit ? "cb-hit" : "cb-miss");
            else if (now && now.prefetched && now.prefetched.includes(lines[w])) {
              slot.classList.add("cb-prefetched");
              slot.title = "fetched by the prefetcher";
            }
            if (lines[w] === lru && run.cache_lines > 1) slot.appendChild(el("span", "cb-lru", "LRU"));
          } else {
            slot.textContent = "empty";
            slot.classList.add("cb-empty");
          }
          row.appendChild(slot);
        }
        cache.appendChild(row);
      }

      const unit = multi() ? "access " : "read ";
      counter.textContent = unit + at + " of " + run.steps.length;
      let split = "";
      if (multi()) split = " (" + arrays.map((arr, a) => arr.name + " " + missesOf[a]).join(", ") + ")";
      totals.textContent = count(misses, "miss") + split + ", " + count(hits, "hit") + " so far";
      const verb = (st) => (arrays[st.array || 0].access === "update" ? "update " : "read ");
      if (!now) {
        const st = run.steps[0];
        note.textContent = "The cache starts empty. Press forward (or the right arrow key) to " + verb(st) +
          cellName(st.array || 0, st.i, st.j) + ".";
      } else {
        const evicted = before.filter((l) => !held.includes(l));
        const v = verb(now);
        const inSet = run.live && run.live.sets > 1 ? ", set " + now.set : "";
        let text = v[0].toUpperCase() + v.slice(1) + cellName(now.array || 0, now.i, now.j) + ", in line " +
          lineName(now.line) + inSet + ": " + (now.hit ? (now.from_prefetch
            ? "a hit, the prefetcher brought the line in before it was asked for."
            : "a hit, the line is in the cache.") : "a miss, the line is fetched");
        // A live step names the line its own fill evicted; the prefetcher's fills evicted the rest.
        const own = "evicted" in now ? (now.evicted === null ? [] : [now.evicted]) : evicted.slice(0, 1);
        if (!now.hit) {
          const why = oneLruSet ? ", least recently used," : " (" + run.live.policy + ")";
          text += own.length ? " and " + lineName(own[0]) + why + " is evicted" + (inSet ? " from set " + now.set : "") + "."
            : inSet ? " into a free way of set " + now.set + "." : " into a free slot.";
        }
        if (now.prefetched && now.prefetched.length) {
          const others = evicted.filter((l) => !own.includes(l));
          text += " The " + run.live.prefetch + " prefetcher also fetched " + now.prefetched.map(lineName).join(", ") +
            (others.length ? ", evicting " + others.map(lineName).join(", ") : "") + ".";
        }
        note.textContent = text;
      }
      first.disabled = back.disabled = prevGroup.disabled = at === 0;
      fwd.disabled = last.disabled = nextGroup.disabled = at === run.steps.length;
      if (focused && focused.disabled) {
        const other = opposite.get(focused);
        (other && !other.disabled && !other.hidden ? other : root).focus();
      }
    }

    // Live: the reader's own cache and walk, recomputed on the model in the page (live.js).
    // The recorded walks stay what a reader without JavaScript, or without the model, sees.
    if (window.cachebookModel && window.CachebookStepperLive) {
      window.cachebookModel().then((model) => {
        window.CachebookStepperLive.controls(root, model, () => run, (fresh) => { run = fresh; at = 0; layout(); draw(); });
      }, () => {});
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
