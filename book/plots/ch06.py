"""Chapter 6's plots.

model_bursts (the first page): the MESI model's transfers for two counters against the
length of the bursts in which the cores take turns, packed into one line or padded;
reads model.bursts, model.pair_writes_per_core and model.pair.{packed,padded}.burst_K.transfers.
packed_vs_padded (the second page): ns per increment against the number of threads,
counters packed into shared lines or padded to a line each, for volatile increments and
atomic adds; reads measured.sweep."""

from matplotlib.patches import Patch

from plots import figure

OVER_COLOR = "#999999"


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
    fig, axes = figure(ncols=len(ops), figsize=(6.4, 3.2), sharey=False, squeeze=False)
    shaded = False
    for ax, op in zip(axes[0], ops):
        shaded = _sweep_panel(ax, op, sorted((p for p in sweep if p["op"] == op), key=lambda p: p["threads"])) or shaded
    axes[0][0].set_ylabel("ns per increment")
    # One legend for both panels, under them: inside a panel it covered points.
    handles, labels = axes[0][0].get_legend_handles_labels()
    if shaded:
        handles.append(Patch(color=OVER_COLOR, alpha=0.3, lw=0))
        labels.append("more threads than cpus")
    fig.legend(handles, labels, frameon=False, fontsize=8, loc="lower center", ncol=len(labels))
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    out["packed_vs_padded"] = fig
    return out


def _sweep_panel(ax, op, points) -> bool:
    """One panel of packed_vs_padded; True when it shades thread counts beyond the cpus."""
    threads = [p["threads"] for p in points]
    ax.plot(threads, [p["packed_ns"] for p in points], "o-", label="packed (shared lines)")
    ax.plot(threads, [p["padded_ns"] for p in points], "s--", label="padded (a line each)")
    over = [p["threads"] for p in points if p.get("oversubscribed")]
    if over:
        ax.axvspan(min(over) - 0.5, max(threads) + 0.5, color=OVER_COLOR, alpha=0.15, lw=0)
    ax.set_xticks(threads)
    ax.set_xlabel("threads")
    ax.set_title("volatile ++" if op == "volatile" else "atomic fetch_add", fontsize=9)
    ax.set_ylim(bottom=0)
    return bool(over)
