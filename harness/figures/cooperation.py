"""Cooperation by round with its 95% band over games: of one player, a line per opponent on one axis; of several,
a panel per opponent with a line per player (one colour a player in every panel), since a line per player and
opponent on one axis cannot be read past a few."""

from __future__ import annotations

import dataclasses
import math

from matplotlib.axes import Axes
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


PANEL_COLUMNS = 3
PANEL_HEIGHT_IN = 1.05


def draw(series: list[CooperationSeries]) -> Figure:
    """One axis of lines named by opponent, or (several players) :func:`_panels`."""
    if len({s.player for s in series}) > 1:
        return _panels(series)
    legend_rows = math.ceil(len(series) / LEGEND_COLUMNS)
    fig = Figure(figsize=(WIDTH_IN, 2.2 + LEGEND_ROW_IN * legend_rows), layout="constrained")
    ax = fig.add_subplot()
    shown = [_reached(s) for s in series]
    markers = max((len(s.rounds) for s in shown), default=0) <= MARKERS_UP_TO
    for i, s in enumerate(shown):
        _line(ax, s, n=i, style=i, label=s.opponent, marker="o" if markers else None)
    ax.set_xlabel("round")
    ax.set_ylabel("cooperation (chosen moves)")
    ax.set_ylim(-0.03, 1.03)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    title = series[0].player if series else None
    fig.legend(title=f"{title} vs" if title else None, loc="outside lower center", ncols=LEGEND_COLUMNS)
    return fig


def _panels(series: list[CooperationSeries]) -> Figure:
    """A panel per opponent (in the runs' order), a line and band per player, shared axes, one legend of players."""
    players = list(dict.fromkeys(s.player for s in series))
    opponents = list(dict.fromkeys(s.opponent for s in series))
    cols = min(PANEL_COLUMNS, len(opponents))
    rows = math.ceil(len(opponents) / cols)
    legend_rows = math.ceil(len(players) / LEGEND_COLUMNS)
    fig = Figure(figsize=(WIDTH_IN, 0.5 + PANEL_HEIGHT_IN * rows + LEGEND_ROW_IN * legend_rows), layout="constrained")
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).ravel()
    shown = [_reached(s) for s in series]
    markers = max((len(s.rounds) for s in shown), default=0) <= MARKERS_UP_TO
    labelled: set[str] = set()  # a player is named once, by its first line (players need not share opponents)
    for n, s in enumerate(shown):
        ax, i = axes[opponents.index(s.opponent)], players.index(s.player)
        label = None if s.player in labelled else s.player
        _line(ax, s, n=n, style=i, label=label, marker="o" if markers else None, markersize=2.5)
        labelled.add(s.player)
    for k, ax in enumerate(axes):
        if k >= len(opponents):
            ax.set_visible(False)
            continue
        ax.set_title(f"vs {opponents[k]}", loc="left", fontsize="small")
        ax.set_ylim(-0.03, 1.03)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=4))
        ax.tick_params(labelsize="x-small")
    fig.supxlabel("round", fontsize="small")
    fig.supylabel("cooperation (chosen moves)", fontsize="small")
    fig.legend(loc="outside upper center", ncols=min(len(players), LEGEND_COLUMNS))  # clear of "round"
    return fig


def _line(
    ax: Axes,
    s: CooperationSeries,
    *,
    n: int,
    style: int,
    label: str | None,
    marker: str | None,
    markersize: float | None = None,
) -> None:
    """Series ``s`` as a line in colour and dash ``style``, with its band where it has intervals; SVG ids
    ``series-<n>`` and ``band-<n>``."""
    means = [e.mean if e.mean is not None else float("nan") for e in s.estimates]
    line = ax.plot(
        s.rounds,
        means,
        color=colour(style),
        linestyle=line_style(style),
        marker=marker,
        markersize=markersize,
        label=label,
    )[0]
    line.set_gid(f"series-{n}")
    if any(e.low is not None for e in s.estimates):
        low = [e.low if e.low is not None else m for e, m in zip(s.estimates, means, strict=True)]
        high = [e.high if e.high is not None else m for e, m in zip(s.estimates, means, strict=True)]
        band = ax.fill_between(s.rounds, low, high, color=colour(style), alpha=BAND_ALPHA, linewidth=0)
        band.set_gid(f"band-{n}")


def _reached(s: CooperationSeries) -> CooperationSeries:
    """``s`` up to the last round :data:`MIN_GAMES` of its games reached (see there)."""
    need = min(MIN_GAMES, max((e.n for e in s.estimates), default=0))
    last = max((k for k, e in enumerate(s.estimates) if e.n >= need), default=-1)
    return dataclasses.replace(s, rounds=s.rounds[: last + 1], estimates=s.estimates[: last + 1])
