"""Chapter 3's plots: misses per inner iteration of the six loop orders, predicted and
simulated in the course notes' two small caches, and the measured time of each order."""

from plots import figure

ORDERS = ["ijk", "jik", "jki", "kji", "kij", "ikj"]


def plots(data):
    out = {}
    simulated, analytic = data.get("simulated"), data.get("analytic")
    if simulated and analytic:
        series = [("analytic (large N)", [float(analytic[o]["total"]) for o in ORDERS])]
        for key in sorted((k for k in simulated if k.startswith("lines")), key=lambda k: int(k[5:])):
            series.append((f"simulated, {key[5:]}-line cache", [float(simulated[key][o]["total"]) for o in ORDERS]))
        fig, ax = figure()
        width = 0.8 / len(series)
        for s, (label, values) in enumerate(series):
            offset = (s - (len(series) - 1) / 2) * width
            ax.bar([k + offset for k in range(len(ORDERS))], values, width, label=label)
        ax.set_xticks(range(len(ORDERS)), ORDERS)
        ax.set_xlabel("loop order (outer to inner)")
        ax.set_ylabel("misses per inner iteration")
        ax.legend(frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(series), fontsize=8)
        out["misses_per_order"] = fig
    m = data.get("measured")
    if m and all(f"{o}_ms" in m for o in ORDERS):
        fig, ax = figure(figsize=(6.4, 3.0))
        times = [m[f"{o}_ms"] for o in ORDERS]
        bars = ax.bar(ORDERS, times, color="#4c72b0")
        ax.bar_label(bars, [f"{t:.0f}" for t in times], padding=2)
        ax.set_xlabel("loop order (outer to inner)")
        ax.set_ylabel(f"ms, best of {m.get('runs', '?')} runs (N = {m.get('n', '?')})")
        out["time_per_order"] = fig
    return out
