"""Chapter 5's plot: what each layout costs per element, three panels from the chapter's
measured tables: the update loop by layout (`layouts`), the same sum over a vector and over
linked lists (`lists`, log scale), and the gather with software prefetch (`prefetch.rows`)."""

from plots import figure


def _bars(ax, labels, values, title, ylabel=None, highlight=None):
    colors = ["#c44e52" if label == highlight else "#4c72b0" for label in labels]
    ax.bar(range(len(values)), values, color=colors)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, fontsize=8, rotation=30, ha="right")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x", visible=False)
    if ylabel:
        ax.set_ylabel(ylabel)


def plots(data):
    layouts, lists, prefetch = data["layouts"], data["lists"], data["prefetch"]
    fig, (left, middle, right) = figure(ncols=3, figsize=(8.0, 3.4))
    _bars(left, ["AoS", "SoA", "hot/cold"],
          [layouts[k]["ns_per_element"] for k in ("aos", "soa", "hot_cold")],
          "x += vx * dt", "ns per element")
    _bars(middle, ["vector", "list, in order", "list, scattered", "vector, scattered order"],
          [lists[k]["ns_per_element"] for k in ("vector", "ordered", "scattered", "gather")],
          "sum: vector or list (log)")
    middle.set_yscale("log")
    rows = prefetch["rows"]
    names = ["none" if r["distance"] == 0 else str(r["distance"]) for r in rows]
    best = str(prefetch["best_distance"])
    _bars(right, names, [r["timing"]["ns_per_element"] for r in rows], "gather, prefetch distance",
          highlight=best)
    for ax in (left, middle, right):
        ax.set_ylim(bottom=0 if ax is not middle else None)
    fig.tight_layout()
    return {"layouts": fig}
