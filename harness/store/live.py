"""Recording games as they are played, for runs with model players.

A model game takes minutes, so it is recorded round by round: the game's row when it starts
(status ``running``), each round together with the calls that produced it (and the answers of
a comprehension check asked in it), and the game's final status. Everything is buffered in
memory and written in one transaction per flush, so a round is never stored without its calls,
nor a call without its round. A run killed at any moment leaves whole rounds and ``running``
games, which ``pdbench resume`` replays.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

import duckdb
import numpy as np

from harness.calls.record import CallRecord
from harness.config.plan import GamePlan
from harness.game.match import Match
from harness.players.model.comprehension import ComprehensionAnswer
from harness.providers.base import FailureKind
from harness.providers.keys import scrub
from harness.states import GameStatus
from harness.store.rows import GAME_COLUMNS, game_row
from harness.store.run_file import utcnow, write_error
from harness.store.transaction import transaction
from harness.store.writer import RunWriter

_END_COLUMNS = ("game_id", "status", "rounds_played", "score_a", "score_b", "error", "failure")
_CALL_COLUMNS = tuple(f.name for f in fields(CallRecord))
_call_row = attrgetter(*_CALL_COLUMNS)  # a record's values in column order (``astuple`` deep-copies each one)
_ROUND_COLUMNS = (
    "game_id",
    "round",
    "action_a",
    "action_b",
    "intended_a",
    "intended_b",
    "payoff_a",
    "payoff_b",
    "flagged_a",
    "flagged_b",
    "observed_a",
    "observed_b",
)
_ANSWER_COLUMNS = tuple(f.name for f in fields(ComprehensionAnswer))
_answer_row = attrgetter(*_ANSWER_COLUMNS)


@dataclass(frozen=True, slots=True)
class LiveBatch:
    starts: list[tuple[Any, ...]]
    rounds: list[tuple[Any, ...]]
    calls: list[CallRecord]
    answers: list[ComprehensionAnswer]
    ends: list[tuple[Any, ...]]


class LiveRecorder:
    """Buffers game starts, rounds with their calls, and game ends; ``flush`` writes them."""

    def __init__(self, writer: RunWriter) -> None:
        self.writer = writer
        self.run_id = writer.run_id
        self._starts: list[tuple[Any, ...]] = []
        self._rounds: list[tuple[Any, ...]] = []
        self._calls: list[CallRecord] = []
        self._answers: list[ComprehensionAnswer] = []
        self._ends: list[tuple[Any, ...]] = []

    @property
    def pending(self) -> int:
        return len(self._starts) + len(self._rounds) + len(self._calls) + len(self._answers) + len(self._ends)

    def game_started(self, plan: GamePlan, planned_rounds: int) -> None:
        self._starts.append(game_row(self.run_id, plan, planned_rounds, GameStatus.RUNNING))

    def round_played(
        self, game_id: int, match: Match, calls: list[CallRecord], answers: list[ComprehensionAnswer] | None = None
    ) -> None:
        """The last round of ``match``, the calls made for it and the comprehension answers given in it, as one
        unit."""
        i = match.rounds_played - 1
        self._rounds.append(
            (
                game_id,
                i + 1,
                match.moves_a[i],
                match.moves_b[i],
                match.intended_a[i],
                match.intended_b[i],
                match.payoffs_a[i],
                match.payoffs_b[i],
                _flagged(match.flagged_a, i + 1),
                _flagged(match.flagged_b, i + 1),
                match.observed_a[i] if match.observation > 0.0 else None,  # NULL: as played
                match.observed_b[i] if match.observation > 0.0 else None,
            )
        )
        self._calls.extend(calls)
        self._answers.extend(answers or ())

    def calls_without_round(self, calls: list[CallRecord], answers: list[ComprehensionAnswer] | None = None) -> None:
        """Calls (and comprehension answers) of a round that was never played (the game failed or stopped in it):
        they were made, and perhaps paid for."""
        self._calls.extend(calls)
        self._answers.extend(answers or ())

    def game_ended(
        self,
        game_id: int,
        match: Match,
        status: GameStatus,
        error: str | None,
        failure: FailureKind | None = None,
    ) -> None:
        """How a game ended; ``failure`` says why a ``failed`` game failed (what resume does with it). ``error``
        may be any exception's text: it is scrubbed of API keys before it is stored (see harness.providers.keys)."""
        error = scrub(error) if error else error
        kind = None if failure is None else failure.value
        self._ends.append((game_id, status.value, match.rounds_played, match.score_a, match.score_b, error, kind))

    def restore_calls(self, records: list[CallRecord]) -> int:
        """Write the calls a crashed session paid for but never recorded (rebuilt from the cache's ledger)
        to ``superseded_calls``: their games are replayed from the start, so they belong to no round, but
        they were paid for and count towards the run's cost. Records already in the file are skipped;
        returns how many were written."""
        con = self.writer.con
        ids = sorted({r.game_id for r in records})
        if not ids:
            return 0
        present = {
            (g, r, p, u, a, c)
            for g, r, p, u, a, c in con.execute(
                "SELECT game_id, round, player, purpose, attempt, created_at FROM calls WHERE run_id = ? "
                "AND list_contains(?, game_id) UNION ALL SELECT game_id, round, player, purpose, attempt, created_at "
                "FROM superseded_calls WHERE run_id = ? AND list_contains(?, game_id)",
                [self.run_id, ids, self.run_id, ids],
            ).fetchall()
        }
        missing = [
            r for r in records if (r.game_id, r.round, r.player, r.purpose, r.attempt, r.created_at) not in present
        ]
        if not missing:
            return 0
        try:
            con.register("_pdb_restored", _columns([_call_row(c) for c in missing], _CALL_COLUMNS))
            con.execute(
                f"INSERT INTO superseded_calls (run_id, {', '.join(_CALL_COLUMNS)}, superseded_at) "
                f"SELECT ?, {', '.join(_CALL_COLUMNS)}, ? FROM _pdb_restored",
                [self.run_id, utcnow()],
            )
        except duckdb.Error as exc:
            raise write_error(exc, self.writer.path, self.run_id) from None
        finally:
            with contextlib.suppress(duckdb.Error):
                con.unregister("_pdb_restored")
        return len(missing)

    def take_batch(self) -> LiveBatch:
        """Hand over what is buffered (in the event loop's thread), to be written by ``write``."""
        batch = LiveBatch(self._starts, self._rounds, self._calls, self._answers, self._ends)
        self._starts, self._rounds, self._calls, self._answers, self._ends = [], [], [], [], []
        return batch

    def flush(self) -> None:
        self.write(self.take_batch())

    def write(self, batch: LiveBatch) -> None:
        """Write a batch in one transaction (blocking; may run in a worker thread), then a live copy of the run
        if a reader waits for one, and a checkpoint if one is due (:meth:`RunWriter.committed`). The scheduler
        calls this every 0.25 s, batch or not, so a reader is answered even while no game records anything."""
        self._write(batch)
        self.writer.committed()

    def _insert(self, table: str, rows: list[tuple[Any, ...]], columns: tuple[str, ...]) -> None:
        """Append ``rows`` (tuples in ``columns`` order) to ``table`` under this run's id, as one insert."""
        names = ", ".join(columns)
        self.writer.con.register(f"_pdb_live_{table}", _columns(rows, columns))
        self.writer.con.execute(
            f"INSERT INTO {table} (run_id, {names}) SELECT ?, {names} FROM _pdb_live_{table}", [self.run_id]
        )

    def _write(self, batch: LiveBatch) -> None:
        starts, rounds, calls, answers, ends = batch.starts, batch.rounds, batch.calls, batch.answers, batch.ends
        if not (starts or rounds or calls or answers or ends):
            return
        con = self.writer.con
        try:
            with transaction(con, lambda exc: write_error(exc, self.writer.path, self.run_id)):
                if starts:
                    con.register("_pdb_live_starts", _columns(starts, GAME_COLUMNS))
                    con.execute(f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) SELECT * FROM _pdb_live_starts")
                if rounds:
                    self._insert("round_rows", rounds, _ROUND_COLUMNS)
                if calls:
                    self._insert("calls", [_call_row(c) for c in calls], _CALL_COLUMNS)
                if answers:
                    self._insert("comprehension", [_answer_row(a) for a in answers], _ANSWER_COLUMNS)
                if ends:
                    con.register("_pdb_live_ends", _columns(ends, _END_COLUMNS))
                    con.execute(
                        "UPDATE games SET status = e.status, rounds_played = e.rounds_played, score_a = e.score_a, "
                        "score_b = e.score_b, error = e.error, failure = e.failure FROM _pdb_live_ends e "
                        "WHERE games.run_id = ? AND games.game_id = e.game_id",
                        [self.run_id],
                    )
        finally:
            for name in (
                "_pdb_live_starts",
                "_pdb_live_rounds",
                "_pdb_live_calls",
                "_pdb_live_answers",
                "_pdb_live_ends",
            ):
                with contextlib.suppress(duckdb.Error):
                    con.unregister(name)


def _flagged(flags: list[int], round_no: int) -> bool:
    return bool(flags) and flags[-1] == round_no


def _columns(rows: list[tuple[Any, ...]], names: tuple[str, ...]) -> dict[str, np.ndarray]:
    return {name: np.asarray(column, dtype=object) for name, column in zip(names, zip(*rows, strict=True), strict=True)}
