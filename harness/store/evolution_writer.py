"""Evolution runs in the results store: one DuckDB file per run, like every run.

The run's settings go to ``runs`` (kind ``evolution``, ``config_json`` the resolved settings); the population
after every generation to ``population`` (counts; shares under replicator dynamics), the generations at which one
player took over to ``fixation``, the payoff table the dynamics read to ``payoff_table``, and under the
squared_share dynamics each phase's pooled tallies per player to ``phase_scores``. Generations are
written as they are played (committed every quarter second), so a run stopped by Ctrl-C or a crash keeps what it
played and ends ``interrupted``; :func:`read_evolution` reads a run back as a :class:`Trajectory`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from harness.errors import RunNotFoundError, StoreError
from harness.evolution import (
    Dynamics,
    EvolutionSettings,
    Fixation,
    PayoffMode,
    PayoffSource,
    PayoffTable,
    PhaseScores,
    Trajectory,
)
from harness.states import RunStatus
from harness.store.catalog import Catalog
from harness.store.run_file import write_error
from harness.store.transaction import transaction
from harness.store.writer import RunWriter

KIND = "evolution"
FLUSH_SECONDS = 0.25
FLUSH_ROWS = 200_000
# Keys of config_json beside the settings: what the run belongs to and where its payoffs came from.
SWEEP_ID, SWEEP_CELL, PAYOFF_RUN = "sweep_id", "sweep_cell", "payoff_run"
_EXTRA_KEYS = (SWEEP_ID, SWEEP_CELL, PAYOFF_RUN)


def settings_config(settings: EvolutionSettings) -> dict[str, Any]:
    """The settings as stored in ``config_json``: every field, defaults filled, in the form
    :meth:`EvolutionSettings.model_validate` reads back."""
    return settings.model_dump(mode="json")


class EvolutionWriter:
    """Writes one evolution run, generation by generation. Pass :meth:`on_generation` to ``evolve`` and
    call :meth:`finish` at the end (with the trajectory, to store the payoff table the dynamics used).

    Fixations are found here, from the counts as they arrive: a generation at which one player has every
    individual and the previous generation had not is a fixation event (the first is the trajectory's).
    """

    def __init__(self, writer: RunWriter, settings: EvolutionSettings) -> None:
        self.writer = writer
        self.settings = settings
        self.players = list(settings.players)
        self.replicator = settings.dynamics == Dynamics.replicator
        self._rows: list[tuple[int, np.ndarray]] = []
        self._fixations: list[tuple[int, str]] = []
        self._fixed: int | None = None  # the player whose fixation is under way, by index
        self._last_flush = time.monotonic()
        self.payoffs_written = False
        self.first_fixation: Fixation | None = None

    @property
    def run_id(self) -> str:
        return self.writer.run_id

    @property
    def path(self) -> Path:
        return self.writer.path

    @classmethod
    def create(
        cls,
        results_dir: Path,
        run_id: str,
        settings: EvolutionSettings,
        *,
        overwrite: bool = False,
        sweep_id: str | None = None,
        sweep_cell: dict[str, Any] | None = None,
        payoff_run: str | None = None,
    ) -> EvolutionWriter:
        """A new results file holding the run row (status ``running``) of an evolution run.

        ``sweep_id``/``sweep_cell``: the sweep the run is a cell × seed of, and the settings that cell varies;
        ``payoff_run``: the tournament run whose games gave the payoff table. All three go to ``config_json``.
        """
        writer = RunWriter.create(results_dir, run_id, overwrite=overwrite)
        config = settings_config(settings)
        config.update({SWEEP_ID: sweep_id, SWEEP_CELL: sweep_cell, PAYOFF_RUN: payoff_run})
        try:
            writer.start_run(
                kind=KIND, config=config, seed=settings.seed, games_planned=0, collapse_k=0, collapse_threshold=0.0
            )
        except duckdb.Error as exc:
            writer.close()
            raise write_error(exc, writer.path, run_id) from None
        return cls(writer, settings)

    # -- generations ----------------------------------------------------------------------
    def on_generation(self, generation: int, population: np.ndarray) -> None:
        """Buffer the population after ``generation`` (``evolve``'s callback); committed every quarter second."""
        row = np.array(population, copy=True)
        self._rows.append((generation, row))
        if not self.replicator:
            alive = np.flatnonzero(row)
            if len(alive) == 1 and self._fixed != int(alive[0]):
                self._fixations.append((generation, self.players[int(alive[0])]))
                if self.first_fixation is None:
                    self.first_fixation = Fixation(generation, self.players[int(alive[0])])
                self._fixed = int(alive[0])
            elif len(alive) > 1:
                self._fixed = None
        now = time.monotonic()
        if now - self._last_flush >= FLUSH_SECONDS or len(self._rows) * len(self.players) >= FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        """Write the buffered generations and fixations in one transaction."""
        self._last_flush = time.monotonic()
        if not self._rows:
            return
        k = len(self.players)
        generations = np.repeat(np.fromiter((g for g, _ in self._rows), np.int32, len(self._rows)), k)
        values = np.concatenate([r for _, r in self._rows])
        frame: dict[str, np.ndarray] = {
            "generation": generations,
            "player": np.tile(np.asarray(self.players, dtype=object), len(self._rows)),
        }
        if self.replicator:
            frame["count"] = np.full(len(values), None, dtype=object)
            frame["share"] = values.astype(np.float64)
        else:
            frame["count"] = values.astype(np.int32)
            frame["share"] = np.full(len(values), None, dtype=object)
        con = self.writer.con
        try:
            with transaction(con, lambda exc: write_error(exc, self.path, self.run_id)):
                con.register("_pdb_population", frame)
                con.execute(
                    "INSERT INTO population (run_id, generation, player, count, share) "
                    "SELECT ?, generation, player, count::INTEGER, share::DOUBLE FROM _pdb_population",
                    [self.run_id],
                )
                if self._fixations:
                    con.executemany(
                        "INSERT INTO fixation (run_id, generation, player) VALUES (?, ?, ?)",
                        [[self.run_id, g, p] for g, p in self._fixations],
                    )
        finally:
            con.unregister("_pdb_population")
        self._rows.clear()
        self._fixations.clear()
        self.writer.committed()

    # -- the payoff table ----------------------------------------------------------------
    def write_payoffs(self, table: PayoffTable, *, source_run: str | None = None) -> None:
        """Store the payoff table (once): a supplied one as soon as it is known, a played one at the end."""
        if self.payoffs_written:
            return
        rows = [
            [
                self.run_id,
                p,
                o,
                None if np.isnan(table.values[i, j]) else float(table.values[i, j]),
                int(table.matches[i, j]),
                table.source.value,
                source_run,
            ]
            for i, p in enumerate(table.players)
            for j, o in enumerate(table.players)
        ]
        columns = ("run_id", "player", "opponent", "payoff", "matches", "source", "source_run")
        self._insert("payoff_table", columns, rows)
        self.payoffs_written = True

    def write_phases(self, phases: tuple[PhaseScores, ...]) -> None:
        """Store each phase's tallies (squared_share), one row per player present in the phase's population."""
        rows = [
            [self.run_id, phase.generation, p, float(phase.points[i]), int(phase.rounds[i]), int(phase.matches[i])]
            for phase in phases
            for i, p in enumerate(self.players)
            if phase.matches[i] > 0
        ]
        if rows:
            self._insert("phase_scores", ("run_id", "generation", "player", "points", "rounds", "matches"), rows)

    def _insert(self, table: str, columns: tuple[str, ...], rows: list[list[Any]]) -> None:
        """Insert ``rows`` into ``table``; a failed write says what happened, as every write of a run does."""
        try:
            self.writer.con.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows
            )
        except duckdb.Error as exc:
            raise write_error(exc, self.path, self.run_id) from None

    def finish(
        self, status: RunStatus, error: str | None = None, *, trajectory: Trajectory | None = None
    ) -> tuple[RunStatus, str | None]:
        """Write what is buffered (and the trajectory's payoff table and phase tallies) and end the run with
        ``status``."""
        if trajectory is not None:
            self.write_payoffs(trajectory.payoffs)
            self.write_phases(trajectory.phases)
        try:
            self.flush()
        except StoreError as exc:
            status, error = (
                RunStatus.FAILED,
                f"{error + '; ' if error else ''}could not write the last generations: {exc}",
            )
        return self.writer.finish(status, error)

    def close(self) -> None:
        self.writer.close()

    def __enter__(self) -> EvolutionWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_trajectory(
    results_dir: Path,
    run_id: str,
    settings: EvolutionSettings,
    trajectory: Trajectory,
    *,
    overwrite: bool = False,
    sweep_id: str | None = None,
    sweep_cell: dict[str, Any] | None = None,
    payoff_run: str | None = None,
) -> Path:
    """Store a whole trajectory evolved elsewhere (a Ray worker) as a complete run; returns its file."""
    with EvolutionWriter.create(
        results_dir,
        run_id,
        settings,
        overwrite=overwrite,
        sweep_id=sweep_id,
        sweep_cell=sweep_cell,
        payoff_run=payoff_run,
    ) as writer:
        writer.write_payoffs(trajectory.payoffs, source_run=payoff_run)
        writer.write_phases(trajectory.phases)
        for generation, row in enumerate(trajectory.population):
            writer.on_generation(generation, row)
        writer.finish(RunStatus.COMPLETE)
        return writer.path


# -- reading ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EvolutionRun:
    """An evolution run as stored: its settings, state, what it belongs to, and how far it got."""

    run_id: str
    status: RunStatus
    created_at: datetime
    finished_at: datetime | None
    settings: EvolutionSettings
    generations: int  # generations recorded after the initial population (-1: none recorded)
    fixation: Fixation | None  # the first
    sweep_id: str | None = None
    sweep_cell: dict[str, Any] | None = None
    payoff_run: str | None = None
    error: str | None = None


def _run(row: dict[str, Any]) -> EvolutionRun:
    config = json.loads(row["config_json"])
    extras = {key: config.pop(key, None) for key in _EXTRA_KEYS}
    fixation = None if row["fix_player"] is None else Fixation(int(row["fix_generation"]), row["fix_player"])
    return EvolutionRun(
        row["run_id"],
        RunStatus(row["status"]),
        row["created_at"],
        row["finished_at"],
        EvolutionSettings.from_stored(config),
        int(row["last_generation"]),
        fixation,
        extras[SWEEP_ID],
        extras[SWEEP_CELL],
        extras[PAYOFF_RUN],
        row["error"],
    )


_RUNS_SQL = """
    SELECT r.run_id, r.status, r.created_at, r.finished_at, r.config_json, r.error,
           coalesce((SELECT max(generation) FROM population p WHERE p.run_id = r.run_id), -1) AS last_generation,
           f.player AS fix_player, f.generation AS fix_generation
    FROM runs r LEFT JOIN time_to_fixation f USING (run_id)
    WHERE r.kind = 'evolution' {where}
    ORDER BY r.created_at DESC, r.run_id"""


def list_evolution_runs(results_dir: Path, *, sweep_id: str | None = None) -> list[EvolutionRun]:
    """The evolution runs of ``results_dir`` (those of one sweep, if given), newest first."""
    with Catalog(results_dir) as cat:
        where, params = ("AND r.config_json->>'sweep_id' = ?", [sweep_id]) if sweep_id else ("", [])
        rows = cat.records(_RUNS_SQL.format(where=where), params)
        for row in rows:  # a run no process holds is no longer running (Catalog.shown_status)
            row["status"] = cat.shown_status(row["run_id"], row["status"])
    return [_run(r) for r in rows]


def held_runs(results_dir: Path, run_ids: list[str]) -> set[str]:
    """Those of ``run_ids`` whose file a writer holds open now: a process is playing them (a ``running`` run
    that no process holds was cut off, by kill -9 or a crash)."""
    if not run_ids:
        return set()
    with Catalog(results_dir, run_ids) as cat:
        return {path.stem for path in cat.busy}


def read_evolution(results_dir: Path, run_id: str) -> tuple[EvolutionRun, Trajectory]:
    """An evolution run and its trajectory, as stored.

    The trajectory has every generation recorded (an interrupted run: those played before it stopped). Its
    payoff table is the stored one; a run stopped before its table was known (one the dynamics played as
    they went) has a table of NaN with 0 matches. Its phases are the stored phase tallies (squared_share runs).
    """
    with Catalog(results_dir, [run_id]) as cat:
        if not cat.attached:
            reason = cat.skipped[0][1] if cat.skipped else "unknown reason"
            raise StoreError(f"cannot read run {run_id!r}: {reason}.")
        rows = cat.records(_RUNS_SQL.format(where="AND r.run_id = ?"), [run_id])
        if not rows:
            kind = cat.query("SELECT kind FROM runs WHERE run_id = ?", [run_id])[1]
            raise RunNotFoundError(
                f"run {run_id!r} is {'a ' + kind[0][0] + ' run' if kind else 'not in ' + str(results_dir)}, "
                "not an evolution run; list evolution runs with "
                "`pdbench sql \"select run_id, status from runs where kind = 'evolution'\"`."
            )
        rows[0]["status"] = cat.shown_status(run_id, rows[0]["status"])
        run = _run(rows[0])
        _, population = cat.query(
            "SELECT generation, player, count, share FROM population WHERE run_id = ? ORDER BY generation", [run_id]
        )
        _, payoffs = cat.query(
            "SELECT player, opponent, payoff, matches, source FROM payoff_table WHERE run_id = ?", [run_id]
        )
        _, phases = cat.query(
            "SELECT generation, player, points, rounds, matches FROM phase_scores WHERE run_id = ? ORDER BY generation",
            [run_id],
        )
    return run, _trajectory(run, population, payoffs, phases)


def _phases(players: tuple[str, ...], rows: list[tuple[Any, ...]]) -> tuple[PhaseScores, ...]:
    """The stored phase tallies, one :class:`PhaseScores` per phase (players absent from it at 0)."""
    index = {p: i for i, p in enumerate(players)}
    tallies: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for generation, player, points, rounds, matches in rows:
        arrays = tallies.setdefault(
            int(generation),
            (np.zeros(len(players)), np.zeros(len(players), np.int64), np.zeros(len(players), np.int64)),
        )
        for array, value in zip(arrays, (points, rounds, matches), strict=True):
            array[index[player]] = value
    return tuple(PhaseScores(g, *arrays) for g, arrays in sorted(tallies.items()))


def _trajectory(
    run: EvolutionRun,
    population: list[tuple[Any, ...]],
    payoffs: list[tuple[Any, ...]],
    phases: list[tuple[Any, ...]],
) -> Trajectory:
    settings = run.settings
    players = tuple(settings.players)
    index = {p: i for i, p in enumerate(players)}
    k = len(players)
    replicator = settings.dynamics == Dynamics.replicator
    rows = run.generations + 1
    array = np.zeros((rows, k), dtype=np.float64 if replicator else np.int64)
    for generation, player, count, share in population:
        array[generation, index[player]] = share if replicator else count
    values = np.full((k, k), np.nan)
    matches = np.zeros((k, k), dtype=np.int64)
    source = PayoffSource.supplied
    for player, opponent, payoff, n, src in payoffs:
        values[index[player], index[opponent]] = np.nan if payoff is None else payoff
        matches[index[player], index[opponent]] = n
        source = PayoffSource(src)
    if not payoffs:
        source = _expected_source(settings)
    replicates = settings.replicates if source == PayoffSource.estimated else None
    table = PayoffTable(players, values, matches, source, replicates)
    return Trajectory(
        players, array, None if replicator else settings.size, run.fixation, table, _phases(players, phases)
    )


def _expected_source(settings: EvolutionSettings) -> PayoffSource:
    """How the table of a run stopped before it was stored was being obtained (its cells are unknown)."""
    if settings.models:
        return PayoffSource.supplied
    if settings.dynamics == Dynamics.squared_share:  # every match played by the phases, none ahead
        return PayoffSource.per_generation
    random = (
        settings.noise > 0.0
        or settings.observation_noise > 0.0
        or settings.game_horizon.random_length
        or any(spec is not None and spec.cls.stochastic for spec in settings.specs)
    )
    if not random:
        return PayoffSource.played_once
    if settings.payoff_mode == PayoffMode.estimated or settings.dynamics == Dynamics.replicator:
        return PayoffSource.estimated
    return PayoffSource.per_generation


# -- payoff games of a population with models ---------------------------------------------
def stored_run(results_dir: Path, run_id: str) -> tuple[str, str, str] | None:
    """``(kind, status, config_json)`` of run ``run_id``, or None if its file holds no readable run."""
    with Catalog(results_dir, [run_id]) as cat:
        if not cat.attached:
            return None
        rows = cat.query("SELECT kind, status, config_json FROM runs WHERE run_id = ?", [run_id])[1]
    return (str(rows[0][0]), str(rows[0][1]), str(rows[0][2])) if rows else None


def _run_rows(results_dir: Path, run_id: str, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` over run ``run_id`` alone; a StoreError saying why if its file cannot be read."""
    with Catalog(results_dir, [run_id]) as cat:
        if not cat.attached:
            reason = cat.skipped[0][1] if cat.skipped else "unknown reason"
            raise StoreError(f"cannot read run {run_id!r}: {reason}.")
        return cat.query(sql, params)[1]


def matchup_means(results_dir: Path, run_id: str) -> dict[tuple[str, str], tuple[float, int, float]]:
    """Per (player, opponent) of a tournament run: the mean total payoff of the player's complete games against
    the opponent (a self-play pair: over both seats), the number of those games, and the mean over them of each
    game's payoff per round (the ``matchups`` view)."""
    rows = _run_rows(
        results_dir,
        run_id,
        "SELECT player, opponent, mean_total, games, mean_payoff_per_round FROM matchups WHERE run_id = ?",
        [run_id],
    )
    return {(str(p), str(o)): (float(m), int(n), float(r)) for p, o, m, n, r in rows}


def game_results(results_dir: Path, run_id: str) -> dict[str, tuple[str, float, float, int]]:
    """Per condition of run ``run_id`` whose conditions are one game each (the phase runs of a squared_share
    population with language models): its game's ``(status, score_a, score_b, rounds_played)``."""
    rows = _run_rows(
        results_dir,
        run_id,
        "SELECT condition, status, score_a, score_b, rounds_played FROM games WHERE run_id = ? AND replicate = 0",
        [run_id],
    )
    return {str(c): (str(s), float(a), float(b), int(n)) for c, s, a, b, n in rows}


def run_cost(results_dir: Path, run_id: str) -> float:
    """Dollars run ``run_id`` spent on calls, those of games played again included (what a budget counts)."""
    rows = _run_rows(
        results_dir,
        run_id,
        "SELECT coalesce(sum(cost_usd), 0) FROM (SELECT cost_usd FROM calls WHERE run_id = ? "
        "UNION ALL SELECT cost_usd FROM superseded_calls WHERE run_id = ?)",
        [run_id, run_id],
    )
    return float(rows[0][0]) if rows else 0.0


def stored_settings(results_dir: Path, run_id: str) -> tuple[str, EvolutionSettings] | None:
    """``(status, settings)`` of evolution run ``run_id``; None if its file holds no readable evolution run."""
    stored = stored_run(results_dir, run_id)
    if stored is None or stored[0] != KIND:
        return None
    config = {k: v for k, v in json.loads(stored[2]).items() if k not in _EXTRA_KEYS}
    return stored[1], EvolutionSettings.from_stored(config)
