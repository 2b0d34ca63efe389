"""Chapter 6's plot: ns per increment against the number of threads, counters packed
into shared lines or padded to a line each, for volatile increments and atomic adds."""

from plots import figure


def plots(data):
    m = data.get("measured") or {}
    sweep = m.get("sweep")
    if not sweep:
        return {}
    ops = [op for op in ("volatile", "atomic") if any(p["op"] == op for p in sweep)]
    fig, axes = figure(ncols=len(ops), figsize=(6.4, 3.2), sharey=False, squeeze=False)
    for ax, op in zip(axes[0], ops):
        points = sorted((p for p in sweep if p["op"] == op), key=lambda p: p["threads"])
        threads = [p["threads"] for p in points]
        ax.plot(threads, [p["packed_ns"] for p in points], "o-", label="packed (shared lines)")
        ax.plot(threads, [p["padded_ns"] for p in points], "s--", label="padded (a line each)")
        over = [p["threads"] for p in points if p.get("oversubscribed")]
        if over:
            ax.axvspan(min(over) - 0.5, max(threads) + 0.5, color="#999999", alpha=0.15, lw=0)
            ax.text(min(over) - 0.4, ax.get_ylim()[1], "more threads\nthan cpus", fontsize=7, va="top")
        ax.set_xticks(threads)
        ax.set_xlabel("threads")
        ax.set_title("volatile ++" if op == "volatile" else "atomic fetch_add", fontsize=9)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("ns per increment")
    axes[0][0].legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return {"packed_vs_padded": fig}
