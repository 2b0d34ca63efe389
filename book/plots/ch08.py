"""Chapter 8's plot: ns per access against working-set size (log x), for the pointer chase
with 4 KiB and with huge pages and for the strided sum; the detected levels (solid) and the
sizes the machine reports (dotted) marked, each level named above the plot."""

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
    return out
