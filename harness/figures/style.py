"""One style for every figure: sizes for a one-column figure of a two-column paper, fonts, a colour-blind-safe
palette, and how a figure is saved so that the same data give the same file (no dates, a fixed SVG hash salt).

The font is DejaVu Sans, which matplotlib bundles, so a figure looks the same on every machine (and a golden
image compares within a small tolerance on CI)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

WIDTH_IN = 3.4
"""One column of a two-column paper (ACL, NeurIPS, IEEE: 3.25-3.5 in)."""
DPI = 200
"""Raster resolution (PNG); vector formats (SVG, PDF) are resolution-free."""

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
"""Okabe & Ito's colour-blind-safe palette, blue and vermilion first, yellow (faint on white) last."""
SEQUENTIAL = "viridis"
"""The heatmap's colour map: perceptually uniform, readable in grey and by colour-blind readers."""
BAND_ALPHA = 0.2

RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "lines.linewidth": 1.2,
    "lines.markersize": 3,
    "svg.hashsalt": "pdbench",  # the SVG's clip-path ids, the same in every run
    "pdf.fonttype": 42,  # TrueType in the PDF, as publishers ask (not Type 3)
    "ps.fonttype": 42,
}
# The save options that keep a file the same for the same data (matplotlib writes the date otherwise).
METADATA = {".png": {"Software": None}, ".svg": {"Date": None}, ".pdf": {"CreationDate": None}}


LINE_STYLES = ("-", "--", ":", "-.")


def colour(i: int) -> str:
    """The ``i``-th series' colour (the palette repeats beyond eight series; see :func:`line_style`)."""
    return PALETTE[i % len(PALETTE)]


def line_style(i: int) -> str:
    """The ``i``-th series' line: solid for the first eight, then dashed, dotted, ..., so that two series that
    share a colour never share a line as well."""
    return LINE_STYLES[i // len(PALETTE) % len(LINE_STYLES)]


@contextmanager
def applied() -> Iterator[None]:
    """Matplotlib's settings for the figures, for as long as a figure is built and saved."""
    import matplotlib as mpl
    from cycler import cycler

    settings: Any = {**RC, "axes.prop_cycle": cycler(color=list(PALETTE))}  # typed by key in matplotlib's stubs
    with mpl.rc_context(settings):
        yield


def save(fig: Any, out: Path) -> None:
    """Write ``fig`` to ``out`` in the format its suffix names, with the Agg canvas for rasters."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.savefig(out, dpi=DPI, metadata=METADATA[out.suffix.lower()])
