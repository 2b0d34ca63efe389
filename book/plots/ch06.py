"""Chapter 6's plots.

model_bursts (the first page): the MESI model's transfers for two counters against the
length of the bursts in which the cores take turns, packed into one line or padded;
reads model.bursts, model.pair_writes_per_core and model.pair.{packed,padded}.burst_K.transfers.
packed_vs_padded (the second page): ns per increment against the number of threads,
counters packed into shared lines or padded to a line each, for volatile increments and
atomic adds; reads measured.sweep."""

from plots import figure


def model_bursts(model):
    bursts = model["bursts"]
    fig, ax = figure(figsize=(6.4, 3.0))
    for layout, style in (("packed", "o-"), ("padded", "s--")):
        counts = [model["pair"][layout][f"burst_{k}"]["transfers"] for k in bursts]
        ax.plot(bursts, counts, style, label=f"{layout} ({'one line' if layout == 'packed' else 'a line each'})")
    ax.set_xscale("log", base=2)
    ax.set_xticks(bursts)
    ax.set_xticklabels([str(k) for k in bursts])
    ax.set_xlabel("burst: writes by one core before the other's turn")
    ax.set_ylabel(f"transfers ({2 * model['pair_writes_per_core']} writes)")
    ax.set_ylim(bottom=0)
    ax.legend(frameon=False, fontsize=7)
    fig.tight_layout()
    return fig


def plots(data):
    out = {}
    if (data.get("model") or {}).get("bursts"):
        out["model_bursts"] = model_bursts(data["model"])
    m = data.get("measured") or {}
    sweep = m.get("sweep")
    if not sweep:
        return out
    ops = [op for op in ("volatile", "atomic") if any(p["op"] == op for p in sweep)]
    fig, axes = figure(ncols=len(ops), figsize=(6.4, 3.5), sharey=False, squeeze=False)
    shaded = False
    for ax, op in zip(axes[0], ops):
        points = sorted((p for p in sweep if p["op"] == op), key=lambda p: p["threads"])
        threads = [p["threads"] for p in points]
        ax.plot(threads, [p["packed_ns"] for p in points], "o-", label="packed (shared lines)")
        ax.plot(threads, [p["padded_ns"] for p in points], "s--", label="padded (a line each)")
        over = [p["threads"] for p in points if p.get("oversubscribed")]
        if over:
            # Named in the legend, not written on the plot, where it would cover a line or a marker.
            ax.axvspan(min(over) - 0.5, max(threads) + 0.5, color="#999999", alpha=0.15, lw=0,
                       label=None if shaded else "more threads than cpus")
            shaded = True
        ax.set_xticks(threads)
        ax.set_xlabel("threads")
        ax.set_title("volatile ++" if op == "volatile" else "atomic fetch_add", fontsize=9)
        ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("ns per increment")
    # One legend for both panels, below them: inside a panel it covers the points.
    handles, labels = [], []
    for ax in axes[0]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False, fontsize=7)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    out["packed_vs_padded"] = fig
    return out
