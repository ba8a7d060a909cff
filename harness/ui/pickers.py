"""Choosing a run, a condition and a replicate: shared by the Results and Replay views.

The choice survives switching views: Streamlit forgets the state of widgets that are not
drawn, so the chosen run, condition and game are also kept under plain session keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from harness.states import RunStatus
from harness.store.browse import GAMELESS_KINDS, ConditionRow, Folder, GameRow, RunRow
from harness.ui import cached
from harness.ui.data import newest_with_results, run_label
from harness.util.plural import plural

SELECTED_RUN = "selected_run"
SELECTED_CONDITION = "selected_condition"
SELECTED_GAME = "selected_game"
FIRST_RUN_COMMAND = "pdbench eval --model mock/tft --rounds 20 --replicates 3"


@dataclass(frozen=True, slots=True)
class Selection:
    run: RunRow
    condition: ConditionRow
    game: GameRow


def first_run_message(folder: Path) -> None:
    """What an empty results folder shows: how to make a first run."""
    st.info(
        f"No runs yet in `{folder}`. Play one from **🧪 Run Experiment** or **🏆 Tournament**, or from a terminal:",
        icon="👋",
    )
    st.code(f"{FIRST_RUN_COMMAND} --results {folder}", language="bash")


def unreadable_files(listing: Folder) -> None:
    """Files the catalog skipped: runs still being written, and files it cannot read, with why."""
    busy = [(name, why) for name, why in listing.unreadable if name in listing.being_written]
    other = [(name, why) for name, why in listing.unreadable if name not in listing.being_written]
    if busy:
        names = ", ".join(f"`{n.removesuffix('.duckdb')}`" for n, _ in busy)
        st.info(
            f"⏳ In progress: {names}. A run being written cannot be read until it ends or is interrupted; "
            f"this page looks again every {cached.REFRESH_S:g} s on its own.",
        )
    for name, why in other:
        st.warning(f"`{name}` is not shown: {why}.", icon="⚠️")


def _index(options: Sequence[object], wanted: object) -> int:
    try:
        return options.index(wanted)
    except ValueError:
        return 0


def pick_run(folder: Path, key: str, kind: str | None = None, remember: str = SELECTED_RUN) -> RunRow | None:
    """A run picker, newest first; None (after saying why) when there is nothing to pick.

    The choice is kept under ``remember``: Results and Replay share one choice, the Tournament
    view keeps its own, so opening it does not change what the other views show. Without a
    ``kind``, runs that play no games (evolution runs, shown by the 🧬 Evolution view) are left out."""
    listing = cached.listing(folder, kind)
    runs = [r for r in listing.runs if kind is not None or r.kind not in GAMELESS_KINDS]
    if not runs:
        unreadable_files(listing)
        if listing.runs and kind is None:
            st.info(f"No runs with games yet in `{folder}`: its evolution runs are in 🧬 Evolution.", icon="👋")
            st.code(f"{FIRST_RUN_COMMAND} --results {folder}", language="bash")
        elif kind is None or not cached.listing(folder).runs:
            first_run_message(folder)
        else:
            st.info(f"No {kind} runs yet in `{folder}`.")
        return None
    by_id = {r.run_id: r for r in runs}
    ids = list(by_id)
    players = cached.players_of(folder, listing)
    remembered = st.session_state.get(remember)
    chosen = remembered if remembered in by_id else newest_with_results(runs)
    run_id = st.selectbox(
        "Run",
        ids,
        index=_index(ids, chosen),
        key=f"{key}_run",
        format_func=lambda r: run_label(by_id[r], players.get(r, [])),
    )
    if run_id is None:
        return None
    st.session_state[remember] = run_id
    return by_id[run_id]


def run_notes(folder: Path, run: RunRow, kind: str | None = None) -> None:
    """Below the pickers: files that could not be read, and how an unfinished run can be finished."""
    unreadable_files(cached.listing(folder, kind))
    if run.status is RunStatus.RUNNING:
        done = run.games_done / run.games_planned if run.games_planned else 0.0
        st.progress(
            min(done, 1.0),
            text=f"⏳ Run `{run.run_id}` is **running**: {run.games_done:,} of "
            f"{run.games_planned:,} games finished. This page follows it, looking again every "
            f"{cached.REFRESH_S:g} s.",
        )
    elif run.status is RunStatus.CRASHED:
        st.warning(
            f"Run `{run.run_id}` **crashed**: its process ended without finishing it (killed, or the machine "
            f"stopped), with {run.games_done:,} of {run.games_planned:,} games complete. Continue it with "
            f"`pdbench resume {run.run_id} --results {folder}`."
        )
    elif run.status is not RunStatus.COMPLETE:
        st.info(
            f"Run `{run.run_id}` is **{run.status}**: {run.games_done} of {run.games_planned} games complete. "
            f"Finish it with `pdbench resume {run.run_id} --results {folder}`."
        )


def pick_game(folder: Path, key: str, source: cached.RunSource | None = None) -> Selection | None:
    """Run, condition and replicate pickers in one row; None when there is no game to show.

    ``source`` (from :func:`cached.reading`) lets the pickers share the view's catalog. The
    condition and replicate widgets are keyed by run (and condition): Streamlit keeps a keyed
    widget's label when only its options change, which would show another run's labels."""
    cols = st.columns([3, 2, 2])
    with cols[0]:
        run = pick_run(folder, key)
    if run is None:
        return None
    sig = cached.signature(folder)
    conds = cached.conditions(folder, sig, run.run_id, _source=source)
    if not conds:
        run_notes(folder, run)
        st.info(f"Run `{run.run_id}` has no recorded games yet.")
        return None
    names = [c.condition for c in conds]
    by_name = {c.condition: c for c in conds}
    with cols[1]:
        name = st.selectbox(
            "Condition",
            names,
            index=_index(names, st.session_state.get(SELECTED_CONDITION)),
            key=f"{key}_condition_{run.run_id}",
            format_func=lambda c: f"{c} ({plural(by_name[c].games, 'game')})",
        )
    if name is None:
        return None
    st.session_state[SELECTED_CONDITION] = name
    game_rows = cached.games(folder, sig, run.run_id, name, _source=source)
    ids = [g.game_id for g in game_rows]
    by_game = {g.game_id: g for g in game_rows}
    with cols[2]:
        game_id = st.selectbox(
            "Replicate",
            ids,
            index=_index(ids, st.session_state.get(SELECTED_GAME)),
            key=f"{key}_game_{run.run_id}",
            format_func=lambda g: by_game[g].label,
        )
    if game_id is None:
        return None
    st.session_state[SELECTED_GAME] = game_id
    run_notes(folder, run)
    return Selection(run, by_name[name], by_game[game_id])
