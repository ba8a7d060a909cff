"""A fingerprint run's matrix as a heatmap (the ``heatmap`` module's style): Ashlock's payoff per round over the
(x, y) square, origin at the lower left as Axelrod draws it; transitive cooperation, one row per RAND(p) opponent
(p up the axis) and a column per round."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from harness.analysis.fingerprint import Fingerprint, ProbeKind
from harness.figures.heatmap import LIGHT_TEXT_BELOW
from harness.figures.style import SEQUENTIAL, WIDTH_IN

MAX_LABELLED = 11
"""Cells are written into the map only while the grid has at most this many columns (Ashlock's step 0.1)."""


def draw(fp: Fingerprint) -> Figure:
    """Rows from the second key (Ashlock: y; transitive: p) and columns from the other (x; the round); a point
    with no complete game is left blank."""
    first, second = fp.axes
    if fp.kind is ProbeKind.ASHLOCK:
        rows, columns = second, first
        grid = np.array([[_value(fp.value(x, y)) for x in columns] for y in rows])
        xlabel, ylabel, bar = "x (probe's P(C) outright)", "y (probe's P(D) outright)", "payoff / round"
        clim = None
    else:
        rows, columns = first, second
        grid = np.array([[_value(fp.value(p, t)) for t in columns] for p in rows])
        xlabel, ylabel, bar = "round", "opponent's P(C) (RAND p)", "P(C)"
        clim = (0.0, 1.0)
    side = min(WIDTH_IN, 1.2 + 0.3 * len(rows))
    fig = Figure(figsize=(WIDTH_IN, side), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=SEQUENTIAL, origin="lower", aspect="auto")
    if clim is not None:
        image.set_clim(*clim)
    image.set_gid("cells")
    low, high = image.get_clim()
    if len(columns) <= MAX_LABELLED:
        for (i, j), value in np.ndenumerate(grid):
            if math.isnan(value):
                continue
            shade = (value - low) / (high - low) if high > low else 1.0
            text = ax.text(
                j, i, f"{value:.2f}", ha="center", va="center", fontsize=6,
                color="white" if shade < LIGHT_TEXT_BELOW else "black",
            )  # fmt: skip
            text.set_gid(f"cell-{i}-{j}")
    ax.set_xticks(*_ticks(columns))
    ax.set_yticks(*_ticks(rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{fp.kind.value} fingerprint: {fp.player}")
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    fig.colorbar(image, ax=ax, label=bar, shrink=0.8)
    return fig


def _value(value: float | None) -> float:
    return math.nan if value is None else value


def _ticks(values: tuple[float, ...]) -> tuple[list[int], list[str]]:
    """At most about six labelled ticks, the first and last always among them."""
    every = max(1, math.ceil(len(values) / 6))
    shown = sorted({*range(0, len(values), every), len(values) - 1})
    return shown, [f"{values[i]:g}" for i in shown]
