// The JavaScript API's side of book/model/model_test.py:
//   node model_check.mjs MODEL_DIR trace WALK_JSON   prints the walk as a lackey trace
//   node model_check.mjs MODEL_DIR counts JOB_JSON   prints JSON counts of walks in caches
//   node model_check.mjs MODEL_DIR batch             reads one request a line on stdin and answers
//                                                    each with one line, in order
// WALK_JSON is a Model.walk() spec; JOB_JSON is {cache: {...}, walks: [spec, ...]}, and the
// answer gives, per walk, the counts of streams 0 to 3 and the lines resident at the end.
// A batch request is ["cachesim", ARGS], ["trace", WALK] or ["counts", JOB]; its answer is
// {status, stdout, stderr}, what `node cachesim.mjs ARGS` or the two commands above would give,
// so that one Node process (and one load of the model) serves many comparisons. A batch's runs
// read no standard input (it carries the requests): each names its trace with -t.
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { createInterface } from "node:readline";

const [dir, what, json] = process.argv.slice(2);
const { loadModel } = await import(pathToFileURL(join(dir, "cachebook_model.mjs")).href);
const { cachesim } = await import(pathToFileURL(join(dir, "cachesim.mjs")).href);

function trace(model, spec) {
  const walk = model.walk(spec);
  const lines = [];
  for (let k = 0; k < walk.length; k++) {
    lines.push(` ${walk.write(k) ? "S" : "L"} ${walk.address(k).toString(16)},${spec.elem || 8}\n`);
  }
  return lines.join("");
}

function counts(model, spec) {
  const answers = spec.walks.map((w) => {
    const cache = model.cache(spec.cache);
    cache.runWalk(model.walk(w));
    const streams = [0, 1, 2, 3].map((s) => cache.totals(s));
    const resident = cache.residentLines();
    cache.free();
    return { streams, resident };
  });
  return JSON.stringify(answers) + "\n";
}

// A run that failed may have stopped the model midway: the next request gets a fresh one.
async function batch() {
  let model = null;
  const getModel = async () => (model ??= await loadModel());
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    const [kind, arg] = JSON.parse(line);
    let answer;
    try {
      if (kind === "cachesim") answer = await cachesim(arg, getModel);
      else if (kind === "trace") answer = { status: 0, stdout: trace(await getModel(), arg), stderr: "" };
      else if (kind === "counts") answer = { status: 0, stdout: counts(await getModel(), arg), stderr: "" };
      else answer = { status: 2, stdout: "", stderr: `model_check: unknown request '${kind}'\n` };
    } catch (e) {
      answer = { status: 1, stdout: "", stderr: String(e && e.stack ? e.stack : e) + "\n" };
    }
    if (answer.status !== 0) model = null;
    process.stdout.write(JSON.stringify(answer) + "\n");
  }
}

if (what === "trace") {
  process.stdout.write(trace(await loadModel(), JSON.parse(json)));
} else if (what === "counts") {
  process.stdout.write(counts(await loadModel(), JSON.parse(json)));
} else if (what === "batch") {
  await batch();
} else {
  process.stderr.write("model_check: expected 'trace', 'counts' or 'batch'\n");
  process.exitCode = 2;
}
