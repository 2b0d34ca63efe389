"""Chapter 8's plot: ns per access against working-set size (log x), for the pointer chase
with 4 KiB and with huge pages and for the strided sum; the detected levels (solid) and the
sizes the machine reports (dotted) marked, each level named above the plot.

The second page's plots: `chases` (mlp.L2, mlp.L3, mlp.memory: ns per access against the
number of chases at once, each with latency / k and its knee) and `mountain`
(bandwidth.mountain: sizes and stride_bytes, and the GB/s read at each, as a heat map)."""

from plots import figure


def plots(data):
    out = {}
    curve = data.get("curve")
    if not curve:
        return out
    kib = [p["bytes"] / 1024 for p in curve]
    fig, ax = figure(figsize=(7.2, 4.6))
    ax.plot(kib, [p["chase_ns"] for p in curve], label="pointer chase, 4 KiB pages", color="#4c72b0")
    if all("chase_huge_ns" in p for p in curve):
        ax.plot(kib, [p["chase_huge_ns"] for p in curve], label="pointer chase, huge pages", color="#55a868")
    if all("strided_ns" in p for p in curve):
        ax.plot(kib, [p["strided_ns"] for p in curve], label="strided sum (the wrong method)", color="#dd8452")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("working set")
    ax.set_ylabel("ns per access (best of runs)")
    # The level names sit above the plot, outside the curves: one name per level, between
    # the line where it was found (solid) and the size the machine reports (dotted).
    top = ax.get_xaxis_transform()  # x in data, y in axes fractions
    for name, level in (data.get("levels") or {}).items():
        marks = []
        if level.get("detected_bytes"):
            marks.append(level["detected_bytes"] / 1024)
            ax.axvline(marks[-1], color="#333333", linewidth=1)
        if level.get("reported_bytes") and level["reported_bytes"] / 1024 <= kib[-1]:
            marks.append(level["reported_bytes"] / 1024)
            ax.axvline(marks[-1], color="#999999", linestyle=":", linewidth=1)
        if marks:
            middle = (min(marks) * max(marks)) ** 0.5
            ax.text(middle, 1.01, name, transform=top, ha="center", va="bottom", fontsize=8)
    ax.plot([], [], color="#333333", linewidth=1, label="a level found here")
    ax.plot([], [], color="#999999", linestyle=":", linewidth=1, label="its size as the machine reports it")
    ticks = [4 ** k for k in range(1, 12) if kib[0] <= 4 ** k <= kib[-1]]
    ax.set_xticks(ticks, [f"{t} KiB" if t < 1024 else f"{t // 1024} MiB" for t in ticks])
    # Under the plot: inside it the level lines ran through the legend's text.
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=8)
    out["curve"] = fig
    out.update(bandwidth_plots(data))
    return out


def bandwidth_plots(data):
    out = {}
    mlp = data.get("mlp") or {}
    curves = [(name, mlp[name]) for name in ("L2", "L3", "memory") if (mlp.get(name) or {}).get("ns")]
    if curves:
        fig, ax = figure(figsize=(6.4, 4.0))
        colors = {"L2": "#4c72b0", "L3": "#55a868", "memory": "#c44e52"}
        for name, c in curves:
            ks = c.get("counts") or list(range(1, len(c["ns"]) + 1))
            knee = int(c["knee"])
            ax.plot(ks, c["ns"], "o-", markersize=4, color=colors[name], label=f"{name} (knee at k = {knee})")
            ax.plot(ks, [c["ns"][0] / k for k in ks], ":", color=colors[name], linewidth=1)
            ax.plot(knee, c["ns"][ks.index(knee)], "s", markersize=9, fillstyle="none", color=colors[name])
        ax.plot([], [], ":", color="#555555", linewidth=1, label="one chase's time / k")
        ax.set_yscale("log")
        ax.set_xlabel("chases at once (k)")
        ax.set_ylabel("ns per access (best of runs)")
        counts = max((c.get("counts") or list(range(1, len(c["ns"]) + 1)) for _, c in curves), key=len)
        ax.set_xticks([k for k in counts if k in (1, 2, 4, 8) or k % 8 == 0])
        ax.legend(frameon=False, fontsize=8)
        out["chases"] = fig
    mountain = (data.get("bandwidth") or {}).get("mountain")
    if mountain and mountain.get("gbs"):
        fig, ax = figure(figsize=(6.4, 4.4))
        image = ax.imshow(mountain["gbs"], origin="lower", aspect="auto", cmap="viridis")
        ax.grid(False)
        ax.set_xticks(range(len(mountain["stride_bytes"])), [f"{s} B" for s in mountain["stride_bytes"]])
        names = [f"{b // 1024} KiB" if b < 1 << 20 else f"{b >> 20} MiB" for b in mountain["sizes"]]
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("stride")
        ax.set_ylabel("working set")
        for i, row in enumerate(mountain["gbs"]):
            for j, g in enumerate(row):
                ax.text(j, i, f"{g:.0f}" if g >= 10 else f"{g:.1f}", ha="center", va="center", fontsize=7,
                        color="white" if g < 0.6 * max(max(r) for r in mountain["gbs"]) else "black")
        fig.colorbar(image, ax=ax, label="GB/s read")
        fig.subplots_adjust(left=0.17)
        out["mountain"] = fig
    return out
