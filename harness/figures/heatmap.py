"""A tournament's mean payoff per round of each row player against each column opponent (the ``matchups`` view)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from harness.figures.style import SEQUENTIAL, WIDTH_IN

LIGHT_TEXT_BELOW = 0.5  # a cell's colour value (0 to 1 of the map): below it, white text reads better than black


def draw(matchups: Sequence[dict[str, Any]]) -> Figure:
    """Rows and columns in the same (alphabetical) order, as the dashboard shows them; a pair that never played
    is left blank."""
    players = sorted({r["player"] for r in matchups} | {r["opponent"] for r in matchups})
    index = {p: i for i, p in enumerate(players)}
    grid = np.full((len(players), len(players)), np.nan)
    for r in matchups:
        value = r["mean_payoff_per_round"]
        grid[index[r["player"]], index[r["opponent"]]] = np.nan if value is None else float(value)
    side = min(WIDTH_IN, 1.2 + 0.42 * len(players))
    fig = Figure(figsize=(WIDTH_IN, side), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=SEQUENTIAL, aspect="equal")
    image.set_gid("cells")
    low, high = image.get_clim()
    for (i, j), value in np.ndenumerate(grid):
        if math.isnan(value):
            continue
        shade = (value - low) / (high - low) if high > low else 1.0
        text = ax.text(
            j,
            i,
            f"{value:.2f}",
            ha="center",
            va="center",
            fontsize=6,
            color="white" if shade < LIGHT_TEXT_BELOW else "black",
        )
        text.set_gid(f"cell-{i}-{j}")
    ax.set_xticks(range(len(players)), players, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(len(players)), players)
    ax.set_xlabel("against")
    ax.set_ylabel("player")
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    fig.colorbar(image, ax=ax, label="payoff / round", shrink=0.8)
    return fig
