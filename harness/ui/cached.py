"""Streamlit caching around the dashboard's reads (:mod:`harness.store.browse`, :mod:`harness.ui.data`):
results are re-read only when a run file changes.

Every cached call takes the folder's signature (names, sizes and modification times of its run
files), so a new run, a finished run or a run still being written is seen at the next rerun,
and nothing is read twice while the files stay the same.

A view reads one run through a :class:`RunSource`: the run's catalog is opened on the first
cache miss of a page render and closed at its end, so a render attaches the file at most once
and the dashboard never holds a run file open between renders (which would block
`pdbench resume` or a new run writing to it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from harness.analysis import probes as probes_analysis
from harness.analysis.report import ConditionSummary
from harness.errors import StoreError
from harness.store import browse
from harness.store.catalog import Catalog
from harness.ui import data

if TYPE_CHECKING:
    from harness.analysis.evolutionary import MeasuredTable
    from harness.analysis.fingerprint import Fingerprint
    from harness.analysis.memory_one import MemoryOneProfile
    from harness.evolution import Trajectory
    from harness.game.rules import PayoffMatrix
    from harness.store.evolution_writer import EvolutionRun

Signature = tuple[tuple[str, int, int], ...]
REFRESH_S = 2.5  # how often a page following a run in progress looks again (harness.ui.follow)
LAST_LISTING = "cached_listing|"  # session key prefix: (stamp, being written?) of a folder's last listing
PAGE_LISTINGS = "cached_page_listings"  # session key: {(folder, kind): listing} this full run of the page shows


class RunSource:
    """A run's catalog for one page render: opened on the first cache miss, closed by :func:`reading`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._run_id: str | None = None
        self._catalog: Catalog | None = None

    def catalog(self, run_id: str) -> Catalog:
        if self._catalog is None or self._run_id != run_id:
            self.close()
            self._catalog, self._run_id = Catalog(self.folder, [run_id]), run_id
        return self._catalog

    def close(self) -> None:
        if self._catalog is not None:
            self._catalog.close()
            self._catalog = None


@contextmanager
def reading(folder: Path) -> Iterator[RunSource]:
    """Wrap a view's render: its cached reads of one run share one catalog, closed at the end."""
    source = RunSource(folder)
    try:
        yield source
    finally:
        source.close()


@contextmanager
def _catalog(folder: Path, run_id: str, source: RunSource | None) -> Iterator[Catalog]:
    """The run's catalog for one read. A read that found the run's file damaged is an error that names it (the
    page shows it, :func:`harness.ui.app.main`): what it read is not the run."""
    if source is not None:
        cat = source.catalog(run_id)
        yield cat
    else:
        with browse.run_catalog(folder, run_id) as cat:
            yield cat
    for _path, reason in cat.left_out:
        raise StoreError(f"Run `{run_id}` cannot be read: {reason}.")


def signature(folder: Path) -> Signature:
    return browse.folder_signature(folder)


@st.cache_data(show_spinner=False, max_entries=64)
def list_runs(folder: Path, sig: Signature, kind: str | None = None, stamp: int = 0) -> browse.Folder:
    return browse.list_runs(folder, kind)


def new_page() -> None:
    """A full run of the page begins (:func:`harness.ui.app.main`): its :func:`listing` is read afresh."""
    st.session_state[PAGE_LISTINGS] = {}


def listing(folder: Path, kind: str | None = None) -> browse.Folder:
    """The folder's runs as this full run of the page shows them: read (:func:`look`) at its first call, the same
    for the rest of the run. So every part of the page agrees, and :func:`harness.ui.follow.follow` compares
    later looks with what the page shows: a writer that moves on while the page is drawn (a second or more on a
    busy machine) is seen at the next look, not taken for what the page already shows (which left it stale)."""
    drawn: dict[tuple[str, str | None], browse.Folder] = st.session_state.setdefault(PAGE_LISTINGS, {})
    key = (str(folder), kind)
    if key not in drawn:
        drawn[key] = look(folder, kind)
    return drawn[key]


def look(folder: Path, kind: str | None = None) -> browse.Folder:
    """The folder's runs now (:func:`list_runs`), cached by the folder's signature; while a file is being written,
    read again at most every ``REFRESH_S`` as well. A writer can release its file without changing it (a run
    stopped before its first game, a process killed), so the signature alone would keep the file "in progress"."""
    key = f"{LAST_LISTING}{folder}|{kind}"
    last: tuple[int, bool] | None = st.session_state.get(key)  # the stamp of the last listing, and if it had one
    stamp = 0 if last is None else int(time.time() / REFRESH_S) if last[1] else last[0]
    out = list_runs(folder, signature(folder), kind, stamp)
    st.session_state[key] = (stamp, bool(out.being_written))  # a fresh listing stays the one read, once released
    return out


@st.cache_data(show_spinner=False, max_entries=16)
def planned_players(folder: Path, runs: tuple[tuple[str, str], ...]) -> dict[str, list[browse.PlannedPlayer]]:
    """Each run's planned players (:func:`browse.planned_players`). A run's config never changes, so the key is
    the folder's runs (id and creation time), not its signature: a run being written does not re-read them."""
    with Catalog(folder) as cat:
        return browse.planned_players(cat, [run_id for run_id, _ in runs])


@st.cache_data(show_spinner=False, max_entries=64)
def payoff_matrices(folder: Path, run_id: str, created_at: str, status: str) -> list[PayoffMatrix]:
    """The matrices a run played (:func:`browse.payoff_matrices`). A run's config never changes: keyed by the run
    (id and creation time), not the folder's signature; and by its status, so a run whose file could not be read
    while it was written is read again once it has ended."""
    with browse.run_catalog(folder, run_id) as cat:
        return browse.payoff_matrices(cat, run_id)


def players_of(folder: Path, listing: browse.Folder) -> dict[str, list[browse.PlannedPlayer]]:
    return planned_players(folder, tuple((r.run_id, r.created_at.isoformat()) for r in listing.runs))


@st.cache_data(show_spinner=False, max_entries=256)
def conditions(
    folder: Path, sig: Signature, run_id: str, _source: RunSource | None = None
) -> list[browse.ConditionRow]:
    with _catalog(folder, run_id, _source) as cat:
        return browse.conditions(cat, run_id)


@st.cache_data(show_spinner=False, max_entries=256)
def games(
    folder: Path, sig: Signature, run_id: str, condition: str, _source: RunSource | None = None
) -> list[browse.GameRow]:
    with _catalog(folder, run_id, _source) as cat:
        return browse.games(cat, run_id, condition)


@st.cache_data(show_spinner=False, max_entries=256)
def game_detail(
    folder: Path, sig: Signature, run_id: str, game_id: int, _source: RunSource | None = None
) -> browse.GameDetail:
    with _catalog(folder, run_id, _source) as cat:
        return browse.game_detail(cat, run_id, game_id)


@st.cache_data(show_spinner=False, max_entries=256)
def game_curves(
    folder: Path, sig: Signature, run_id: str, game_id: int, _source: RunSource | None = None
) -> list[dict[str, Any]]:
    with _catalog(folder, run_id, _source) as cat:
        return browse.game_curves(cat, run_id, game_id)


@st.cache_data(show_spinner=False, max_entries=64)
def game_calls(
    folder: Path, sig: Signature, run_id: str, game_id: int, _source: RunSource | None = None
) -> list[dict[str, Any]]:
    with _catalog(folder, run_id, _source) as cat:
        return browse.game_calls(cat, run_id, game_id)


@st.cache_data(show_spinner=False, max_entries=64)
def summary(
    folder: Path, sig: Signature, run_id: str, condition: str | None = None, _source: RunSource | None = None
) -> list[ConditionSummary]:
    with _catalog(folder, run_id, _source) as cat:
        return data.summary(cat, run_id, condition)


@st.cache_data(show_spinner=False, max_entries=64)
def profile(
    folder: Path, sig: Signature, run_id: str, condition: str, _source: RunSource | None = None
) -> dict[str, dict[str, float | None]]:
    with _catalog(folder, run_id, _source) as cat:
        return data.profile(cat, run_id, condition)


@st.cache_data(show_spinner=False, max_entries=64)
def memory_one(
    folder: Path, sig: Signature, run_id: str, condition: str, _source: RunSource | None = None
) -> list[MemoryOneProfile]:
    """The memory-one profile of each player of ``condition`` over its complete games."""
    from harness.analysis.memory_one import memory_one_profiles

    with _catalog(folder, run_id, _source) as cat:
        return memory_one_profiles(cat, run_id, condition=condition)


@st.cache_data(show_spinner=False, max_entries=32)
def fingerprint(folder: Path, sig: Signature, run_id: str, _source: RunSource | None = None) -> Fingerprint:
    """The fingerprint of a run of kind ``fingerprint``, from its complete games
    (:func:`harness.analysis.fingerprint.fingerprint`)."""
    from harness.analysis.fingerprint import fingerprint as read

    with _catalog(folder, run_id, _source) as cat:
        return read(cat, run_id)


@st.cache_data(show_spinner=False, max_entries=64)
def probes(folder: Path, sig: Signature, run_id: str) -> list[probes_analysis.ProbeShare]:
    """The counterfactual probes of run ``run_id`` (every probe run of it in the folder): shares by model and flip."""
    with Catalog(folder) as cat:
        return probes_analysis.probes_of(cat, run_id)


@st.cache_data(show_spinner=False, max_entries=64)
def leaderboard(folder: Path, sig: Signature, run_id: str, _source: RunSource | None = None) -> list[dict[str, Any]]:
    with _catalog(folder, run_id, _source) as cat:
        return browse.leaderboard(cat, run_id)


@st.cache_data(show_spinner=False, max_entries=64)
def matchups(folder: Path, sig: Signature, run_id: str, _source: RunSource | None = None) -> list[dict[str, Any]]:
    with _catalog(folder, run_id, _source) as cat:
        return browse.matchups(cat, run_id)


@st.cache_data(show_spinner=False, max_entries=16)
def evolution_runs(folder: Path, sig: Signature) -> list[EvolutionRun]:
    """The folder's evolution runs, newest first (:func:`harness.store.evolution_writer.list_evolution_runs`)."""
    from harness.store.evolution_writer import list_evolution_runs

    return list_evolution_runs(folder)


@st.cache_data(show_spinner=False, max_entries=32)
def evolution(folder: Path, sig: Signature, run_id: str) -> tuple[EvolutionRun, Trajectory]:
    """An evolution run and its trajectory, as stored (:func:`harness.store.evolution_writer.read_evolution`)."""
    from harness.store.evolution_writer import read_evolution

    return read_evolution(folder, run_id)


@st.cache_data(show_spinner=False, max_entries=32)
def payoff_table(folder: Path, sig: Signature, run_id: str) -> MeasuredTable:
    """The measured payoff table of run ``run_id``, game by game (:func:`harness.analysis.evolutionary.measured_table`):
    a ConfigError with the one-paragraph reason for a run that has none (not cached: raised again at each look)."""
    from harness.analysis.evolutionary import measured_table

    return measured_table(folder, run_id)


@st.cache_data(show_spinner=False, max_entries=32)
def evolutionary_analysis(
    folder: Path, sig: Signature, run_id: str, process: str, intensity: float, size: int, draws: int, seed: int
) -> dict[str, Any]:
    """``pdbench analyze``'s figures of run ``run_id`` for these settings, as its JSON object
    (:meth:`harness.analysis.evolutionary.Analysis.as_dict`), cached per settings: a change of N, dynamics or
    bootstrap computes once, a return to earlier settings is instant. Without the replicator's rest points, which
    the dashboard does not show. Bad settings raise the analysis's ConfigError before anything is computed."""
    from harness.analysis.evolutionary import Population, Process, analyze

    population = Population(Process(process), intensity, size)
    return analyze(payoff_table(folder, sig, run_id), population, draws=draws, seed=seed, replicator=False).as_dict()
