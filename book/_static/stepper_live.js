// Live steppers: controls under a stepper (stepper.js) that remake its walk on the book's
// model in the page (live.js): the cache (sets, ways, line bytes, policy, prefetcher), the matrix size,
// and for a product of matrices the tile and the loop order. A remade walk has the fields
// of a recorded one (see stepper.js), so the stepper draws it the same way.
(function () {
  "use strict";

  const ORDERS = ["ijk", "jik", "jki", "kji", "kij", "ikj"];

  const el = window.cachebookEl;  // dom.js

  // Every line the cache holds, set 0 first (one set: the ways in order, as recorded walks list them).
  function held(cache) {
    return [].concat(...cache.residentLines());
  }

  // One access on the live cache, as a step records it: the outcome, the lines of every set
  // after it, and what the prefetcher did (the lines it fetched; whether a hit found a line
  // that it had fetched and no access had touched yet).
  function stepOn(cache, address, write, stream, p, untouched) {
    const before = new Set(held(cache));
    const r = cache.access(address, write, stream);
    const sets = cache.residentLines();
    const after = [].concat(...sets);
    const line = Math.floor(address / p.line);
    const step = { line, set: r.set, hit: r.hit, evicted: r.evicted ? r.evictedLine : null, cache_after: after, sets_after: sets };
    if (p.prefetch !== "none") {
      step.from_prefetch = r.hit && untouched.has(line);
      untouched.delete(line);
      step.prefetched = after.filter((l) => !before.has(l) && l !== line);
      for (const l of step.prefetched) untouched.add(l);
      for (const l of before) if (!after.includes(l)) untouched.delete(l);
    }
    return step;
  }

  function cacheOf(model, p) {
    return model.cache({ sets: p.sets, ways: p.ways, lineBytes: p.line, policy: p.policy, prefetch: p.prefetch });
  }

  function check(p, multi) {
    const whole = (k, lo, hi) => {
      if (!Number.isInteger(p[k]) || p[k] < lo || p[k] > hi) throw new Error(k + ": a whole number from " + lo + " to " + hi);
    };
    whole("sets", 1, 64);
    whole("ways", 1, 64);
    whole("line", p.elem, 4096);
    if (p.sets * p.ways > 64) throw new Error("at most 64 lines in all (sets x ways), so that the cache fits the view");
    if (p.line % p.elem !== 0) throw new Error("line: a multiple of the element size, " + p.elem + " bytes");
    if (multi) {
      whole("n", 1, 8);
      whole("tile", 0, p.n);
    } else {
      whole("rows", 1, 16);
      whole("cols", 1, 16);
    }
  }

  // One array a[rows][cols] of elem-byte values from address 0, row by row or column by column.
  function arrayWalk(model, base, p) {
    const cache = cacheOf(model, p);
    const steps = [];
    const untouched = new Set();
    let hits = 0;
    const visit = (i, j) => {
      const address = (i * p.cols + j) * p.elem;
      const step = Object.assign({ i, j }, stepOn(cache, address, false, 1, p, untouched));
      steps.push(step);
      if (step.hit) hits++;
    };
    const outer = p.walk === "row" ? p.rows : p.cols;
    const inner = p.walk === "row" ? p.cols : p.rows;
    for (let x = 0; x < outer; x++) for (let y = 0; y < inner; y++) (p.walk === "row" ? visit(x, y) : visit(y, x));
    cache.free();
    return Object.assign({}, base, { walk: p.walk, rows: p.rows, cols: p.cols, line_bytes: p.line,
      cache_lines: p.sets * p.ways, hits, misses: steps.length - hits, steps });
  }

  // C = A x B, n x n, by trace.hpp's generators: tiled (ii, jj, kk; then i, k, j), or
  // untiled in the chosen loop order. Grouped as the chapter groups them.
  function productWalk(model, base, p) {
    const tiled = p.tile > 0 || p.order === "ikj";
    const walk = model.walk({ kind: tiled ? "tiled" : "matmul", n: p.n, elem: p.elem, tile: p.tile, order: p.order, lineBytes: p.line });
    const rounded = Math.ceil((p.n * p.n * p.elem) / p.line) * p.line;
    const bases = [0, rounded, 2 * rounded];
    const cache = cacheOf(model, p);
    const steps = [];
    const untouched = new Set();
    let hits = 0;
    for (let k = 0; k < walk.length; k++) {
      const a = walk.stream(k) - 1;
      const address = walk.address(k);
      const cell = (address - bases[a]) / p.elem;
      const step = Object.assign({ array: a, i: Math.floor(cell / p.n), j: cell % p.n },
        stepOn(cache, address, walk.write(k), a + 1, p, untouched));
      steps.push(step);
      if (step.hit) hits++;
    }
    cache.free();
    markGroups(steps, p);
    const arrays = base.arrays.map((arr, a) => Object.assign({}, arr, { rows: p.n, cols: p.n, first_line: bases[a] / p.line }));
    return Object.assign({}, base, { n: p.n, rows: p.n, cols: p.n, tile: p.tile, line_bytes: p.line,
      cache_lines: p.sets * p.ways, hits, misses: steps.length - hits, arrays,
      walk: tiled ? (p.tile ? "tiled (T = " + p.tile + ")" : "ikj") : p.order,
      group_name: p.tile ? "tile step" : "row of C", steps });
  }

  // Each iteration is three steps, A[i][k], B[k][j], C[i][j]: its group and tiles follow from them.
  function markGroups(steps, p) {
    const t = p.tile || p.n;
    for (let s = 0; s + 2 < steps.length; s += 3) {
      const i = steps[s].i, k = steps[s].j, j = steps[s + 1].j;
      const ii = Math.floor(i / t) * t, jj = Math.floor(j / t) * t, kk = Math.floor(k / t) * t;
      for (let q = s; q < s + 3; q++) {
        steps[q].group = p.tile ? "ii = " + ii + ", jj = " + jj + ", kk = " + kk : "i = " + i;
        if (p.tile) steps[q].tile_at = [[ii, kk], [kk, jj], [ii, jj]];
      }
    }
  }

  function controls(root, model, current, replace) {
    const first = current();
    const multi = !!first.arrays;
    const box = el("form", { class: "cb-live" });
    box.appendChild(el("span", { class: "cb-live-title" }, "Try your own: "));
    const inputs = {};
    const add = (key, label, value, options) => {
      const wrap = el("label", {}, label + " ");
      const input = options ? el("select", { name: key }) : el("input", { name: key, type: "text", size: "3", inputmode: "numeric" });
      for (const o of options || []) input.appendChild(el("option", { value: o }, o));
      input.value = String(value);
      wrap.appendChild(input);
      box.appendChild(wrap);
      inputs[key] = input;
    };
    add("sets", "sets", 1);
    add("ways", "ways", first.cache_lines);
    add("line", "line bytes", first.line_bytes);
    add("policy", "policy", "lru", ["lru", "fifo", "random", "plru"]);
    add("prefetch", "prefetcher", "none", ["none", "next-line", "stride"]);
    if (multi) {
      add("n", "n", first.n);
      add("tile", "tile", first.tile);
      add("order", "order (tile 0)", "ikj", ORDERS);
    } else {
      add("walk", "walk", first.walk, ["row", "column"]);
      add("rows", "rows", first.rows);
      add("cols", "columns", first.cols);
    }
    const status = el("p", { class: "cb-live-status", "aria-live": "polite" });
    root.append(box, status);
    box.addEventListener("submit", (e) => e.preventDefault());
    box.addEventListener("keydown", (e) => e.stopPropagation()); // arrow keys edit the field, not step
    box.addEventListener("change", () => {
      const p = { elem: first.elem };
      for (const [k, input] of Object.entries(inputs)) {
        p[k] = ["policy", "order", "walk", "prefetch"].includes(k) ? input.value : Number(input.value);
      }
      try {
        check(p, multi);
        const fresh = multi ? productWalk(model, first, p) : arrayWalk(model, first, p);
        fresh.live = { sets: p.sets, ways: p.ways, policy: p.policy, prefetch: p.prefetch };
        replace(fresh);
        const count = (n, word) => n + " " + word + (n === 1 ? "" : /(s|ch|sh|x)$/.test(word) ? "es" : "s");
        status.textContent = "On the model: " + count(fresh.misses, "miss") + ", " + count(fresh.hits, "hit") + " in " +
          count(fresh.steps.length, "access") + " (" + count(p.sets, "set") + " x " + count(p.ways, "way") + " x " + p.line +
          " B, " + p.policy + (p.prefetch === "none" ? "" : ", " + p.prefetch + " prefetcher") + ").";
        status.classList.remove("cb-live-error");
      } catch (e) {
        status.textContent = e.message;
        status.classList.add("cb-live-error");
      }
    });
  }

  window.CachebookStepperLive = { controls };
})();
