"""Plots of the book, drawn with matplotlib from the chapters' JSON at build time.

A chapter adds one file, book/plots/chNN.py, with one function:

    def plots(data: dict) -> dict[str, matplotlib.figure.Figure]

`data` is the chapter's `--json` results (the same dict the prose sees as `chNN`).
Each figure is saved as BUILD/book/generated/plots/chNN_NAME.svg, and the chapter
shows it with the `chart` directive:

    ```{chart} ch02 row_vs_column
    Time per element of the row walk and the column walk.
    ```

The caption gets a sentence naming the machine that produced the data
(CPU model, caches, date). A plot whose file is missing fails the build.
"""

from __future__ import annotations

import importlib.util
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
                plt.close(fig)
                made += 1
    return made
