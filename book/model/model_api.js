// The book's cache model in JavaScript: a thin layer over the WebAssembly build of
// common/src/cache.cpp (and prefetch.cpp, trace.cpp), through book/model/model.cpp.
// build_model.py wraps this text twice: as an ES module (cachebook_model.mjs, for Node
// and modern pages) and as a classic script (cachebook_model.js, which sets
// globalThis.CachebookModel and also works from file://). Both embed the wasm as
// base64 (WASM_BASE64, defined just before this text), so nothing is fetched.

const POLICIES = ["lru", "fifo", "random", "plru"];
const PREFETCHERS = ["none", "next-line", "stride"];
const WALKS = ["row", "column", "matmul", "tiled", "transpose", "chase"];
const ORDERS = ["ijk", "jik", "jki", "kji", "kij", "ikj"]; // the book's order (kAllOrders)
const TWO32 = 4294967296;

class ModelError extends Error {}

function decodeBase64(text) {
  if (typeof Buffer !== "undefined") return new Uint8Array(Buffer.from(text, "base64"));
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let k = 0; k < bin.length; k++) bytes[k] = bin.charCodeAt(k);
  return bytes;
}

// An address (a whole Number or a BigInt) as its 32-bit halves.
function halves(address) {
  if (typeof address === "bigint") {
    if (address < 0n || address >= 1n << 64n) throw new ModelError("address out of 64 bits: " + address);
    return [Number(address & 0xffffffffn), Number(address >> 32n)];
  }
  if (!Number.isSafeInteger(address) || address < 0) {
    throw new ModelError("address must be a whole number from 0 to 2^53 (or a BigInt): " + address);
  }
  return [address % TWO32, Math.floor(address / TWO32)];
}

// Two halves back as a Number when exact, else as a BigInt.
function joined(lo, hi) {
  if (hi < 0x200000) return hi * TWO32 + lo;
  return (BigInt(hi) << 32n) | BigInt(lo);
}

// Two halves of a 64-bit two's complement number, as a Number (these counts are small).
function signed(lo, hi) {
  return hi >= 0x80000000 ? -((0xffffffff - hi) * TWO32 + (0xffffffff - lo) + 1) : joined(lo, hi);
}

function wholeNumber(name, value, min, max) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ModelError(name + ": expected a whole number from " + min + " to " + max + ", got " + value);
  }
  return value;
}

// The instance and its calls; a trap (a bad configuration) becomes a ModelError.
class Runtime {
  constructor(exports) {
    this.x = exports;
    this.view = null;
  }
  u32() {
    if (!this.view || this.view.buffer !== this.x.memory.buffer) this.view = new Uint32Array(this.x.memory.buffer);
    return this.view;
  }
  call(name, ...args) {
    const sp = this.x.__stack_pointer.value;
    try {
      return this.x[name](...args);
    } catch (e) {
      if (!(e instanceof WebAssembly.RuntimeError)) throw e;
      this.x.__stack_pointer.value = sp; // the frames the trap left
      const message = this.text(this.x.cb_error());
      new Uint8Array(this.x.memory.buffer, this.x.cb_error(), 1)[0] = 0;
      // libc++ names only the container ("vector") or the allocation when memory runs out.
      if (/^(vector|std::bad_alloc|bad_alloc)$/.test(message)) {
        throw new ModelError("out of memory: the cache or the walk is too large for the model's memory");
      }
      throw new ModelError(message || "the model stopped: " + e.message);
    }
  }
  text(pointer) {
    const bytes = new Uint8Array(this.x.memory.buffer, pointer);
    let end = 0;
    while (bytes[end] !== 0) end++;
    return new TextDecoder().decode(bytes.subarray(0, end));
  }
  words(pointer, count) {
    return this.u32().slice(pointer / 4, pointer / 4 + count);
  }
}

// A configuration with every field filled in and checked for type; the model checks the rest.
function normalise(config) {
  const c = Object.assign({ sets: 1, ways: 1, lineBytes: 64, policy: "lru", seed: 1, prefetch: "none" }, config);
  const policy = POLICIES.indexOf(String(c.policy).toLowerCase());
  if (policy < 0) throw new ModelError("unknown replacement policy '" + c.policy + "' (lru, fifo, random, plru)");
  const prefetch = PREFETCHERS.indexOf(c.prefetch);
  if (prefetch < 0) throw new ModelError("unknown prefetcher '" + c.prefetch + "' (none, next-line, stride)");
  const limit = 2 ** 28;
  return {
    sets: wholeNumber("sets", c.sets, 1, limit),
    ways: wholeNumber("ways", c.ways, 1, limit),
    lineBytes: wholeNumber("lineBytes", c.lineBytes, 1, 2 ** 20),
    policy: POLICIES[policy],
    policyIndex: policy,
    seed: c.seed,
    prefetch: c.prefetch,
    prefetchIndex: prefetch,
    degree: wholeNumber("degree", c.degree === undefined ? 1 : c.degree, 0, 1 << 30),
    streams: wholeNumber("streams", c.streams === undefined ? 4 : c.streams, 0, 1 << 30),
  };
}

// One cache level of the book's model. Streams: 0 is every access; 1, 2, 3 are
// the arrays A, B, C of the walks (an access counts on 0 and on its own stream).
class Cache {
  constructor(runtime, config) {
    this.rt = runtime;
    this.config = normalise(config);
    this.handle = this.make();
  }
  make() {
    const c = this.config;
    const [seedLo, seedHi] = halves(c.seed);
    return this.rt.call("cb_new", c.sets, c.ways, c.lineBytes, c.policyIndex, seedLo, seedHi, c.prefetchIndex,
      c.degree, c.streams);
  }
  // One access: {hit, evicted, evictedLine, set, way}.
  access(address, write = false, stream = 0) {
    const [lo, hi] = halves(address);
    wholeNumber("stream", stream, 0, 3);
    const w = this.rt.words(this.rt.call("cb_access", this.handle, lo, hi, (write ? 1 : 0) | (stream << 8)), 6);
    return { hit: w[0] === 1, evicted: w[1] === 1, evictedLine: joined(w[4], w[5]), set: w[2], way: w[3] };
  }
  // Many accesses at once, as triples (address low 32 bits, high 32 bits, flags:
  // bit 0 a write, bits 8 and up the stream) in a Uint32Array; the fast path.
  runTriples(triples, count = triples.length / 3) {
    this.load(triples, count);
    this.rt.call("cb_run", this.handle, count);
  }
  // Runs a walk made by Model.walk().
  runWalk(walk) {
    this.runTriples(walk.triples);
  }
  // Counts so far: {accesses, hits, misses, evictions, dirtyEvictions}, and with a
  // prefetcher {prefetch: {demandAccesses, demandMisses, issued, useful}}. Stream 0 counts
  // every access, the prefetcher's fills included; 1 to 3 are A, B, C; 4 ("prefetch") the
  // prefetcher's fills alone.
  totals(stream = 0) {
    if (stream === "prefetch") stream = 4;
    wholeNumber("stream", stream, 0, 4);
    const w = this.rt.words(this.rt.call("cb_counts", this.handle, stream), 16);
    const v = (k) => joined(w[2 * k], w[2 * k + 1]);
    const t = { hits: v(0), misses: v(1), evictions: v(2), dirtyEvictions: v(3) };
    t.accesses = t.hits + t.misses;
    if (this.config.prefetch !== "none") {
      t.prefetch = { demandAccesses: v(4), demandMisses: v(5), issued: v(6), useful: v(7) };
    }
    return t;
  }
  // The program's own accesses (demand accesses) with a prefetcher: every count of stream 0
  // less the prefetcher's fills (an eviction is charged to the access that caused it).
  // Without a prefetcher, totals(0).
  demandTotals() {
    const all = this.totals(0);
    if (this.config.prefetch === "none") return all;
    const fills = this.totals(4);
    const t = { hits: all.hits - fills.hits, misses: all.misses - fills.misses, evictions: all.evictions - fills.evictions,
      dirtyEvictions: all.dirtyEvictions - fills.dirtyEvictions, prefetch: all.prefetch };
    t.accesses = t.hits + t.misses;
    return t;
  }
  // Misses split into compulsory, capacity and conflict misses (common/src/miss_kinds.cpp):
  // `misses` (by default this cache's so far) of `triples`, the accesses that made them.
  splitMisses(triples, misses = this.totals().misses) {
    const count = triples.length / 3;
    this.load(triples, count);
    const [lo, hi] = halves(misses);
    const w = this.rt.words(this.rt.call("cb_split", this.handle, count, lo, hi), 8);
    return { misses: joined(w[0], w[1]), compulsory: joined(w[2], w[3]), capacity: signed(w[4], w[5]),
      conflict: signed(w[6], w[7]) };
  }
  // The counts of Belady's optimal replacement (OPT) in this cache's geometry on `triples`;
  // the cache itself is left as it is.
  optimal(triples, count = triples.length / 3) {
    this.load(triples, count);
    const w = this.rt.words(this.rt.call("cb_optimal", this.handle, count), 8);
    return { hits: joined(w[0], w[1]), misses: joined(w[2], w[3]), evictions: joined(w[4], w[5]),
      dirtyEvictions: joined(w[6], w[7]) };
  }
  load(triples, count) {
    const at = this.rt.call("cb_buffer", count);
    this.rt.u32().set(triples.subarray(0, 3 * count), at / 4);
  }
  // The lines (address / lineBytes) a set holds, way by way, empty ways left out.
  resident(set) {
    wholeNumber("set", set, 0, this.config.sets - 1);
    const p = this.rt.call("cb_resident", this.handle, set);
    const n = this.rt.words(p, 1)[0];
    const w = this.rt.words(p + 4, 2 * n);
    const lines = [];
    for (let k = 0; k < n; k++) lines.push(joined(w[2 * k], w[2 * k + 1]));
    return lines;
  }
  // resident() of every set, set 0 first.
  residentLines() {
    const all = [];
    for (let s = 0; s < this.config.sets; s++) all.push(this.resident(s));
    return all;
  }
  // Empty again, every count zero (the Random policy's generator restarts from the seed).
  reset() {
    this.free();
    this.handle = this.make();
  }
  free() {
    if (this.handle) this.rt.call("cb_free", this.handle);
    this.handle = 0;
  }
}

class Model {
  constructor(runtime) {
    this.rt = runtime;
  }
  // A cache: {sets, ways, lineBytes, policy ("lru", "fifo", "random", "plru"), seed,
  // prefetch ("none", "next-line", "stride"), degree, streams}.
  cache(config) {
    return new Cache(this.rt, config);
  }
  // A walk of the book, from common/include/cachebook/trace.hpp's generators:
  // {kind: "row" | "column" | "matmul" | "tiled" | "transpose" | "chase", n, elem,
  //  tile, order ("ijk" ...), lineBytes (where C = A x B aligns B and C), seed (chase)}.
  // A row or column walk may instead name rows, cols and leading (the elements from one row
  // to the next, cols when absent): a rows x cols array, as chapter 1's a[4][8].
  // Returns {length, triples, address(k), write(k), stream(k)}.
  walk(spec) {
    const s = Object.assign({ elem: 8, tile: 0, order: "ijk", lineBytes: 64, seed: 1 }, spec);
    const kind = WALKS.indexOf(s.kind);
    if (kind < 0) throw new ModelError("unknown walk '" + s.kind + "' (" + WALKS.join(", ") + ")");
    if (kind <= 1 && (s.rows !== undefined || s.cols !== undefined)) return this.arrayWalk(kind, s);
    const order = ORDERS.indexOf(s.order);
    if (order < 0) throw new ModelError("unknown loop order '" + s.order + "' (" + ORDERS.join(", ") + ")");
    wholeNumber("n", s.n, 1, kind === 5 ? 1 << 20 : kind >= 2 && kind <= 3 ? 128 : 1024);
    wholeNumber("elem", s.elem, 1, 4096);
    wholeNumber("tile", s.tile, 0, s.n);
    const extra = kind === 5 ? wholeNumber("seed", s.seed, 0, 2 ** 31) : s.tile;
    const length = this.rt.call("cb_walk", kind, s.n, s.elem, extra, order, wholeNumber("lineBytes", s.lineBytes, 1, 2 ** 20));
    return this.walkMade(length);
  }
  arrayWalk(kind, s) {
    const rows = wholeNumber("rows", s.rows, 1, 4096);
    const cols = wholeNumber("cols", s.cols, 1, 4096);
    if (rows * cols > 1 << 22) throw new ModelError("rows x cols: at most " + (1 << 22) + " cells");
    const leading = wholeNumber("leading", s.leading === undefined ? cols : s.leading, cols, 1 << 20);
    wholeNumber("elem", s.elem, 1, 4096);
    return this.walkMade(this.rt.call("cb_array_walk", kind, rows, cols, leading, s.elem));
  }
  // The walk the last cb_walk or cb_array_walk call left in the model's buffer.
  walkMade(length) {
    const triples = this.rt.words(this.rt.call("cb_walk_data"), 3 * length);
    return {
      length,
      triples,
      address: (k) => joined(triples[3 * k], triples[3 * k + 1]),
      write: (k) => (triples[3 * k + 2] & 1) === 1,
      stream: (k) => triples[3 * k + 2] >> 8,
    };
  }
}

// What the wasm may print through WASI (libc's own messages) is kept for the error.
function wasiImports(runtime) {
  const unsupported = () => 52; // ENOSYS
  return {
    wasi_snapshot_preview1: {
      fd_write(fd, iovs, count, written) {
        const w = runtime.u32();
        let total = 0;
        for (let k = 0; k < count; k++) total += w[iovs / 4 + 2 * k + 1];
        w[written / 4] = total;
        return 0;
      },
      fd_close: unsupported,
      fd_seek: unsupported,
    },
  };
}

// Loads the model (once per page or process is enough).
async function loadModel() {
  const runtime = new Runtime(null);
  const { instance } = await WebAssembly.instantiate(decodeBase64(WASM_BASE64), wasiImports(runtime));
  runtime.x = instance.exports;
  runtime.x._initialize();
  return new Model(runtime);
}
