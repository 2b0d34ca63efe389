"""Chapter 4's plots: simulated transpose misses against the tile (the 73 x 73 transpose), and the
measured blocked product's time against the tile, with the formula's pick marked."""

from plots import figure


def plots(data):
    out = {}
    by_tile = data.get("misses_by_tile")
    if by_tile:
        labels = ["none", "4", "8", "16", "32"]
        misses = [by_tile["none"], by_tile["t4"], by_tile["t8"], by_tile["t16"], by_tile["t32"]]
        fig, ax = figure()
        bars = ax.bar(labels, misses, color=["#dd8452"] + ["#4c72b0"] * 4)
        ax.bar_label(bars, [str(m) for m in misses], padding=3)
        ax.set_xlabel("tile")
        ax.set_ylabel("simulated misses")
        ax.set_ylim(0, max(misses) * 1.15)
        out["transpose_misses"] = fig
    sweep = data.get("sweep")
    if sweep and sweep.get("points"):
        pts = sweep["points"]
        tiles = [p["tile"] for p in pts]
        ms = [p["ms"] for p in pts]
        fig, ax = figure()
        ax.plot(tiles, ms, marker="o", label="blocked product")
        ax.axvline(sweep["pick"], color="#55a868", linestyle="--", label=f"formula's pick (T = {sweep['pick']})")
        ax.axvline(sweep["best"], color="#c44e52", linestyle=":", label=f"fastest here (T = {sweep['best']})")
        ax.set_xlabel("tile T")
        ax.set_ylabel("time, ms (best of runs)")
        ax.set_ylim(0, max(ms) * 1.1)
        ax.legend(frameon=False)
        out["tile_sweep"] = fig
    return out
