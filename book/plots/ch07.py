"""Chapter 7's plots, from its measured results:
- `runs`: every run of the two batches of the row sum (`runs.a`, `runs.b`), in order, with
  each batch's minimum: one run can land anywhere above the minimum;
- `latency`: ns per access of the strided sum, the independent random walk and the pointer
  chase, in L1 and in the large working set (`latency`, log scale);
- `orders`: misses per inner iteration of chapter 3's six loop orders, the model's and
  cachegrind's side by side (`orders.rows`; cachegrind's bars only where it ran)."""

from matplotlib.ticker import MaxNLocator

from plots import figure


def runs(data):
    fig, ax = figure(figsize=(6.4, 3.2))
    for key, label, marker in (("a", "batch A", "o"), ("b", "batch B", "s")):
        ms = [s * 1e3 for s in data["runs"][key]]
        ax.plot(range(1, len(ms) + 1), ms, marker, label=label, markersize=4)
        ax.axhline(min(ms), linewidth=1, linestyle="--", color=ax.lines[-1].get_color())
    ax.set_xlabel("run")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("ms (dashed: the batch's minimum)")
    ax.set_ylim(bottom=0)
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def latency(data):
    fig, ax = figure(figsize=(6.4, 3.2))
    walks = (("strided_ns", "strided sum"), ("gather_ns", "random, independent"), ("chase_ns", "pointer chase"))
    width = 0.8 / len(walks)
    for k, (key, label) in enumerate(walks):
        xs = [i + (k - 1) * width for i in range(len(data["latency"]))]
        ax.bar(xs, [row[key] for row in data["latency"]], width, label=label)
    sizes = [row["bytes"] / 1024 for row in data["latency"]]
    ax.set_xticks(range(len(sizes)), [f"{s:.0f} KiB" if s < 1024 else f"{s / 1024:.0f} MiB" for s in sizes])
    ax.set_yscale("log")
    ax.set_ylabel("ns per access")
    ax.grid(axis="x", visible=False)
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return fig


def orders(data):
    fig, ax = figure(figsize=(6.4, 3.2))
    rows = data["orders"]["rows"]
    names = [row["order"] for row in rows]
    counted = all(row["cachegrind"] is not None for row in rows)
    width = 0.4 if counted else 0.6
    offset = width / 2 if counted else 0
    ax.bar([i - offset for i in range(len(rows))], [row["model_total"] for row in rows], width, label="model")
    if counted:
        ax.bar([i + offset for i in range(len(rows))], [row["cachegrind"] for row in rows], width,
               label="cachegrind (the compiled code)")
    ax.set_xticks(range(len(rows)), names)
    ax.set_ylabel("misses per inner iteration")
    ax.grid(axis="x", visible=False)
    # Below the axes: inside them the legend covers the tallest bars.
    fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=2, frameon=False, fontsize=8)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def plots(data):
    return {"runs": runs(data), "latency": latency(data), "orders": orders(data)}
