"""Cooperation by round: one line per focal player and opponent, with its 95% band over games."""

from __future__ import annotations

import dataclasses
import math

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from harness.analysis.figures import CooperationSeries
from harness.figures.style import BAND_ALPHA, WIDTH_IN, colour, line_style

LEGEND_COLUMNS = 2
LEGEND_ROW_IN = 0.16
MARKERS_UP_TO = 30  # rounds: fewer, and each round gets a marker (a short game's points stay visible)
MIN_GAMES = 2
"""A line stops at the last round this many of its games reached (under a geometric horizon the last rounds are
one long game's moves, 0% or 100% with no interval, which would read as a trend); all of its rounds when no round
has as many (a run of one replicate)."""


def draw(series: list[CooperationSeries]) -> Figure:
    """Lines named by opponent, or "player vs opponent" where several players are drawn."""
    several = len({s.player for s in series}) > 1
    legend_rows = math.ceil(len(series) / LEGEND_COLUMNS)
    fig = Figure(figsize=(WIDTH_IN, 2.2 + LEGEND_ROW_IN * legend_rows), layout="constrained")
    ax = fig.add_subplot()
    shown = [_reached(s) for s in series]
    markers = max((len(s.rounds) for s in shown), default=0) <= MARKERS_UP_TO
    for i, s in enumerate(shown):
        means = [e.mean if e.mean is not None else float("nan") for e in s.estimates]
        line = ax.plot(
            s.rounds,
            means,
            color=colour(i),
            linestyle=line_style(i),
            marker="o" if markers else None,
            label=f"{s.player} vs {s.opponent}" if several else s.opponent,
        )[0]
        line.set_gid(f"series-{i}")
        if any(e.low is not None for e in s.estimates):
            low = [e.low if e.low is not None else m for e, m in zip(s.estimates, means, strict=True)]
            high = [e.high if e.high is not None else m for e, m in zip(s.estimates, means, strict=True)]
            band = ax.fill_between(s.rounds, low, high, color=colour(i), alpha=BAND_ALPHA, linewidth=0)
            band.set_gid(f"band-{i}")
    ax.set_xlabel("round")
    ax.set_ylabel("cooperation (chosen moves)")
    ax.set_ylim(-0.03, 1.03)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    title = None if several else (series[0].player if series else None)
    # Under the axes, where it hides no line (several players' lines overlap wherever they agree).
    fig.legend(title=f"{title} vs" if title else None, loc="outside lower center", ncols=LEGEND_COLUMNS)
    return fig


def _reached(s: CooperationSeries) -> CooperationSeries:
    """``s`` up to the last round :data:`MIN_GAMES` of its games reached (see there)."""
    need = min(MIN_GAMES, max((e.n for e in s.estimates), default=0))
    last = max((k for k, e in enumerate(s.estimates) if e.n >= need), default=-1)
    return dataclasses.replace(s, rounds=s.rounds[: last + 1], estimates=s.estimates[: last + 1])
