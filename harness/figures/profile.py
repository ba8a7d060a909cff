"""The behaviour profile per focal player: one panel per opponent, one row per measure on a 0-1 scale, a marker per
player with its 95% interval where the analysis gives one (the report's rates; the five profile dimensions of
Fontana et al. are means with none)."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from harness.analysis.figures import PROFILE_RATES, PlayerValue, opponents_in_order
from harness.figures.style import WIDTH_IN, colour

ROW_IN = 0.15  # height of one measure's row
SPREAD = 0.6  # of a row's height, shared by the players' markers


def draw(values: list[PlayerValue]) -> Figure:
    players = list(dict.fromkeys(v.player for v in values))
    opponents = opponents_in_order(values)
    measures = list(dict.fromkeys(v.metric for v in values))
    panel_in = 0.35 + ROW_IN * len(measures)
    fig = Figure(figsize=(WIDTH_IN, 0.5 + panel_in * len(opponents)), layout="constrained")
    axes = fig.subplots(len(opponents), 1, sharex=True, squeeze=False)[:, 0]
    at = {(v.player, v.opponent, v.metric): v.estimate for v in values}
    step = SPREAD / max(len(players), 1)
    for ax, opponent in zip(axes, opponents, strict=True):
        for i, player in enumerate(players):
            offset = (i - (len(players) - 1) / 2) * step
            rows, means, lows, highs = [], [], [], []
            for r, measure in enumerate(measures):
                e = at.get((player, opponent, measure))
                if e is None or e.mean is None:
                    continue
                rows.append(r + offset)
                means.append(e.mean)
                lows.append(e.mean - e.low if e.low is not None else 0.0)
                highs.append(e.high - e.mean if e.high is not None else 0.0)
            bars = ax.errorbar(
                means,
                rows,
                xerr=[lows, highs],
                fmt="o",
                color=colour(i),
                elinewidth=0.8,
                capsize=1.5,
                label=player if ax is axes[0] else None,
            )
            bars.lines[0].set_gid(f"series-{i}-{opponent}")  # one id a player and panel
        if len(measures) > len(PROFILE_RATES):  # the report's rates above, Fontana et al.'s dimensions below
            ax.axhline(len(PROFILE_RATES) - 0.5, color="0.6", linewidth=0.5, linestyle="--")
        ax.set_yticks(range(len(measures)), measures)
        ax.set_ylim(len(measures) - 0.5, -0.5)
        ax.set_xlim(-0.03, 1.03)
        ax.set_title(f"vs {opponent}", loc="left")
        ax.grid(axis="x", linewidth=0.3, alpha=0.5)
    axes[-1].xaxis.set_major_formatter(PercentFormatter(1.0))
    axes[-1].set_xlabel("rate (95% CI where shown)")
    if len(players) > 1:
        fig.legend(loc="outside upper center", ncols=min(len(players), 2))
    else:
        fig.suptitle(players[0] if players else "", fontsize=8)
    return fig
