// The JavaScript API's side of book/model/model_test.py:
//   node model_check.mjs MODEL_DIR trace WALK_JSON   prints the walk as a lackey trace
//   node model_check.mjs MODEL_DIR counts JOB_JSON   prints JSON counts of walks in caches
// WALK_JSON is a Model.walk() spec; JOB_JSON is {cache: {...}, walks: [spec, ...]}, and the
// answer gives, per walk, the counts of streams 0 to 3 and the lines resident at the end.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [dir, what, json] = process.argv.slice(2);
const { loadModel } = await import(pathToFileURL(join(dir, "cachebook_model.mjs")).href);
const model = await loadModel();
const spec = JSON.parse(json);

if (what === "trace") {
  const walk = model.walk(spec);
  const lines = [];
  for (let k = 0; k < walk.length; k++) {
    lines.push(` ${walk.write(k) ? "S" : "L"} ${walk.address(k).toString(16)},${spec.elem || 8}\n`);
  }
  process.stdout.write(lines.join(""));
} else if (what === "counts") {
  const answers = spec.walks.map((w) => {
    const cache = model.cache(spec.cache);
    cache.runWalk(model.walk(w));
    const streams = [0, 1, 2, 3].map((s) => cache.totals(s));
    const resident = cache.residentLines();
    cache.free();
    return { streams, resident };
  });
  process.stdout.write(JSON.stringify(answers) + "\n");
} else {
  process.stderr.write("model_check: expected 'trace' or 'counts'\n");
  process.exitCode = 2;
}
