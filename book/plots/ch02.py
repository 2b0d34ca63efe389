"""Chapter 2's plots: misses of the two walks (the 4 KiB 8-way matrix-read table), and the measured time per element."""

import math

from plots import figure


def plots(data):
    out = {}
    if data.get("matrix_reads"):
        rows = data["matrix_reads"]
        fig, ax = figure()
        x = range(len(rows))
        width = 0.38
        row = ax.bar([k - width / 2 for k in x], [r["row"] for r in rows], width, label="row walk (j inside)")
        column = ax.bar([k + width / 2 for k in x], [r["column"] for r in rows], width, label="column walk (i inside)")
        # A log scale keeps the small matrices' bars visible; the counts are printed on them.
        ax.set_yscale("log")
        for bars in (row, column):
            ax.bar_label(bars, [f"{b.get_height():.0f}" for b in bars], padding=2, fontsize=8)
        smallest = min(min(r["row"], r["column"]) for r in rows)
        ax.set_ylim(10 ** math.floor(math.log10(max(smallest, 1))), max(r["column"] for r in rows) * 3)
        ax.set_xticks(list(x), [f"{r['n']} × {r['n']}" for r in rows])
        ax.grid(axis="x", visible=False)
        ax.set_xlabel("matrix of double")
        ax.set_ylabel("simulated misses (log scale)")
        ax.legend(frameon=False, loc="upper left")
        out["matrix_read_misses"] = fig
    s = data.get("sum")
    if s and s.get("row_ms") and s.get("column_ms"):
        per = 1e6 / (s["n"] * s["n"])  # ms per sum -> ns per element
        fig, ax = figure(figsize=(6.4, 2.4))
        walks = ["row walk", "column walk"]
        times = [s["row_ms"] * per, s["column_ms"] * per]
        bars = ax.barh(walks, times, color=["#4c72b0", "#dd8452"])
        ax.bar_label(bars, [f"{t:.2f} ns" for t in times], padding=4)
        ax.set_xlabel(f"time per element, ns (fastest run of each, {s['n']} × {s['n']} int)")
        ax.invert_yaxis()
        ax.set_xlim(0, max(times) * 1.25)
        out["time_per_element"] = fig
    return out
