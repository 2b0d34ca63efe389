"""Chapter 9's plots: GFLOPS of each step against the measured peak (OpenBLAS and BLIS as steps
of their own, told apart by a legend), the roofline (each step a marker of its own, named in
the legend), the tile sweep (GFLOPS against the tile, with the tile whose three tiles fill 3/4 of L1
marked), and the speed-up from one thread to two set against Amdahl's and Gustafson's laws
(Gustafson's with its own share, speedup.*_gustafson_share)."""

import math
import re

from matplotlib.patches import Patch

from plots import CARD, figure

STEP_COLOR, OPENBLAS_COLOR, BLIS_COLOR = "#4c72b0", "#dd8452", "#55a868"


def _steps(data):
    # Step labels begin with their number ("1 naive i-j-k", "7 OpenBLAS ..."); JSON objects lose order.
    def order(step):
        number, suffix = re.match(r"(\d+)(\S*)", step["label"]).groups()
        return int(number), suffix, step["label"]

    return sorted(data["steps"].values(), key=order)


def _color(label):
    return OPENBLAS_COLOR if "OpenBLAS" in label else BLIS_COLOR if "BLIS" in label else STEP_COLOR


def gflops_steps(data, steps, peak):
    fig, ax = figure(figsize=(6.4, 0.45 * len(steps) + 1.4))
    labels = [s["label"] for s in steps]
    gflops = [s["gflops"] for s in steps]
    bars = ax.barh(labels, gflops, color=[_color(label) for label in labels])
    # The values sit on a patch of the card's colour, above the peak lines.
    values = ax.bar_label(bars, [f"{g:.1f}" for g in gflops], padding=3, fontsize=8)
    for text in values:
        text.set_bbox({"facecolor": CARD, "edgecolor": "none", "pad": 1})
        text.set_zorder(5)
    ax.invert_yaxis()
    lines = []
    for key, style, text in (("measured_core", "--", "peak, 1 core"), ("measured_all", ":", "peak, all threads")):
        if peak.get(key):
            lines.append(ax.axvline(peak[key], color="#555555", linestyle=style, linewidth=1, zorder=0.5,
                                    label=f"{text} ({peak[key]:.0f})"))
    kinds = [Patch(color=STEP_COLOR, label="this chapter's steps")]
    if any("OpenBLAS" in label for label in labels):
        kinds.append(Patch(color=OPENBLAS_COLOR, label="OpenBLAS"))
    if any("BLIS" in label for label in labels):
        kinds.append(Patch(color=BLIS_COLOR, label="BLIS"))
    # Under the axis label: a fixed distance in inches, whatever the number of steps.
    ax.legend(handles=kinds + lines, frameon=False, fontsize=8, loc="upper center", ncol=3,
              bbox_to_anchor=(0.5, -0.6 / (fig.get_figheight() - 1.4)))
    ax.set_xlabel(f"GFLOPS (N = {data.get('n')}, float)")
    # Both peak lines in view: under load the all-threads peak can come out below the one-core one.
    ax.set_xlim(0, max(gflops + [peak.get("measured_all") or 0, peak.get("measured_core") or 0]) * 1.15)
    _values_clear_of(ax, values, [line.get_xdata()[0] for line in lines])
    return fig


def _values_clear_of(ax, values, xs):
    """A value label that a peak line would run through moves to just right of that line (a
    line through a label reads as striking it out)."""
    renderer = ax.figure.canvas.get_renderer()
    for text in values:
        for x in sorted(xs):
            box = text.get_window_extent(renderer)
            at = ax.transData.transform((x, 0))[0]
            if box.x0 - 3 <= at <= box.x1 + 3:
                text.xy = (x, text.xy[1])


def roofline(steps, peak, roofs=None):
    points = [s for s in steps if s.get("intensity", 0) > 0]
    bandwidth = peak.get("bandwidth_gbs")
    if not points or not bandwidth:
        return None
    fig, ax = figure(figsize=(6.4, 4.0))
    xs = [s["intensity"] for s in points]
    lo, hi = min(xs + [0.05]) / 2, max(xs + [peak.get("ridge") or 1]) * 4
    grid = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    for key, style, text in (("measured_core", "-", "roof, 1 core"), ("measured_all", "--", "roof, all threads")):
        if peak.get(key):
            ax.plot(grid, [min(peak[key], x * bandwidth) for x in grid], style, color="#555555", linewidth=1, label=text)
    # The roofs below the peak: one core's read bandwidth of L2, L3 and memory (roofs.*_gbs).
    for name, color in (("L2", "#4c72b0"), ("L3", "#55a868"), ("memory", "#c44e52")):
        gbs = (roofs or {}).get(f"{name}_gbs")
        if gbs and peak.get("measured_core"):
            ax.plot(grid, [min(peak["measured_core"], x * gbs) for x in grid], "-.", color=color, linewidth=1,
                    label=f"{name} roof, 1 core ({gbs:.0f} GB/s)")
    markers = "osD^v<>ph*"
    # Each step its own marker, named in the legend: labels beside the points overlapped. The
    # markers are open, so two steps at the same point (1t and 2 often are) both show.
    for i, s in enumerate(points):
        ax.plot(s["intensity"], s["gflops"], markers[i % len(markers)], markersize=8 + 3 * (i % 2),
                markerfacecolor="none", markeredgewidth=1.6, label=s["label"])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOPs per byte of memory traffic")
    ax.set_ylabel("GFLOPS")
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, markerscale=0.7)
    return fig


def tile_sweep(data):
    """GFLOPS of steps 3 and 4 against the tile; untiled (T = N) as a level; L1 marked."""
    n = data.get("n")
    sweep = data.get("tile_sweep")  # --sweep-tiles, when the run had it
    rows = sweep if sweep else (data.get("tiling") or {}).get("rows")
    if not rows:
        return None
    key_scalar, key_vector = ("tiled", "simd") if sweep else ("scalar", "simd")
    tiled = [r for r in rows if r["tile"] != n]
    untiled = [r for r in rows if r["tile"] == n]
    fig, ax = figure()
    tiles = [r["tile"] for r in tiled]
    ax.plot(tiles, [r[key_scalar] for r in tiled], "o-", color=STEP_COLOR, label="step 3: one float per instruction")
    ax.plot(tiles, [r[key_vector] for r in tiled], "s-", color=OPENBLAS_COLOR, label="step 4: eight per instruction")
    for r in untiled:
        ax.axhline(r[key_scalar], color=STEP_COLOR, linestyle=":", linewidth=1, label="step 2, untiled")
        ax.axhline(r[key_vector], color=OPENBLAS_COLOR, linestyle=":", linewidth=1, label="step 4's code, untiled")
    l1_kib = (data.get("machine") or {}).get("l1_kib")
    if l1_kib:
        # The tile rule's bound: three T x T tiles of floats in 3/4 of L1, 3 T^2 x 4 = 3/4 L1.
        t_l1 = math.sqrt(l1_kib * 1024 / 16)
        ax.axvline(t_l1, color="#555555", linestyle="--", linewidth=1,
                   label=f"3 tiles in 3/4 of L1 ({l1_kib} KiB): T = {t_l1:.0f}")
    l1_found = ((data.get("caches_measured") or {}).get("l1_bytes"))
    if l1_found:
        t_found = math.sqrt(l1_found / 16)
        ax.axvline(t_found, color="#999999", linestyle="-.", linewidth=1,
                   label=f"the same, chapter 8's L1 ({l1_found / 1024:.1f} KiB): T = {t_found:.0f}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(tiles, [str(t) for t in tiles])
    ax.set_xlabel(f"tile T (N = {n})")
    ax.set_ylabel("GFLOPS")
    ax.set_ylim(bottom=0)
    # Under the plot, not beside it: beside it the figure grew wide and its text shrank on the page.
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    return fig


def speedup(data):
    """Measured speed-up on 1 and all threads, against Amdahl's and Gustafson's laws."""
    sp = data.get("speedup") or {}
    threads = sp.get("threads") or 1
    fig, ax = figure()
    workers = list(range(1, 17))
    ax.plot(workers, workers, color="#999999", linewidth=1, label="ideal: speed-up = workers")
    if threads < 2 or not sp.get("step6"):  # the chart stays, so the page builds on one CPU too
        ax.text(8, 4, "not measured: this run had one thread", ha="center", fontsize=9, color="#555555")
    measured = [(name, key, color) for name, key, color in (("step 6", "step6", STEP_COLOR),
                ("OpenBLAS", "openblas", OPENBLAS_COLOR)) if sp.get(key) and sp.get(f"{key}_parallel_share") is not None]
    if measured and all(_clamped(sp, key) for _, key, _ in measured):
        return _speedup_clamped(fig, ax, sp, threads, measured)
    for name, key, color in measured:
        p = sp.get(f"{key}_parallel_share")
        # Gustafson's share is of the parallel run's time, Amdahl's of one worker's: converted,
        # p' = (p / w) / ((1 - p) + p / w), both curves pass through the measured point.
        g = sp.get(f"{key}_gustafson_share")
        if g is None:
            g = (p / threads) / ((1 - p) + p / threads)
        ax.plot(workers, [1 / ((1 - p) + p / w) for w in workers], "-", color=color,
                label=f"Amdahl, {name} (p = {p:.2f})")
        ax.plot(workers, [(1 - g) + g * w for w in workers], "--", color=color,
                label=f"Gustafson, {name} (p' = {g:.2f})")
        ax.plot([1, threads], [1, sp[key]], "o", color=color, markersize=7, label=f"{name}, measured")
    return _speedup_axes(fig, ax)


def _speedup_axes(fig, ax):
    ax.set_xlabel("workers (cores)")
    ax.set_ylabel("speed-up over one")
    ax.set_xlim(0.5, 16.5)
    ax.set_ylim(0, 16.5)
    ax.legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def _clamped(sp, key):
    # A share that prints as 1.00 (a speed-up above the thread count is clamped to it): both laws
    # then reduce to speed-up = workers, the ideal line, and six curves would draw one line.
    return sp.get(f"{key}_parallel_share") >= 0.995


def _speedup_clamped(fig, ax, sp, threads, measured):
    """One line for all the laws when every share is 1.00, and the reason written on the chart."""
    for name, key, color in measured:
        ax.plot([1, threads], [1, sp[key]], "o", color=color, markersize=7, label=f"{name}, measured ({sp[key]:.2f}x)")
    ax.lines[0].set_label("ideal = Amdahl = Gustafson at p = p' = 1.00")
    above = any(sp[key] > threads for _, key, _ in measured)
    why = f"a speed-up above {threads} on {threads} threads:\nthe parallel share is clamped to 1.00" if above else \
        "the parallel shares are 1.00"
    ax.text(8.5, 3.0, why + ",\nso both laws give the ideal line", ha="center", fontsize=8, color="#555555")
    return _speedup_axes(fig, ax)


def plots(data):
    out = {}
    if not data.get("steps") or not data.get("peak"):
        return out
    steps, peak = _steps(data), data["peak"]
    out["gflops_steps"] = gflops_steps(data, steps, peak)
    for name, fig in (("roofline", roofline(steps, peak, data.get("roofs"))), ("tile_sweep", tile_sweep(data)), ("speedup", speedup(data))):
        if fig is not None:
            out[name] = fig
    return out
