"""A fingerprint run's matrix in 📊 View Results: the heatmap of ``pdbench fingerprint`` (its table's axes), what a
cell is, and the command and SQL that give the same numbers.

The run's games stay pickable below it, one condition per probe point, so any point's game can be replayed."""

from __future__ import annotations

from pathlib import Path

import altair as alt
import streamlit as st

from harness.analysis.fingerprint import ProbeKind, reproducing_sql
from harness.store.browse import RunRow
from harness.ui import cached, charts


def render(folder: Path, run: RunRow, source: cached.RunSource) -> None:
    """The heatmap with its caption; a note instead while no probe point has a complete game."""
    fp = cached.fingerprint(folder, cached.signature(folder), run.run_id, _source=source)
    st.markdown(f"#### 🔬 {fp.kind.value.capitalize()} fingerprint of {fp.player or 'the player'}")
    if not fp.cells:
        st.info(f"Fingerprint `{run.run_id}` has no complete game yet, so no cell to draw.")
        return
    heatmap = charts.fingerprint_heatmap(fp).properties(autosize=alt.AutoSizeParams(type="pad", contains="padding"))
    st.altair_chart(heatmap, width="content")
    where = (
        "x across, y up: the probe cooperates outright with probability x and defects with probability y (its dual "
        "where x + y ≥ 1)"
        if fp.kind is ProbeKind.ASHLOCK
        else "a row per RAND(p) opponent, p up, a column per round"
    )
    st.caption(
        f"Each cell: {fp.caption}. {where}. Each probe point is a condition: pick it above to replay its games below."
    )
    with st.expander("Command and SQL behind this fingerprint"):
        st.code(
            f"pdbench plot {run.run_id} --kind fingerprint --out fingerprint.png --results {folder}", language="bash"
        )
        st.code(reproducing_sql(fp.kind, run.run_id), language="sql")
