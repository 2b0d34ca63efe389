// The playground (book/playground.md): a walk or a pasted trace, run on the book's model
// (window.cachebookModel, from live.js) in a cache the reader picks. Everything chosen is
// kept in the address's #fragment, so a link reproduces the example.
(function () {
  "use strict";

  const DEFAULTS = {
    walk: "row", n: "32", elem: "8", tile: "8", order: "ijk", seed: "1", trace: "",
    cache: "0", sets: "8", ways: "8", line: "64", policy: "lru", cseed: "1", prefetch: "none",
  };
  const WALK_NAMES = {
    row: "row by row", column: "column by column", matmul: "C = A x B, one of the six loop orders",
    tiled: "C = A x B, tiled", transpose: "transpose B = A^T (tile 0: plain)", chase: "pointer chase",
    trace: "a pasted trace",
  };
  const SHOWN_ACCESSES = 64; // the log of the first accesses
  const SHOWN_SETS = 64;

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function stateFromUrl() {
    const s = Object.assign({}, DEFAULTS);
    const params = new URLSearchParams(location.hash.slice(1));
    for (const k of Object.keys(DEFAULTS)) if (params.has(k)) s[k] = params.get(k);
    return s;
  }

  function field(form, state, key, label, options) {
    const wrap = el("label", { class: "cb-pg-field" }, label + " ");
    let input;
    if (options) {
      input = el("select", { name: key });
      for (const [value, text] of options) input.appendChild(el("option", { value }, text));
    } else {
      input = el("input", { name: key, type: "text", size: "8", inputmode: "numeric" });
    }
    input.value = state[key];
    wrap.appendChild(input);
    form.appendChild(wrap);
    return input;
  }

  // A pasted trace: lackey lines (I is skipped, M is a read then a write) or one address
  // a line (0x-hex or decimal). Returns triples for Cache.runTriples(), or throws.
  function parseTrace(text) {
    const out = [];
    const lines = text.split("\n");
    lines.forEach((raw, k) => {
      const line = raw.trim();
      if (line === "" || line.startsWith("==") || line.startsWith("--")) return;
      const m = /^([ILSM])\s+([0-9a-fA-F]+),(\d+)$/.exec(line);
      let hex, writes;
      if (m) {
        if (m[1] === "I") return;
        hex = m[2];
        writes = m[1] === "M" ? [0, 1] : [m[1] === "S" ? 1 : 0];
      } else if (/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(line)) {
        hex = line.startsWith("0x") ? line.slice(2) : BigInt(line).toString(16);
        writes = [0];
      } else {
        throw new Error("line " + (k + 1) + ": expected a lackey line (' L 7ff0,8') or an address, got '" + line + "'");
      }
      if (hex.length > 16) throw new Error("line " + (k + 1) + ": address does not fit in 64 bits");
      const big = BigInt("0x" + hex);
      for (const w of writes) out.push(Number(big & 0xffffffffn), Number(big >> 32n), w);
    });
    return Uint32Array.from(out);
  }

  function cacheConfig(state) {
    return {
      sets: Number(state.sets), ways: Number(state.ways), lineBytes: Number(state.line),
      policy: state.policy, seed: Number(state.cseed), prefetch: state.prefetch,
    };
  }

  function accessesOf(model, state) {
    if (state.walk === "trace") return { triples: parseTrace(state.trace), streams: false };
    const walk = model.walk({
      kind: state.walk, n: Number(state.n), elem: Number(state.elem), tile: Number(state.tile),
      order: state.order, lineBytes: Number(state.line), seed: Number(state.seed),
    });
    return { triples: walk.triples, streams: ["matmul", "tiled", "transpose"].includes(state.walk) };
  }

  // Runs the accesses: the first SHOWN_ACCESSES one by one (for the log), the rest at once.
  function simulate(model, state) {
    const { triples, streams } = accessesOf(model, state);
    const cache = model.cache(cacheConfig(state));
    const count = triples.length / 3;
    const log = [];
    for (let k = 0; k < Math.min(count, SHOWN_ACCESSES); k++) {
      const address = (BigInt(triples[3 * k + 1]) << 32n) | BigInt(triples[3 * k]);
      const write = (triples[3 * k + 2] & 1) === 1;
      const stream = triples[3 * k + 2] >> 8;
      log.push({ address, write, stream, r: cache.access(address, write, stream) });
    }
    if (count > SHOWN_ACCESSES) cache.runTriples(triples.subarray(3 * SHOWN_ACCESSES), count - SHOWN_ACCESSES);
    const result = { count, log, streams, totals: [0, 1, 2, 3].map((s) => cache.totals(s)), sets: [] };
    if (count > 0) {
      result.kinds = cache.splitMisses(triples); // compulsory, capacity, conflict (miss_kinds.cpp)
      result.optimal = cache.optimal(triples); // Belady's OPT in the same geometry
    }
    for (let s = 0; s < cache.config.sets; s++) {
      const lines = cache.resident(s);
      if (lines.length) result.sets.push([s, lines]);
    }
    cache.free();
    return result;
  }

  function totalsTable(result) {
    const table = el("table", { class: "cb-pg-totals" });
    const head = el("tr");
    for (const h of ["", "accesses", "hits", "misses", "evictions", "dirty evictions"]) head.appendChild(el("th", {}, h));
    table.appendChild(head);
    const rows = result.streams ? [[0, "all"], [1, "A"], [2, "B"], [3, "C"]] : [[0, "all"]];
    for (const [s, name] of rows) {
      const t = result.totals[s];
      if (s > 0 && t.accesses === 0) continue;
      const tr = el("tr", { "data-stream": name });
      tr.appendChild(el("th", {}, name));
      for (const v of [t.accesses, t.hits, t.misses, t.evictions, t.dirtyEvictions]) tr.appendChild(el("td", {}, String(v)));
      table.appendChild(tr);
    }
    return table;
  }

  function contents(result) {
    const box = el("div", { class: "cb-pg-contents" });
    box.appendChild(el("p", {}, "What the cache holds at the end (lines are address / line size; sets left out are empty):"));
    const table = el("table", {});
    for (const [s, lines] of result.sets.slice(0, SHOWN_SETS)) {
      const tr = el("tr");
      tr.appendChild(el("th", {}, "set " + s));
      tr.appendChild(el("td", {}, lines.join("  ")));
      table.appendChild(tr);
    }
    box.appendChild(table);
    if (result.sets.length > SHOWN_SETS) box.appendChild(el("p", {}, "... and " + (result.sets.length - SHOWN_SETS) + " more sets."));
    return box;
  }

  function accessLog(result) {
    const names = ["", "A", "B", "C"];
    const lines = result.log.map((a, k) => {
      let text = (k + 1) + ". " + (a.write ? "write " : "read ") + (names[a.stream] ? names[a.stream] + " " : "") +
        "0x" + a.address.toString(16) + ": set " + a.r.set + ", way " + a.r.way + ", " + (a.r.hit ? "hit" : "miss");
      if (a.r.evicted) text += ", evicts line " + a.r.evictedLine;
      return text;
    });
    const more = result.count > result.log.length ? "\n... " + (result.count - result.log.length) + " more accesses" : "";
    return el("pre", { class: "cb-pg-log" }, lines.join("\n") + more);
  }

  function render(out, result) {
    out.textContent = "";
    const t = result.totals[0];
    out.appendChild(el("p", { class: "cb-pg-summary" },
      result.count + " accesses: " + t.hits + " hits, " + t.misses + " misses, " + t.evictions + " evictions."));
    out.appendChild(el("p", {}, "As cachesim prints it: "));
    out.lastChild.appendChild(el("code", { class: "cb-pg-line" }, "hits:" + t.hits + " misses:" + t.misses + " evictions:" + t.evictions));
    out.appendChild(totalsTable(result));
    if (result.kinds) {
      const k = result.kinds;
      out.appendChild(el("p", { class: "cb-pg-kinds" }, "The misses by kind: " + k.compulsory + " compulsory, " + k.capacity +
        " capacity, " + k.conflict + " conflict. Belady's optimal replacement (OPT) in the same sets and ways: " +
        result.optimal.misses + " misses."));
    }
    out.appendChild(contents(result));
    out.appendChild(el("p", {}, "The first accesses, one by one:"));
    out.appendChild(accessLog(result));
  }

  function build(root, model) {
    const state = stateFromUrl();
    const form = el("form", { class: "cb-pg-form" });
    const inputs = {};
    const add = (key, label, options) => { inputs[key] = field(form, state, key, label, options); };
    add("walk", "Walk", Object.entries(WALK_NAMES));
    add("n", "n (matrix side, or nodes)");
    add("elem", "element bytes");
    add("order", "loop order", ["ijk", "jik", "jki", "kji", "kij", "ikj"].map((o) => [o, o]));
    add("tile", "tile");
    add("seed", "chase seed");
    const traceBox = el("label", { class: "cb-pg-trace" }, "Trace (lackey lines or addresses, one a line) ");
    inputs.trace = el("textarea", { name: "trace", rows: "6", cols: "50" });
    inputs.trace.value = state.trace;
    traceBox.appendChild(inputs.trace);
    form.appendChild(traceBox);
    form.appendChild(el("br"));
    add("cache", "Cache", window.cachebookNamedCaches.map((c, k) => [String(k), c.name]).concat([["custom", "custom"]]));
    add("sets", "sets");
    add("ways", "ways");
    add("line", "line bytes");
    add("policy", "policy", ["lru", "fifo", "random", "plru"].map((p) => [p, p]));
    add("cseed", "random seed");
    add("prefetch", "prefetcher", ["none", "next-line", "stride"].map((p) => [p, p]));
    const out = el("div", { class: "cb-pg-out", "aria-live": "polite" });
    root.textContent = "";
    root.appendChild(form);
    root.appendChild(out);

    function update(changed) {
      for (const k of Object.keys(inputs)) state[k] = inputs[k].value;
      const named = window.cachebookNamedCaches[Number(state.cache)];
      if (changed === "cache" && named) {
        for (const [k, v] of [["sets", named.sets], ["ways", named.ways], ["line", named.lineBytes]]) inputs[k].value = state[k] = String(v);
      } else if (["sets", "ways", "line"].includes(changed)) {
        inputs.cache.value = state.cache = "custom";
      }
      traceBox.hidden = state.walk !== "trace";
      // Only the fields the walk reads are shown.
      const uses = { n: state.walk !== "trace", elem: state.walk !== "trace", order: state.walk === "matmul",
        tile: state.walk === "tiled" || state.walk === "transpose", seed: state.walk === "chase" };
      for (const [k, shown] of Object.entries(uses)) inputs[k].parentNode.hidden = !shown;
      inputs.cseed.parentNode.hidden = state.policy !== "random";
      history.replaceState(null, "", "#" + new URLSearchParams(state).toString());
      try {
        render(out, simulate(model, state));
      } catch (e) {
        out.textContent = "";
        out.appendChild(el("p", { class: "cb-pg-error" }, e.message));
      }
    }
    form.addEventListener("change", (e) => update(e.target.name));
    form.addEventListener("submit", (e) => { e.preventDefault(); update(""); });
    update("");
  }

  function start() {
    const root = document.getElementById("cb-playground");
    if (!root) return;
    window.cachebookModel().then((model) => build(root, model), (e) => {
      root.textContent = "The model did not load: " + e.message;
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
