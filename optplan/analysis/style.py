"""One paper style for every figure: serif text, thin lines, a colour-blind-safe palette."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["PALETTE", "LINE_PALETTE", "LINE_STYLES", "apply_style", "colour_for",
           "line_colour", "save_figure", "plt"]

# Okabe & Ito (2008), safe for the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
           "#000000"]


def apply_style() -> None:
    plt.rcParams.update({
        "font.family": "serif", "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8,
        "legend.fontsize": 7, "xtick.labelsize": 7, "ytick.labelsize": 7,
        "axes.spines.top": False, "axes.spines.right": False, "axes.linewidth": 0.6,
        "lines.linewidth": 1.0, "figure.dpi": 150, "savefig.bbox": "tight",
        "axes.prop_cycle": plt.cycler(color=PALETTE),
        "pdf.fonttype": 42, "ps.fonttype": 42,  # embedded outline fonts, never Type 3
        "mathtext.fontset": "dejavuserif",
    })


# For lines and small markers: the same palette without its yellow, which thin strokes on
# white paper do not show (fills, such as the layout rectangles, keep it).
LINE_PALETTE = [colour for colour in PALETTE if colour != "#F0E442"]

# Dash patterns cycled with the line colours, so that lines stay apart in grey print too.
LINE_STYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]


def colour_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def line_colour(index: int) -> str:
    """The ``index``-th colour for a line or marker series."""
    return LINE_PALETTE[index % len(LINE_PALETTE)]


def save_figure(figure, out_dir, stem: str, *, tight: bool = True) -> list[str]:
    """Write ``stem.pdf`` and ``stem.png``; return both paths. ``tight=False`` keeps the
    figure's own size (so that panels meant to sit side by side come out equally tall)."""
    from pathlib import Path

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix in ("pdf", "png"):
        path = out_dir / f"{stem}.{suffix}"
        figure.savefig(path, dpi=200 if suffix == "png" else None,
                       bbox_inches="tight" if tight else None)
        paths.append(str(path))
    plt.close(figure)
    return paths
