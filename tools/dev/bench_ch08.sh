#!/usr/bin/env bash
# bench_ch08.sh BIN_DIR [RUNS] [OUT_DIR]: runs ch08_cliff RUNS times (default 10) with --json and
# reports, per run and in total, whether the detected L1d and L2 were within 15 % of sysfs and
# whether the flush probe found the line size sysfs reports (the chapter's goals).
set -euo pipefail
bin=$1 runs=${2:-10} out=${3:-$(mktemp -d)}
mkdir -p "$out"
for i in $(seq "$runs"); do
  start=$(date +%s)
  "$bin/ch08_cliff" --json "$out/run$i.json" >"$out/run$i.txt" </dev/null
  echo "run $i: $(( $(date +%s) - start )) s" >&2
done
/usr/bin/python3 - "$out" "$runs" <<'PY'
import json, sys
out, runs = sys.argv[1], int(sys.argv[2])
hits = {"L1d": 0, "L2": 0, "line": 0}
for i in range(1, runs + 1):
    d = json.load(open(f"{out}/run{i}.json"))
    cells = []
    for name in ("L1d", "L2"):
        lv = d["levels"][name]
        ok = bool(lv.get("within_15pct"))
        hits[name] += ok
        det = lv.get("detected_bytes")
        cells.append(f"{name} {det / 1024:.1f} KiB" if det else f"{name} not found")
        cells[-1] += f" ({lv['difference_pct']:+.1f} %)" if lv.get("difference_pct") is not None else ""
    line = d.get("line") or {}
    hits["line"] += bool(line.get("exact"))
    print(f"run {i}: " + ", ".join(cells) + f", line {line.get('detected_bytes')} B, {d.get('seconds', 0):.0f} s")
print(f"within 15 % of sysfs: L1d {hits['L1d']}/{runs}, L2 {hits['L2']}/{runs}; line size exact {hits['line']}/{runs}")
PY
