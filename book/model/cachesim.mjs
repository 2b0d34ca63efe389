// cachesim for Node: the book's model (WebAssembly) on a valgrind lackey trace.
//   node cachesim.mjs -s S -E E -b B [--policy lru|fifo|random|plru] [--seed N] [-v] -t TRACE
// prints the line native cachesim prints for the same arguments ("hits:H misses:M
// evictions:V"); with -v, first each data access as native cachesim -v shows it; with
// --classify, then the misses by kind; with --policy opt, Belady's optimal replacement.
// An M line is a load then a store, as in the cachelab reference. The trace is read
// by the rules of tools/cachesim/lackey.cpp; a malformed line stops the run with
// its line number. Bad arguments: one line on stderr, exit status 2.
// As a module, cachesim(argv, getModel) makes the same run in the calling process and returns
// what the command would print and its exit status (book/model/model_check.mjs runs many so).
import { openSync, readSync, closeSync, realpathSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { loadModel, ModelError } from "./cachebook_model.mjs";

const PROGRAM = "cachesim";
const MAX_LINE = 256; // kLackeyMaxLine
const MAX_SIZE = 8192; // kLackeyMaxSize
const BATCH = 1 << 16; // accesses handed to the model at once

class UsageError extends Error {}

const USAGE =
  "usage: node cachesim.mjs -s S -E E -b B [--policy lru|fifo|random|plru|opt] [--seed N] [--classify] [-v] [-t TRACE]";

function wholeNumber(flag, text, min, max) {
  if (text === undefined) throw new UsageError(flag + " needs a value");
  const ok = /^[0-9]+$/.test(text) && Number(text) >= min && Number(text) <= max;
  if (!ok) throw new UsageError(`${flag}: expected a whole number from ${min} to ${max}, got '${text}'`);
  return Number(text);
}

// The seed of the random policy, 0 to 2^62, exact (a BigInt).
function seedOf(text) {
  if (!/^[0-9]+$/.test(text) || BigInt(text) > 1n << 62n) {
    throw new UsageError(`--seed: expected a whole number from 0 to ${1n << 62n}, got '${text}'`);
  }
  return BigInt(text);
}

// -s 4, -s4, --policy lru, --policy=lru: the forms native cachesim (CLI11) takes.
function parseArguments(argv) {
  const o = { s: undefined, E: undefined, b: undefined, policy: "lru", seed: "1", trace: "-", verbose: false,
    classify: false };
  const valued = { "-s": "s", "-E": "E", "-b": "b", "-t": "trace", "--policy": "policy", "--seed": "seed" };
  for (let k = 0; k < argv.length; k++) {
    let arg = argv[k];
    if (arg === "-h" || arg === "--help") return null;
    if (arg === "-v") { o.verbose = true; continue; }
    if (arg === "--classify") { o.classify = true; continue; }
    let value;
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    if (eq > 0) { value = arg.slice(eq + 1); arg = arg.slice(0, eq); }
    else if (/^-[sEbt]./.test(arg)) { value = arg.slice(2); arg = arg.slice(0, 2); }
    if (!(arg in valued)) throw new UsageError(`unknown option '${argv[k]}' (${USAGE.slice(7)})`);
    if (value === undefined) {
      if (k + 1 >= argv.length) throw new UsageError(arg + " needs a value");
      value = argv[++k];
    }
    o[valued[arg]] = value;
  }
  for (const flag of ["s", "E", "b"]) {
    if (o[flag] === undefined) throw new UsageError(`-${flag} is required (see --help)`);
  }
  const policies = ["lru", "fifo", "random", "plru", "opt"];
  if (!policies.includes(o.policy)) {
    throw new UsageError(`--policy: unknown replacement policy '${o.policy}' (lru, fifo, random, plru, opt)`);
  }
  if (o.policy === "opt" && o.verbose) throw new UsageError("--policy opt simulates one level without -v");
  return {
    sets: 2 ** wholeNumber("-s", o.s, 0, 28),
    ways: wholeNumber("-E", o.E, 1, 2 ** 28),
    lineBytes: 2 ** wholeNumber("-b", o.b, 0, 20),
    // OPT is simulated offline (Cache.optimal()); the cache made for it only gives the geometry.
    policy: o.policy === "opt" ? "lru" : o.policy,
    optimal: o.policy === "opt",
    classify: o.classify,
    seed: seedOf(o.seed),
    trace: o.trace,
    verbose: o.verbose,
  };
}

// --- One line of a lackey trace, by the rules of tools/cachesim/lackey.cpp ---

const isBlank = (c) => c === " " || c === "\t";
const isHex = (c) => /^[0-9a-fA-F]$/.test(c);

function shown(c) {
  if (c === undefined) return "the end of the line";
  const code = c.charCodeAt(0);
  if (code >= 0x20 && code < 0x7f) return `'${c}'`;
  return `byte 0x${code.toString(16).padStart(2, "0")} (binary data?)`;
}

function isLogLine(line) {
  let p = 0;
  const end = Math.min(line.length, MAX_LINE + 1);
  while (p < end && isBlank(line[p])) p++;
  return end - p >= 2 && (line.startsWith("==", p) || line.startsWith("--", p));
}

// A record {op, address (hex text), size}, null for a skipped line, or a thrown problem.
function parseLine(line) {
  if (line.length > MAX_LINE) {
    if (isLogLine(line)) return null;
    throw new Error(`line longer than ${MAX_LINE} bytes`);
  }
  let p = 0;
  while (isBlank(line[p])) p++;
  const op = line[p];
  if (op === "L" || op === "S" || op === "M" || op === "I") return parseRecord(line, p + 1, op);
  if (line.startsWith("==", p) || line.startsWith("--", p)) return null;
  while (isBlank(line[p]) || line[p] === "\r") p++;
  if (p === line.length) return null;
  throw new Error(`unknown operation ${shown(line[p])} (expected I, L, S or M)`);
}

function parseRecord(line, p, op) {
  if (!isBlank(line[p])) throw new Error(`expected a space after '${op}', found ${shown(line[p])}`);
  while (isBlank(line[p])) p++;
  const digits = p;
  while (p < line.length && isHex(line[p])) p++;
  let hex = line.slice(digits, p);
  if (hex.length > 16) {
    if (/[^0]/.test(hex.slice(0, hex.length - 16))) throw new Error("address does not fit in 64 bits");
    hex = hex.slice(hex.length - 16);
  }
  if (line[p] !== ",") {
    if (p === digits) throw new Error(`expected a hex address, found ${shown(line[p])}`);
    if (p === line.length || isBlank(line[p]) || line[p] === "\r") throw new Error("missing ',' between address and size");
    throw new Error(`bad hex digit ${shown(line[p])} in the address`);
  }
  p++;
  const sizeAt = p;
  while (p < line.length && line[p] >= "0" && line[p] <= "9") p++;
  const sizeText = line.slice(sizeAt, p);
  if (sizeText.replace(/^0+(?=.)/, "").length > 4 || Number(sizeText) > MAX_SIZE) {
    throw new Error(`size exceeds ${MAX_SIZE} bytes`);
  }
  if (sizeText.length === 0) throw new Error(`expected a decimal size after ',', found ${shown(line[p])}`);
  if (Number(sizeText) === 0) throw new Error("size 0");
  for (; p < line.length; p++) {
    if (!isBlank(line[p]) && line[p] !== "\r") throw new Error(`unexpected ${shown(line[p])} after the size`);
  }
  return { op, hex, size: Number(sizeText) };
}

// --- Reading the trace in chunks, so a long one runs in bounded memory ---

function* lines(path) {
  const fd = path === "-" ? 0 : openTrace(path);
  const chunk = Buffer.alloc(1 << 16);
  let tail = "";
  try {
    for (;;) {
      let got;
      try {
        got = readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        if (e.code === "EAGAIN") continue;
        throw new UsageError(`cannot read ${path === "-" ? "<stdin>" : path}: ${e.message}`);
      }
      if (got === 0) break;
      const text = tail + chunk.toString("latin1", 0, got);
      const parts = text.split("\n");
      tail = parts.pop();
      yield* parts;
    }
    if (tail.length > 0) yield tail;
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

function openTrace(path) {
  try {
    return openSync(path, "r");
  } catch (e) {
    const reasons = { ENOENT: "No such file or directory", EACCES: "Permission denied" };
    throw new UsageError(`cannot open trace ${path}: ${reasons[e.code] || e.message}`);
  }
}

// --- The run ---

function addressHalves(hex) {
  const lo = hex.length > 8 ? hex.slice(-8) : hex;
  const hi = hex.length > 8 ? hex.slice(0, -8) : "0";
  return [parseInt(lo, 16) >>> 0, parseInt(hi, 16) >>> 0];
}

function simulate(model, options) {
  const cache = model.cache(options);
  try {
    return simulateIn(cache, options);
  } finally {
    cache.free(); // a process that makes many runs must not keep every cache
  }
}

// The verbose lines, if any, then the counts' line (and the kinds' line), each ending in a newline.
function simulateIn(cache, options) {
  const source = options.trace === "-" ? "<stdin>" : options.trace;
  const triples = new Uint32Array(3 * BATCH);
  const whole = options.optimal || options.classify ? [] : null; // every access, for OPT and the kinds
  let queued = 0, number = 0, records = 0;
  const out = [];
  for (const line of lines(options.trace)) {
    number++;
    let r;
    try {
      r = parseLine(line);
    } catch (e) {
      throw new UsageError(`${source}:${number}: ${e.message}`);
    }
    if (r === null) continue;
    records++;
    if (r.op === "I") continue;
    const [lo, hi] = addressHalves(r.hex);
    const writes = r.op === "M" ? [0, 1] : [r.op === "S" ? 1 : 0];
    if (whole) for (const w of writes) whole.push(lo, hi, w);
    if (options.optimal) continue;
    if (options.verbose) {
      out.push(verboseLine(cache, r, lo, hi));
      continue;
    }
    for (const w of writes) {
      triples[3 * queued] = lo;
      triples[3 * queued + 1] = hi;
      triples[3 * queued + 2] = w;
      if (++queued === BATCH) { cache.runTriples(triples, queued); queued = 0; }
    }
  }
  cache.runTriples(triples, queued);
  if (records === 0) throw new UsageError(`${source}: empty trace: no I, L, S or M line`);
  const all = whole ? Uint32Array.from(whole) : null;
  const t = options.optimal ? cache.optimal(all) : cache.totals();
  const printed = [`hits:${t.hits} misses:${t.misses} evictions:${t.evictions}`];
  if (options.classify) {
    const k = cache.splitMisses(all, t.misses);
    printed.push(`compulsory:${k.compulsory} capacity:${k.capacity} conflict:${k.conflict}`);
  }
  return out.join("") + printed.join("\n") + "\n";
}

// As native cachesim -v prints an access: "L 7ff000384,4 miss eviction" (an M: two outcomes).
function verboseLine(cache, r, lo, hi) {
  const address = (BigInt(hi) << 32n) | BigInt(lo);
  let text = `${r.op} ${address.toString(16)},${r.size}`;
  const writes = r.op === "M" ? [false, true] : [r.op === "S"];
  for (const w of writes) {
    const a = cache.access(address, w);
    text += a.hit ? " hit" : " miss";
    if (a.evicted) text += " eviction";
  }
  return text + "\n";
}

// One run: {status, stdout, stderr}. getModel loads the model, called only once the arguments
// parse, so that bad arguments need no model.
export async function cachesim(argv, getModel) {
  try {
    const options = parseArguments(argv);
    if (options === null) return { status: 0, stdout: USAGE + "\n", stderr: "" };
    return { status: 0, stdout: simulate(await getModel(), options), stderr: "" };
  } catch (e) {
    if (e instanceof UsageError || e instanceof ModelError) {
      return { status: 2, stdout: "", stderr: `${PROGRAM}: error: ${e.message.split("\n")[0]}\n` };
    }
    throw e;
  }
}

// Run as a program (not imported): the arguments of the command line.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const r = await cachesim(process.argv.slice(2), loadModel);
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  process.exitCode = r.status;
}
