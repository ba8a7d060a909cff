"""Population shares over generations of an evolution run, stacked to 100% (as the dashboard draws them)."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from harness.analysis.evolution import Shares
from harness.figures.style import WIDTH_IN, colour


def draw(shares: Shares) -> Figure:
    """One band per player, the largest final share at the bottom; the legend lists them as they are stacked."""
    fig = Figure(figsize=(WIDTH_IN, 2.4), layout="constrained")
    ax = fig.add_subplot()
    columns = [[row[i] for row in shares.shares] for i in range(len(shares.players))]
    bands = ax.stackplot(
        shares.generations,
        columns,
        labels=shares.players,
        colors=[colour(i) for i in range(len(shares.players))],
        linewidth=0,
    )
    for i, band in enumerate(bands):
        band.set_gid(f"series-{i}")
    ax.set_xlim(shares.generations[0], max(shares.generations[-1], shares.generations[0] + 1))
    ax.set_ylim(0, 1)
    ax.set_xlabel("generation")
    ax.set_ylabel("share of the population")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    handles, labels = ax.get_legend_handles_labels()  # top to bottom, as the bands are stacked
    ax.legend(handles[::-1], labels[::-1], loc="upper left", bbox_to_anchor=(1.0, 1.0), borderaxespad=0.2)
    return fig
