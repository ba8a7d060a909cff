"""Altair charts the dashboard draws (Streamlit renders them with Vega-Lite).

Every encoding is a channel object (``alt.X("round:Q")``, ``alt.Tooltip("who:N")``), never a bare shorthand
string: Altair turns a string into its channel by matching it against its whole schema (about 4 ms a string,
measured with Altair 6.0), and the charts are built again on every run of the page."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd

from harness.analysis.fingerprint import Fingerprint, ProbeKind
from harness.ui.data import FALLBACK, FALLBACK_FLIPPED, NOISE_FLIP

_SEATS = alt.Scale(domain=["A", "B"], range=["#2a7de1", "#e8742a"])


def _frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(list(rows))
    if not df.empty:
        df["seat"] = df["player"].str.upper()
        df["who"] = df["seat"] + ": " + df["player_name"]
    return df


_EVENT_SHAPES = alt.Scale(domain=[NOISE_FLIP, FALLBACK, FALLBACK_FLIPPED], range=["diamond", "square", "cross"])


def actions_over_time(
    rows: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]] = ()
) -> alt.LayerChart | alt.FacetChart:
    """Each player's move as played per round (1 = C, 0 = D) and the cumulative cooperation rate of its
    choices (the behaviour rate; the as-played rate is in the tooltip). ``events``
    (:func:`harness.ui.data.round_events`) ring the moves that noise flipped or that were fallbacks, each
    with its round and what happened in its tooltip."""
    df = _frame(rows)
    base = alt.Chart(df).encode(
        x=alt.X("round:Q", title="round", scale=alt.Scale(zero=False, nice=False)),
        color=alt.Color("seat:N", scale=_SEATS, title="player"),
        tooltip=[
            alt.Tooltip("who:N"),
            alt.Tooltip("round:Q"),
            alt.Tooltip("action:N"),
            alt.Tooltip("cumulative_cooperation:Q", format=".0%", title="cooperation (choices)"),
            alt.Tooltip("cumulative_cooperation_played:Q", format=".0%", title="cooperation (as played)"),
        ],
    )
    moves = base.mark_point(filled=True, size=40, opacity=0.8).encode(
        y=alt.Y("cooperated:Q", title="C = 1, D = 0 · cooperation rate", scale=alt.Scale(domain=[-0.05, 1.05]))
    )
    rate = base.mark_line(strokeWidth=2.5).encode(y=alt.Y("cumulative_cooperation:Q"))
    if not events:
        return alt.layer(moves, rate).properties(height=260)
    marks = (
        alt.Chart(pd.DataFrame(list(events)))
        .mark_point(filled=False, size=260, strokeWidth=2)
        .encode(
            x=alt.X("round:Q"),
            y=alt.Y("cooperated:Q"),
            color=alt.Color("seat:N", scale=_SEATS, title="player"),
            shape=alt.Shape("kind:N", scale=_EVENT_SHAPES, title="marked round"),
            tooltip=[
                alt.Tooltip("round:Q"),
                alt.Tooltip("who:N", title="player"),
                alt.Tooltip("what:N", title="what happened"),
            ],
        )
    )
    return alt.layer(moves, rate, marks).properties(height=260)


def cumulative_payoffs(rows: Sequence[dict[str, Any]]) -> alt.Chart:
    """Both players' running totals."""
    df = _frame(rows)
    chart: alt.Chart = (
        alt.Chart(df)
        .mark_line(strokeWidth=2.5)
        .encode(
            x=alt.X("round:Q", title="round", scale=alt.Scale(zero=False, nice=False)),
            y=alt.Y("cumulative_payoff:Q", title="cumulative payoff"),
            color=alt.Color("seat:N", scale=_SEATS, title="player"),
            tooltip=[
                alt.Tooltip("who:N"),
                alt.Tooltip("round:Q"),
                alt.Tooltip("payoff:Q"),
                alt.Tooltip("cumulative_payoff:Q"),
            ],
        )
        .properties(height=260)
    )
    return chart


def matchup_heatmap(rows: Sequence[dict[str, Any]]) -> alt.LayerChart:
    """Mean payoff per round of each row player against each column opponent, as a heatmap."""
    df = pd.DataFrame(list(rows))
    order = sorted(df["player"].unique()) if not df.empty else []
    base = alt.Chart(df).encode(
        x=alt.X("opponent:N", title="against", sort=order),
        y=alt.Y("player:N", title="player", sort=order),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("mean_payoff_per_round:Q", title="payoff / round", scale=alt.Scale(scheme="redyellowgreen")),
        tooltip=[
            alt.Tooltip("player:N"),
            alt.Tooltip("opponent:N"),
            alt.Tooltip("mean_payoff_per_round:Q", format=".3f"),
            alt.Tooltip("games:Q"),
            alt.Tooltip("cooperation_rate:Q", format=".0%"),
        ],
    )
    text = base.mark_text(fontSize=12).encode(text=alt.Text("mean_payoff_per_round:Q", format=".2f"))
    size = max(260, 48 * len(order))
    heatmap: alt.LayerChart = (cells + text).properties(width=size, height=size)
    return heatmap


FINGERPRINT_AXES = {
    ProbeKind.ASHLOCK: (("x", "x (probe's P(C) outright)"), ("y", "y (probe's P(D) outright)"), "payoff / round"),
    ProbeKind.TRANSITIVE: (("round", "round"), ("p", "p (opponent's P(C), RAND p)"), "P(C)"),
}
"""Each fingerprint's (column field, title), (row field, title) and value title: the axes ``pdbench fingerprint``
prints (Ashlock: x across, y up; transitive: a row per p, a column per round)."""
FINGERPRINT_WIDTH = 880
"""The fingerprint's grid fits this many pixels across (the wide page's width beside nothing); a cell is at most 44."""
LABELLED_CELL = 28
"""Cells carry their value as text while they are at least this wide: up to 31 columns, so a transitive fingerprint
of 20 or 30 rounds and an Ashlock one of step 0.05 show their numbers; the tooltip gives them on any grid."""


def fingerprint_frame(fp: Fingerprint) -> pd.DataFrame:
    """One row per cell: its place on the two axes (named as in :data:`FINGERPRINT_AXES`), its value, its games
    and the standard deviation over them."""
    (column, _), (row, _), _ = FINGERPRINT_AXES[fp.kind]
    keys = ("x", "y") if fp.kind is ProbeKind.ASHLOCK else ("p", "round")
    frame = pd.DataFrame(
        [{keys[0]: c.key[0], keys[1]: c.key[1], "value": c.mean, "games": c.games, "sd": c.sd} for c in fp.cells],
        columns=[*keys, "value", "games", "sd"],
    )
    if fp.kind is ProbeKind.TRANSITIVE:
        frame["round"] = frame["round"].astype(int)
    return frame[[column, row, "value", "games", "sd"]]


def fingerprint_heatmap(fp: Fingerprint) -> alt.LayerChart:
    """The fingerprint as a heatmap, row values rising up the axis (Axelrod's origin at the lower left); Ashlock
    in payoff per round, transitive in P(C) on [0, 1]."""
    (column, across), (row, up), value = FINGERPRINT_AXES[fp.kind]
    df = fingerprint_frame(fp)
    columns, rows = df[column].nunique(), df[row].nunique()
    base = alt.Chart(df).encode(
        x=alt.X(f"{column}:O", title=across, axis=alt.Axis(labelAngle=0)),
        y=alt.Y(f"{row}:O", title=up, sort="descending"),
    )
    domain = alt.Scale(scheme="redyellowgreen", domain=[0, 1]) if fp.kind is ProbeKind.TRANSITIVE else None
    cells = base.mark_rect().encode(
        color=alt.Color("value:Q", title=value, scale=domain or alt.Scale(scheme="redyellowgreen")),
        tooltip=[
            alt.Tooltip(f"{column}:O"),
            alt.Tooltip(f"{row}:O"),
            alt.Tooltip("value:Q", title=value, format=".3f"),
            alt.Tooltip("games:Q"),
            alt.Tooltip("sd:Q", title="sd over games", format=".3f"),
        ],
    )
    side = max(4, min(44, FINGERPRINT_WIDTH // columns))
    layers: list[alt.Chart] = [cells]
    if side >= LABELLED_CELL:
        size = 12 if side >= 40 else 10
        layers.append(base.mark_text(fontSize=size).encode(text=alt.Text("value:Q", format=".2f")))
    heatmap: alt.LayerChart = alt.LayerChart(layer=layers).properties(
        width=max(200, side * columns), height=max(120, side * rows)
    )
    return heatmap


def long_run_shares(rows: Sequence[dict[str, Any]]) -> alt.LayerChart:
    """Each player's long-run share (``rows``: player, estimate, low, high, as ``pdbench analyze``'s stationary
    distribution) as a bar, its 95% interval as a whisker; the players by share, largest first."""
    df = pd.DataFrame(list(rows))
    order = list(df.sort_values("estimate", ascending=False, kind="stable")["player"]) if not df.empty else []
    base = alt.Chart(df).encode(
        x=alt.X("player:N", title=None, sort=order, axis=alt.Axis(labelAngle=-30)),
        tooltip=[
            alt.Tooltip("player:N"),
            alt.Tooltip("estimate:Q", format=".1%", title="long-run share"),
            alt.Tooltip("low:Q", format=".1%", title="95% interval from"),
            alt.Tooltip("high:Q", format=".1%", title="95% interval to"),
        ],
    )
    bars = base.mark_bar(color="#2a7de1").encode(
        y=alt.Y("estimate:Q", title="long-run share", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    )
    whiskers = base.mark_errorbar(ticks={"size": 14}, color="black").encode(
        y=alt.Y("low:Q", title="long-run share"), y2=alt.Y2("high:Q")
    )
    chart: alt.LayerChart = (bars + whiskers).properties(height=240)
    return chart


def shares_over_time(
    players: Sequence[str], shares: Any, colours: Sequence[str], labels: Sequence[str] | None = None
) -> alt.Chart:
    """Each player's share of the population per generation, stacked to 100% (``shares``: [generations + 1,
    players]); ``labels`` (emoji and name) name the players in the legend and tooltips, in their order."""
    names = list(labels or players)
    rows = [
        {"generation": g, "player": names[i], "share": float(row[i])}
        for g, row in enumerate(shares)
        for i in range(len(names))
    ]
    chart: alt.Chart = (
        alt.Chart(pd.DataFrame(rows))
        .mark_area(opacity=0.9)
        .encode(
            x=alt.X(
                "generation:Q",
                title="generation",
                scale=alt.Scale(nice=False, domain=[0, max(len(shares) - 1, 1)]),
                axis=alt.Axis(format="d", tickMinStep=1),
            ),
            y=alt.Y("share:Q", title="share of the population", stack="normalize", axis=alt.Axis(format="%")),
            color=alt.Color("player:N", title="player", sort=names, scale=alt.Scale(domain=names, range=list(colours))),
            order=alt.Order("order:Q"),
            tooltip=[alt.Tooltip("generation:Q"), alt.Tooltip("player:N"), alt.Tooltip("share:Q", format=".1%")],
        )
        .transform_calculate(order=f"indexof({json.dumps(names)}, datum.player)")
        .properties(height=280)
    )
    return chart
