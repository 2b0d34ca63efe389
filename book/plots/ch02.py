"""Chapter 2's plots: misses of the two walks (the 4 KiB 8-way matrix-read table), and the measured time per element."""

from plots import figure


def plots(data):
    out = {}
    if data.get("matrix_reads"):
        rows = data["matrix_reads"]
        fig, ax = figure()
        x = range(len(rows))
        width = 0.38
        row = ax.bar([k - width / 2 for k in x], [r["row"] for r in rows], width, label="row walk (j inside)")
        column = ax.bar([k + width / 2 for k in x], [r["column"] for r in rows], width,
                        label="column walk (i inside)")
        # The counts span two orders of magnitude: a log axis keeps the smallest bars visible,
        # and each bar prints its count.
        ax.set_yscale("log")
        ax.bar_label(row, [str(r["row"]) for r in rows], padding=2, fontsize=8)
        ax.bar_label(column, [str(r["column"]) for r in rows], padding=2, fontsize=8)
        ax.set_ylim(bottom=10, top=max(r["column"] for r in rows) * 4)
        ax.set_xticks(list(x), [f"{r['n']} × {r['n']}" for r in rows])
        ax.set_xlabel("n × n matrix of double")
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
