// The playground (book/playground.md): a walk or a pasted trace, run on the book's model
// (window.cachebookModel, from live.js) in a cache the reader picks. Everything chosen is
// kept in the address's #fragment, so a link reproduces the example.
(function () {
  "use strict";

  const DEFAULTS = {
    walk: "row", n: "32", rows: "32", cols: "32", lead: "32", elem: "8", tile: "8", order: "ijk", seed: "1", trace: "",
    cache: "0", sets: "8", ways: "8", line: "64", policy: "lru", cseed: "1", prefetch: "none",
  };
  const WALK_NAMES = {
    row: "row by row", column: "column by column", matmul: "C = A x B, one of the six loop orders",
    tiled: "C = A x B, tiled", transpose: "transpose B = A^T (tile 0: plain)", chase: "pointer chase",
    trace: "a pasted trace",
  };
  const SHOWN_ACCESSES = 64; // the log of the first accesses
  const SHOWN_SETS = 64;
  // A trace longer than this (characters) is not kept in the address: a link would not carry it.
  const TRACE_IN_URL = 4000;
  // The largest trace the page runs (characters, about 70,000 lackey lines: under a second here);
  // cachesim takes any length.
  const TRACE_LIMIT = 1 << 20;
  // The most lines (sets x ways) the page simulates: the model's memory in a page is small.
  const LINE_LIMIT = 1 << 20;
  const NUMBER_FIELDS = { n: "n", rows: "rows", cols: "columns", lead: "elements from one row to the next", elem: "element bytes", tile: "tile", seed: "chase seed", sets: "sets",
    ways: "ways", line: "line bytes", cseed: "random seed" };

  class InputError extends Error {}

  const el = window.cachebookEl;  // dom.js

  function stateFromUrl() {
    const s = Object.assign({}, DEFAULTS);
    const params = new URLSearchParams(location.hash.slice(1));
    for (const k of Object.keys(DEFAULTS)) if (params.has(k)) s[k] = params.get(k);
    // A link from before the rows and columns: an n x n array.
    if (params.has("n") && !params.has("rows")) s.rows = s.cols = s.lead = s.n;
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
  let parsed = { text: null, triples: null };
  function parseTrace(text) {
    if (parsed.text !== text) parsed = { text, triples: parseTraceText(text) };
    return parsed.triples;
  }

  function parseTraceText(text) {
    if (text.trim() === "") throw new InputError("The trace is empty: paste lackey lines (' L 7ff0,8') or addresses, one a line.");
    if (text.length > TRACE_LIMIT) {
      throw new InputError("The trace has " + text.length + " characters; the page runs traces of up to " + TRACE_LIMIT +
        " (about 70,000 lackey lines). Run a longer one with build/bin/cachesim -t FILE (see the page on cachesim).");
    }
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
        throw new InputError("line " + (k + 1) + ": expected a lackey line (' L 7ff0,8') or an address, got '" + line + "'");
      }
      if (hex.length > 16) throw new InputError("line " + (k + 1) + ": address does not fit in 64 bits");
      const big = BigInt("0x" + hex);
      for (const w of writes) out.push(Number(big & 0xffffffffn), Number(big >> 32n), w);
    });
    if (out.length === 0) throw new InputError("The trace has no data access (only I lines or log lines): nothing to count.");
    return Uint32Array.from(out);
  }

  // The fields the walk and the cache read, as whole numbers, or an InputError that names the field.
  function checkNumbers(state, uses) {
    for (const [k, label] of Object.entries(NUMBER_FIELDS)) {
      if (uses[k] === false) continue;
      const text = String(state[k]).trim();
      if (text === "") throw new InputError(label + ": empty; type a whole number.");
      if (!/^[0-9]+$/.test(text)) throw new InputError(label + ": '" + text + "' is not a whole number.");
    }
    const lines = Number(state.sets) * Number(state.ways);
    if (lines > LINE_LIMIT) {
      throw new InputError("sets x ways = " + lines + " lines; the page simulates at most " + LINE_LIMIT +
        " lines. Run a larger cache with build/bin/cachesim (see the page on cachesim).");
    }
  }

  function isPowerOfTwo(n) {
    return n >= 1 && (n & (n - 1)) === 0;
  }

  // The cachesim command that counts the same, or the reason none does.
  function cachesimCommand(state) {
    if (state.prefetch !== "none") return { why: "cachesim has no prefetcher, so no cachesim command counts the same." };
    if (!isPowerOfTwo(Number(state.sets))) {
      return { why: "no cachesim command counts the same: cachesim takes the sets as a power of two (-s is its " +
        "base-2 logarithm), as real caches have." };
    }
    let cmd = "build/bin/cachesim -s " + Math.log2(Number(state.sets)) + " -E " + state.ways + " -b " +
      Math.log2(Number(state.line));
    if (state.policy !== "lru") cmd += " --policy " + state.policy;
    if (state.policy === "random") cmd += " --seed " + state.cseed;
    return { cmd: cmd + " -t TRACE" };
  }

  function cacheConfig(state) {
    return {
      sets: Number(state.sets), ways: Number(state.ways), lineBytes: Number(state.line),
      policy: state.policy, seed: Number(state.cseed), prefetch: state.prefetch,
    };
  }

  function accessesOf(model, state) {
    if (state.walk === "trace") return { triples: parseTrace(state.trace), streams: false };
    if (state.walk === "row" || state.walk === "column") {
      const walk = model.walk({ kind: state.walk, rows: Number(state.rows), cols: Number(state.cols),
        leading: Number(state.lead), elem: Number(state.elem) });
      return { triples: walk.triples, streams: false };
    }
    const walk = model.walk({
      kind: state.walk, n: Number(state.n), elem: Number(state.elem), tile: Number(state.tile),
      order: state.order, lineBytes: Number(state.line), seed: Number(state.seed),
    });
    return { triples: walk.triples, streams: ["matmul", "tiled", "transpose"].includes(state.walk) };
  }

  // Runs the accesses: the first SHOWN_ACCESSES one by one (for the log), the rest at once.
  function simulate(model, state) {
    const { triples, streams } = accessesOf(model, state);
    if (triples.length === 0) throw new InputError("The walk has no access: nothing to count.");
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
    const prefetching = state.prefetch !== "none";
    const result = { count, log, streams, prefetching, demand: cache.demandTotals(),
      totals: [0, 1, 2, 3, 4].map((s) => cache.totals(s)), sets: [] };
    // The kinds and OPT describe a cache that holds only what the program asked for.
    if (!prefetching) {
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
    const rows = [["all", result.prefetching ? "all (demand)" : "all", result.demand]];
    if (result.streams) for (const [s, name] of [[1, "A"], [2, "B"], [3, "C"]]) rows.push([name, name, result.totals[s]]);
    if (result.prefetching) rows.push(["prefetch", "prefetch fills", result.totals[4]]);
    for (const [key, name, t] of rows) {
      if (key !== "all" && t.accesses === 0) continue;
      const tr = el("tr", { "data-stream": key });
      tr.appendChild(el("th", {}, name));
      for (const v of [t.accesses, t.hits, t.misses, t.evictions, t.dirtyEvictions]) tr.appendChild(el("td", {}, String(v)));
      table.appendChild(tr);
    }
    const wrap = el("div", { class: "cb-pg-table-wrap" });
    wrap.appendChild(table);
    return wrap;
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

  function plural(n, word) {
    return n + " " + word + (n === 1 ? "" : /(s|ch|sh|x)$/.test(word) ? "es" : "s");
  }

  function render(live, out, result, state) {
    out.textContent = "";
    const t = result.demand;
    const counts = plural(t.hits, "hit") + ", " + plural(t.misses, "miss") + ", " + plural(t.evictions, "eviction") + ".";
    let summary = plural(t.accesses, "access") + ": " + counts;
    if (result.prefetching) {
      const p = t.prefetch;
      summary = plural(t.accesses, "demand access") + " (the program's own): " + counts +
        " The " + state.prefetch + " prefetcher issued " + plural(p.issued, "prefetch") + ", " + p.useful +
        " of them useful (a later access hit the line).";
    }
    live.textContent = summary;
    const command = cachesimCommand(state);
    if (command.cmd) {
      out.appendChild(el("p", {}, "As cachesim prints it: "));
      out.lastChild.appendChild(el("code", { class: "cb-pg-line" }, "hits:" + t.hits + " misses:" + t.misses + " evictions:" + t.evictions));
      out.lastChild.appendChild(document.createTextNode(", from "));
      out.lastChild.appendChild(el("code", { class: "cb-pg-command" }, command.cmd));
      out.lastChild.appendChild(document.createTextNode(state.walk === "trace" ? " on the trace in a file." :
        " on a trace of the walk's accesses."));
    } else {
      out.appendChild(el("p", { class: "cb-pg-nocachesim" }, "No cachesim line: " + command.why));
    }
    if (!isPowerOfTwo(Number(state.sets))) {
      out.appendChild(el("p", {}, "The model places line L in set L mod " + state.sets + "; real caches have a power-of-two " +
        "number of sets, so that the set is a few bits of the address."));
    }
    const elem = Number(state.elem), line = Number(state.line);
    if (state.walk !== "trace" && state.walk !== "chase" && line % elem !== 0) {
      out.appendChild(el("p", {}, "An element of " + elem + " bytes does not divide a line of " + line +
        " bytes, so some elements span two lines; the model counts each access once, in the line of its first byte."));
    }
    out.appendChild(totalsTable(result));
    if (result.streams) {
      out.appendChild(el("p", { class: "cb-pg-note" }, "An eviction, dirty or not, is counted on the array whose access " +
        "caused it, not on the array that owned the evicted line" + (result.prefetching ? "; a prefetch's on the prefetch fills" : "") + "."));
    }
    if (result.prefetching) {
      out.appendChild(el("p", { class: "cb-pg-kinds" }, "The misses by kind and Belady's OPT are left out with a " +
        "prefetcher: both describe a cache that holds only the lines the program asked for."));
    }
    if (result.kinds) {
      const k = result.kinds;
      out.appendChild(el("p", { class: "cb-pg-kinds" }, "The misses by kind: " + k.compulsory + " compulsory, " + k.capacity +
        " capacity, " + k.conflict + " conflict. Belady's optimal replacement (OPT) in the same sets and ways: " +
        result.optimal.misses + " misses."));
    }
    out.appendChild(contents(result));
    out.appendChild(el("p", {}, "The first accesses, one by one" + (result.prefetching ? " (a prefetch is not listed)" : "") + ":"));
    out.appendChild(accessLog(result));
  }

  function build(root, model) {
    const state = stateFromUrl();
    const form = el("form", { class: "cb-pg-form" });
    const inputs = {};
    const add = (key, label, options) => { inputs[key] = field(form, state, key, label, options); };
    add("walk", "Walk", Object.entries(WALK_NAMES));
    add("n", "n (matrix side, or nodes)");
    add("rows", "rows");
    add("cols", "columns");
    add("lead", "elements from one row to the next");
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
    const live = el("p", { class: "cb-pg-summary", "aria-live": "polite" });
    const note = el("p", { class: "cb-pg-note", hidden: "" });
    const out = el("div", { class: "cb-pg-out" });
    root.textContent = "";
    root.appendChild(form);
    root.appendChild(note);
    root.appendChild(live);
    root.appendChild(out);

    let usedFields = {};
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
      const array = state.walk === "row" || state.walk === "column";
      const uses = { n: state.walk !== "trace" && !array, rows: array, cols: array, lead: array, elem: state.walk !== "trace", order: state.walk === "matmul",
        tile: state.walk === "tiled" || state.walk === "transpose", seed: state.walk === "chase" };
      for (const [k, shown] of Object.entries(uses)) inputs[k].parentNode.hidden = !shown;
      usedFields = uses;
      inputs.cseed.parentNode.hidden = state.policy !== "random";
      // A long trace stays out of the address: a link to it would be megabytes long.
      const kept = Object.assign({}, state);
      const traceKept = state.walk !== "trace" || state.trace.length <= TRACE_IN_URL;
      if (!traceKept || state.walk !== "trace") kept.trace = "";
      history.replaceState(null, "", "#" + new URLSearchParams(kept).toString());
      note.hidden = traceKept;
      note.textContent = traceKept ? "" : "This trace (" + state.trace.length + " characters) is longer than " + TRACE_IN_URL +
        " and is not kept in the page's address: a link to this page carries the cache, not the trace.";
      try {
        const uses = Object.assign({}, usedFields, { cseed: state.policy === "random" });
        checkNumbers(state, uses);
        render(live, out, simulate(model, state), state);
      } catch (e) {
        out.textContent = "";
        live.textContent = "";
        out.appendChild(el("p", { class: "cb-pg-error", role: "alert" }, e.message));
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
