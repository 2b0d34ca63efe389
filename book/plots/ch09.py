"""Chapter 9's plots: GFLOPS of each step against the measured peak (with OpenBLAS and BLIS
as steps of their own), the roofline: each step at its FLOPs per byte under min(peak,
intensity x bandwidth), and the tiling table: steps 2 to 4 by tile, scalar and vector."""

from plots import figure


def _steps(data):
    # Step labels begin with their number ("1 naive ijk", "7 OpenBLAS ..."); JSON objects lose order.
    return sorted(data["steps"].values(), key=lambda s: (s["label"].split(" ", 1)[0].zfill(3), s["label"]))


def plots(data):
    out = {}
    if not data.get("steps") or not data.get("peak"):
        return out
    steps, peak = _steps(data), data["peak"]

    fig, ax = figure(figsize=(6.4, 0.45 * len(steps) + 1.2))
    labels = [s["label"] for s in steps]
    gflops = [s["gflops"] for s in steps]
    colors = ["#dd8452" if "OpenBLAS" in s["label"] else "#55a868" if "BLIS" in s["label"] else "#4c72b0"
              for s in steps]
    bars = ax.barh(labels, gflops, color=colors)
    ax.bar_label(bars, [f"{g:.1f}" for g in gflops], padding=3, fontsize=8)
    ax.invert_yaxis()
    for key, style, text in (("measured_core", "--", "peak, 1 core"), ("measured_all", ":", "peak, all threads")):
        if peak.get(key):
            ax.axvline(peak[key], color="#555555", linestyle=style, linewidth=1)
            ax.text(peak[key], -0.7, f" {text} ({peak[key]:.0f})", fontsize=8, va="bottom", color="#555555")
    ax.set_xlabel(f"GFLOPS (N = {data.get('n', '?')}, float)")
    ax.set_xlim(0, max(gflops + [peak.get("measured_all") or 0]) * 1.15)
    out["gflops_steps"] = fig

    points = [s for s in steps if s.get("intensity", 0) > 0]
    bandwidth = peak.get("bandwidth_gbs")
    if points and bandwidth:
        fig, ax = figure()
        xs = [s["intensity"] for s in points]
        lo, hi = min(xs + [0.05]) / 2, max(xs + [peak.get("ridge") or 1]) * 4
        grid = [lo * (hi / lo) ** (k / 200) for k in range(201)]
        for key, style, text in (("measured_core", "-", "roof, 1 core"), ("measured_all", "--", "roof, all threads")):
            if peak.get(key):
                ax.plot(grid, [min(peak[key], x * bandwidth) for x in grid], style, color="#555555", linewidth=1,
                        label=text)
        for s in points:
            ax.plot(s["intensity"], s["gflops"], "o", markersize=6)
            ax.annotate(s["label"].split(",")[0], (s["intensity"], s["gflops"]), textcoords="offset points",
                        xytext=(5, -10), fontsize=7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("FLOPs per byte of memory traffic")
        ax.set_ylabel("GFLOPS")
        ax.legend(frameon=False, fontsize=8, loc="lower right")
        out["roofline"] = fig

    tiling = (data.get("tiling") or {}).get("rows")
    if tiling:
        fig, ax = figure()
        n = data.get("n")
        names = ["untiled" if r["tile"] == n else str(r["tile"]) for r in tiling]
        xs = range(len(tiling))
        ax.bar([x - 0.2 for x in xs], [r["scalar"] for r in tiling], 0.4, label="one float per instruction (steps 2, 3)")
        ax.bar([x + 0.2 for x in xs], [r["simd"] for r in tiling], 0.4, label="eight per instruction (step 4)")
        ax.set_xticks(list(xs), names)
        ax.set_xlabel(f"tile T (N = {n})")
        ax.set_ylabel("GFLOPS")
        ax.legend(frameon=False, fontsize=8)
        out["tiling"] = fig
    return out
