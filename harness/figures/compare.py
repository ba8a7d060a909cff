"""Players side by side: one panel per metric, a group of bars per opponent, one bar per player, each with its
95% interval over games (none where the report gives none); a missing bar is a measure that had nothing to
measure (no defection to retaliate against or forgive). Drawn from :class:`~harness.analysis.figures.PlayerValue`
rows, whichever function made them (today the report's metrics, :func:`harness.analysis.figures.metrics_by_player`;
later ``pdbench compare``'s)."""

from __future__ import annotations

import math

from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from harness.analysis.figures import PlayerValue, opponents_in_order
from harness.figures.style import WIDTH_IN, colour

GROUP = 0.8  # of each opponent's slot, shared by its bars
RATE_METRICS = {"cooperation", "retaliation", "forgiveness"}  # drawn on a 0-100% axis
CROWDED = 4  # opponents: more, and each metric's panel takes the figure's whole width


def draw(values: list[PlayerValue]) -> Figure:
    players = list(dict.fromkeys(v.player for v in values))
    opponents = opponents_in_order(values)
    metrics = list(dict.fromkeys(v.metric for v in values))
    crowded = len(opponents) > CROWDED
    cols = 1 if crowded else 2  # many opponents: a panel the full width, so their names do not overlap
    rows = math.ceil(len(metrics) / cols)
    fig = Figure(figsize=(WIDTH_IN, 0.6 + 1.5 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    at = {(v.player, v.opponent, v.metric): v.estimate for v in values}
    width = GROUP / max(len(players), 1)
    for ax, metric in zip(axes, metrics, strict=False):
        for i, player in enumerate(players):
            xs, heights, err_x, lows, highs = [], [], [], [], []
            for j, opponent in enumerate(opponents):
                e = at.get((player, opponent, metric))
                if e is None or e.mean is None:
                    continue
                x = j + (i - (len(players) - 1) / 2) * width
                xs.append(x)
                heights.append(e.mean)
                if e.low is not None and e.high is not None:  # none where the report gives none (no whisker)
                    err_x.append(x)
                    lows.append(e.mean - e.low)
                    highs.append(e.high - e.mean)
            # Outlined, so that a value of 0 still shows (a line on the axis); no bar at all is a measure with
            # nothing to measure (retaliation against a player that never defected).
            bars = ax.bar(
                xs,
                heights,
                width * 0.9,
                color=colour(i),
                edgecolor=colour(i),
                linewidth=0.8,
                label=player if ax is axes[0] else None,
            )
            if err_x:
                ax.errorbar(
                    err_x,
                    [heights[xs.index(x)] for x in err_x],
                    yerr=[lows, highs],
                    fmt="none",
                    ecolor="black",
                    elinewidth=0.7,
                    capsize=1.5,
                    capthick=0.7,
                )
            for bar, x in zip(bars.patches, xs, strict=True):  # one id a bar: series-<player>-<metric>-<x>
                bar.set_gid(f"series-{i}-{metric}-{x:g}")
        ax.set_title(metric, loc="left")
        ax.set_xticks(
            range(len(opponents)),
            opponents,
            rotation=30 if len(opponents) > 2 and not crowded else 45 if crowded else 0,
            ha="right" if len(opponents) > 2 else "center",
            rotation_mode="anchor",
        )
        ax.set_xlim(-0.5, len(opponents) - 0.5)
        if metric in RATE_METRICS:
            ax.set_ylim(0, 1.05)
            ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    for ax in axes[len(metrics) :]:
        ax.set_visible(False)
    fig.legend(loc="outside upper center", ncols=min(len(players), 2), title="95% CI over games")
    return fig
