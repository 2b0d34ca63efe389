"""Chapter 8's plot: ns per access against working-set size (log x), for the pointer chase
with 4 KiB and with huge pages and for the strided sum; the detected levels (solid) and the
sizes the machine reports (dotted) marked."""

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
    # Level labels sit low on the plot, clear of the legend in the upper left.
    low = min(min(p["chase_ns"] for p in curve), min(p.get("strided_ns", 1e9) for p in curve))
    for name, level in (data.get("levels") or {}).items():
        if level.get("detected_bytes"):
            x = level["detected_bytes"] / 1024
            ax.axvline(x, color="#333333", linewidth=1)
            ax.text(x, low * 4, f" {name} found", rotation=90, va="bottom", fontsize=8)
        if level.get("reported_bytes") and level["reported_bytes"] / 1024 <= kib[-1]:
            x = level["reported_bytes"] / 1024
            ax.axvline(x, color="#999999", linestyle=":", linewidth=1)
            ax.text(x, low, f" {name} reported", rotation=90, va="bottom", fontsize=8, color="#777777")
    ticks = [4 ** k for k in range(1, 12) if kib[0] <= 4 ** k <= kib[-1]]
    ax.set_xticks(ticks, [f"{t} KiB" if t < 1024 else f"{t // 1024} MiB" for t in ticks])
    ax.legend(frameon=False, loc="upper left", fontsize=8)
    out["curve"] = fig
    return out
