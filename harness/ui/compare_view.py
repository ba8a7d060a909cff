"""The ⚖️ Compare view: model players of one run or several side by side, as ``pdbench compare`` shows them.

The runs are chosen from the folder (the newest two with model players by default); their model players (a model,
or one model under two personas, prompts or temperatures) are compared by :func:`harness.analysis.compare.compare`,
so the table, the chart and the note say what the command says: each metric's mean and 95% interval per player,
overall and per opponent, and each player's difference from the first with its interval and p-value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from harness.analysis.compare import METRIC_NAMES, METRICS, RATE_METRICS, Comparison, compare, resolve_players
from harness.errors import PDBenchError
from harness.store.catalog import Catalog
from harness.ui import cached, pickers

K = "cmp_"  # prefix of this view's widget keys
NAMES = {**METRIC_NAMES, "cost_usd": "cost / game ($)"}


def render(folder: Path) -> None:
    st.markdown("### ⚖️ Compare")
    st.caption(
        "Model players side by side, per opponent and overall, each with its 95% interval over games; the "
        "difference from the first player is paired by opponent and replicate where the games pair up, Welch's "
        "otherwise. The same figures as `pdbench compare`."
    )
    listing = cached.listing(folder)
    runs = [r for r in listing.runs if r.games_done > 0]
    if not runs:
        pickers.first_run_message(folder)
        return
    labels = {r.run_id: r.label for r in runs}
    default = [r.run_id for r in runs[:2]]
    chosen = st.multiselect("Runs", list(labels), default=default, format_func=labels.__getitem__, key=f"{K}runs")
    metric = st.selectbox("Metric", METRICS, format_func=NAMES.__getitem__, key=f"{K}metric")
    if not chosen:
        st.info("Choose one run with two model players or more, or two runs or more.", icon="⚖️")
        return
    try:
        comparison = _compare(folder, cached.signature(folder), tuple(chosen))
    except PDBenchError as exc:
        st.error(str(exc), icon="⚖️")
        return
    _show(comparison, metric)


@st.cache_data(show_spinner=False, max_entries=16)
def _compare(folder: Path, sig: cached.Signature, run_ids: tuple[str, ...]) -> Comparison:
    with Catalog(folder, list(run_ids)) as cat:
        players = resolve_players(cat, list(run_ids), {run: [run] for run in run_ids})
        return compare(cat, players)


def _show(c: Comparison, metric: str) -> None:
    letters = [chr(ord("A") + i) for i in range(len(c.players))]
    st.markdown(
        "  \n".join(
            f"**{letter}** = `{p.shown}` (run `{p.run_id}`, {games} games)"
            for letter, p, games in zip(letters, c.players, c.games, strict=True)
        )
    )
    st.caption(f"Opponents in common: {', '.join(c.opponents)}")
    st.dataframe(overall_frame(c, letters), hide_index=True, width="stretch")
    st.markdown(f"#### {NAMES[metric]} per opponent")
    st.altair_chart(_chart(c, letters, metric), width="stretch")
    st.caption(c.note)


def overall_frame(c: Comparison, letters: list[str]) -> pd.DataFrame:
    """One row per metric: each player's mean and interval, and each difference from A with its p-value."""
    rows: list[dict[str, Any]] = []
    for metric in METRICS:
        cells = c.overall[metric]
        row: dict[str, Any] = {"metric": NAMES[metric]}
        for letter, cell in zip(letters, cells, strict=True):
            row[letter] = _text(metric, cell.estimate.mean, cell.estimate.low, cell.estimate.high)
        for letter, cell in zip(letters[1:], cells[1:], strict=True):
            d = cell.difference
            row[f"{letter} − A"] = _text(metric, d.mean, d.low, d.high, signed=True) if d is not None else "—"
            p = cell.p_holm if cell.p_holm is not None else (d.p if d is not None else None)
            row[f"p ({letter})"] = "—" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")
        rows.append(row)
    return pd.DataFrame(rows)


def _text(metric: str, mean: float | None, low: float | None, high: float | None, signed: bool = False) -> str:
    if mean is None:
        return "—"
    scale, unit = (100.0, "%") if metric in RATE_METRICS else (1.0, "")
    digits = 4 if metric == "cost_usd" else 1 if unit else 2
    sign = "+" if signed else ""
    text = f"{mean * scale:{sign}.{digits}f}{unit}"
    if low is None or high is None or low == high:  # no spread (one game, or every game alike): no interval
        return text
    return f"{text} [{low * scale:{sign}.{digits}f}, {high * scale:{sign}.{digits}f}]"


def _chart(c: Comparison, letters: list[str], metric: str) -> Any:
    """The metric per opponent, a bar per player with its 95% interval."""
    rows = []
    for opponent in c.opponents:
        for letter, cell in zip(letters, c.by_opponent[opponent][metric], strict=True):
            e = cell.estimate
            rows.append({"opponent": opponent, "player": letter, "mean": e.mean, "low": e.low, "high": e.high})
    frame = pd.DataFrame(rows)
    base = alt.Chart(frame).encode(x=alt.X("opponent:N", sort=c.opponents, title=None), xOffset="player:N")
    bars = base.mark_bar().encode(y=alt.Y("mean:Q", title=NAMES[metric]), color=alt.Color("player:N"))
    whiskers = base.mark_rule(color="black", strokeWidth=1.5).encode(y="low:Q", y2="high:Q")
    return (bars + whiskers).properties(height=280)
