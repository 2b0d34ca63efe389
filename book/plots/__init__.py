"""Plots of the book, drawn with matplotlib from the chapters' JSON at build time.

A chapter adds one file, book/plots/chNN.py, with one function:

    def plots(data: dict) -> dict[str, matplotlib.figure.Figure]

`data` is the chapter's `--json` results (the same dict the prose sees as `chNN`).
Each figure is saved as BUILD/book/generated/plots/chNN_NAME.svg, with its alt text
(`describe`: what it plots and its extreme values) beside it as chNN_NAME.alt.txt, and the
chapter shows it with the `chart` directive:

    ```{chart} ch02 row_vs_column
    Time per element of the row walk and the column walk.
    ```

The caption gets a sentence naming the machine that produced the data
(CPU model, caches, date). A plot whose file is missing fails the build.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent

# Every plot is a light card with a thin border, so it reads as a figure on the light theme
# and, inverted by the page's style, on the dark one; the SVG opened on its own looks the same.
CARD, CARD_BORDER = "#fbfbfa", "#c8c8c8"

# One look for every plot of the book.
STYLE = {
    "figure.facecolor": CARD,
    "axes.facecolor": CARD,
    "savefig.facecolor": CARD,
    "legend.facecolor": CARD,
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "font.size": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "cachebook",
}


def figure(**kwargs):
    """A new figure and axes in the book's style: `fig, ax = plots.figure()`."""
    with plt.rc_context(STYLE):
        return plt.subplots(**kwargs)


def save_card(fig, path: Path, pad: float = 0.12) -> None:
    """Saves `fig` cropped to what it draws plus `pad` inches, framed by the card's border.
    The crop moves the figure's own rectangle to the saved area, so its edge is the border;
    half of the line falls outside the saved area, hence twice the width."""
    fig.patch.set_facecolor(CARD)
    fig.patch.set_edgecolor(CARD_BORDER)
    fig.patch.set_linewidth(2)
    fig.savefig(path, format=path.suffix[1:], bbox_inches="tight", pad_inches=pad,
                edgecolor=CARD_BORDER, metadata={"Date": None} if path.suffix == ".svg" else None)


def _number(v: float) -> str:
    return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"


def _shared_label(ax, axis: str) -> str:
    """The label another axes of the figure gives the same axis (panels side by side label it once)."""
    labels = [a.get_xlabel() if axis == "x" else a.get_ylabel() for a in ax.figure.get_axes()]
    return next((label for label in labels if label), "")


def _bars(ax, bars) -> str:
    """'GFLOPS for 9 bars: from 0.52 (1 naive) to 226.2 (7 OpenBLAS)'."""
    horizontal = bars.orientation == "horizontal"
    values = [float(v) for v in bars.datavalues]
    ticks = ax.get_yticklabels() if horizontal else ax.get_xticklabels()
    ticks = [(t.get_position()[1 if horizontal else 0], t.get_text()) for t in ticks if t.get_text()]
    spacing = min((abs(a[0] - b[0]) for a, b in zip(ticks, ticks[1:])), default=1.0)

    def name(p):  # the category tick nearest the bar (bars in groups sit beside their tick)
        at = p.get_y() + p.get_height() / 2 if horizontal else p.get_x() + p.get_width() / 2
        near = min(ticks, key=lambda t: abs(t[0] - at), default=None)
        return near[1] if near and abs(near[0] - at) < spacing / 2 else ""

    named = [(v, name(p)) for v, p in zip(values, bars.patches) if v == v]
    if not named:
        return ""
    axis = (ax.get_xlabel() if horizontal else ax.get_ylabel()) or _shared_label(ax, "y") or "value"
    label = bars.get_label()
    lo, hi = min(named), max(named)
    what = f"{axis}" + (f" of {label}" if label and not label.startswith("_") else "")
    if len(named) == 1:
        return f"{what}: {_number(hi[0])}" + (f" ({hi[1]})" if hi[1] else "")
    return (f"{what}, {len(named)} bars: from {_number(lo[0])}" + (f" ({lo[1]})" if lo[1] else "")
            + f" to {_number(hi[0])}" + (f" ({hi[1]})" if hi[1] else ""))


def _mark(line) -> str:
    """A reference line across the axes (two points, one coordinate fixed): 'peak, 1 core (221)'."""
    label, xs, ys = line.get_label(), list(line.get_xdata()), list(line.get_ydata())
    if not label or label.startswith("_") or len(xs) != 2:
        return ""
    fixed = xs[0] if xs[0] == xs[1] else ys[0] if ys[0] == ys[1] else None
    if fixed is None:
        return ""
    return label if re.search(r"[=(]\s*[\d.]", label) else f"{label} at {_number(float(fixed))}"


def _drawn(value) -> bool:
    """A coordinate matplotlib draws: a number, not None (a gap in the line) and not NaN."""
    return value is not None and value == value


def _line(line) -> str:
    """'row walk from 0.4 (at 1) to 6.2 (at 64)', or a single marker's 'step 3 6.46 at 16'."""
    points = [(float(x), float(y)) for x, y in zip(line.get_xdata(), line.get_ydata()) if _drawn(x) and _drawn(y)]
    label = line.get_label()
    if not points or not label or label.startswith("_") or _mark(line):
        return ""
    if len(points) == 1:
        return f"{label} {_number(points[0][1])} at {_number(points[0][0])}"
    (x0, y0), (x1, y1) = points[0], points[-1]
    top = max(points, key=lambda p: p[1])
    text = f"{label} from {_number(y0)} (at {_number(x0)}) to {_number(y1)} (at {_number(x1)})"
    if top[1] > max(y0, y1):
        text += f", highest {_number(top[1])} (at {_number(top[0])})"
    return text


# An alt text longer than this lists its first series and says how many more there are.
ALT_CHARS = 500


def describe(fig) -> str:
    """A figure in words for its alt text: per axes what it plots and its extreme values,
    read from the drawn artists (bars, labelled lines and markers, reference lines)."""
    parts = []
    for ax in fig.get_axes():
        if not ax.get_visible():
            continue
        said = [t for t in (_bars(ax, b) for b in ax.containers if hasattr(b, "datavalues")) if t]
        # Single markers (a step of chapter 9's roofline) first: a long list keeps them.
        drawn = sorted(ax.get_lines(), key=lambda line: len(line.get_xdata()) > 1)
        lines = [t for t in (_line(line) for line in drawn) if t]
        if lines:
            xs = ax.get_xlabel() or _shared_label(ax, "x") or "x"
            ys = ax.get_ylabel() or _shared_label(ax, "y") or "y"
            said.append(f"{ys} against {xs}: " + "; ".join(lines))
        marks = [t for t in (_mark(line) for line in ax.get_lines()) if t]
        if marks:
            said.append("marked: " + ", ".join(marks))
        if ax.get_title() and said:
            said.insert(0, ax.get_title())
        if said:
            parts.append("; ".join(said))
    text = ". ".join(parts) + "." if parts else ""
    if len(text) > ALT_CHARS:
        cut = text.rfind("; ", 0, ALT_CHARS)
        text = text[:cut] + f"; and {text[cut:].count('; ')} more." if cut > 0 else text[:ALT_CHARS] + "…"
    return text


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"cachebook_plots_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render_all(generated: Path, out: Path, machine: dict, say) -> int:
    """Runs every book/plots/chNN*.py whose chapter has JSON; returns the number of SVGs."""
    import json

    out.mkdir(parents=True, exist_ok=True)
    made = 0
    for script in sorted(HERE.glob("ch[0-9][0-9]*.py")):
        key = script.stem[:4]  # "ch02"
        results = sorted(generated.glob(f"{key}_*.json"))
        if not results:
            say(f"plots: {script.name}: no results for {key} yet, skipped")
            continue
        data = json.loads(results[0].read_text())
        with plt.rc_context(STYLE):
            try:
                figures = _load(script).plots(data)
            except Exception as e:  # a broken plot script names itself
                print(f"book: error: {script}: {type(e).__name__}: {e}", file=sys.stderr)
                sys.exit(1)
            for name, fig in figures.items():
                path = out / f"{key}_{name}.svg"
                save_card(fig, path)
                path.with_suffix(".alt.txt").write_text(describe(fig))
                plt.close(fig)
                made += 1
    return made
