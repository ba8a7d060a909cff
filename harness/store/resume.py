"""What ``pdbench resume`` reads back from a run's results file, and the rows it clears before playing again.

A resume keeps complete games, and failed ones unless they failed on a cause that may have passed
(``games.failure`` retryable or authentication) or the user asks to retry every failure; every other
game (running, interrupted, failed on a passing cause) is played again from its first round.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.calls.record import Answer
from harness.errors import RunNotFoundError, StoreError
from harness.providers.base import FailureKind
from harness.states import CallOutcome, GameStatus, RunStatus
from harness.store.run_file import utcnow, write_error
from harness.store.schema import missing_run
from harness.store.transaction import transaction
from harness.store.writer import RunWriter

if TYPE_CHECKING:
    import numpy as np


def _kept(retry_failed: bool) -> str:
    """The games a resume keeps, as a condition on ``games``."""
    complete = f"status = '{GameStatus.COMPLETE}'"
    if retry_failed:
        return complete
    permanent = FailureKind.PERMANENT.value
    return f"{complete} OR (status = '{GameStatus.FAILED}' AND coalesce(failure, '{permanent}') = '{permanent}')"


def run_state(writer: RunWriter) -> tuple[RunStatus, str]:
    """The run's status and stored config JSON; :class:`RunNotFoundError` (saying why) if the file holds no such run."""
    row = writer.con.execute("SELECT status, config_json, kind FROM runs WHERE run_id = ?", [writer.run_id]).fetchone()
    if row is None:
        raise RunNotFoundError(missing_run(writer.con, writer.path, writer.run_id))
    if row[2] == "evolution":
        raise StoreError(
            f"run {writer.run_id} is an evolution run, which is not resumed: it is reproduced whole by its settings "
            "and seed. Run `pdbench evolve` again with them (they are in its runs.config_json) under a new run id, "
            "or with --overwrite; its generations played so far stay readable as they are."
        )
    return RunStatus(row[0]), str(row[1])


def games_planned(writer: RunWriter) -> int:
    row = writer.con.execute("SELECT games_planned FROM runs WHERE run_id = ?", [writer.run_id]).fetchone()
    return int(row[0]) if row else 0


def finished_game_ids(writer: RunWriter, *, retry_failed: bool = False) -> np.ndarray:
    """The ids of the games a resume keeps, ascending, as 32-bit integers: an array rather than Python
    objects, so it costs 4 bytes per game."""
    import numpy as np  # only a resume needs it: a new run's start does not load numpy

    ids = writer.con.execute(
        f"SELECT game_id FROM games WHERE run_id = ? AND ({_kept(retry_failed)}) ORDER BY game_id", [writer.run_id]
    ).fetchnumpy()["game_id"]
    return np.asarray(ids, dtype=np.int32)


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a resumed run had recorded, for its live progress to start from: the games it keeps, by condition and
    rounds played (``{condition: {rounds: games}}``), and the rounds and comprehension answers recorded in each
    game it plays again (``{game_id: (condition, rounds, answers)}``), read before those are cleared."""

    kept: dict[str, Counter[int]] = field(default_factory=dict)
    replayed: dict[int, tuple[str, int, int]] = field(default_factory=dict)

    def games_kept(self) -> int:
        return sum(n for by_rounds in self.kept.values() for n in by_rounds.values())


def recorded(writer: RunWriter, *, retry_failed: bool = False) -> Recorded:
    """What the run had recorded before a resume (see :class:`Recorded`); call it before :func:`discard_unfinished`."""
    con, run_id, kept = writer.con, writer.run_id, _kept(retry_failed)
    out = Recorded()
    for condition, rounds, n in con.execute(
        f"SELECT condition, rounds_played, count(*) FROM games WHERE run_id = ? AND ({kept}) GROUP BY ALL",
        [run_id],
    ).fetchall():
        out.kept.setdefault(str(condition), Counter())[int(rounds)] += int(n)
    for game_id, condition, rounds, answers in con.execute(
        "SELECT g.game_id, g.condition, "
        "(SELECT count(*) FROM rounds r WHERE r.run_id = g.run_id AND r.game_id = g.game_id), "
        "(SELECT count(*) FROM comprehension c WHERE c.run_id = g.run_id AND c.game_id = g.game_id) "
        f"FROM games g WHERE g.run_id = ? AND NOT ({kept})",
        [run_id],
    ).fetchall():
        out.replayed[int(game_id)] = (str(condition), int(rounds), int(answers))
    return out


def failures(writer: RunWriter) -> dict[FailureKind, tuple[int, str]]:
    """Failed games by ``failure`` kind: how many, and the reason of the first."""
    rows = writer.con.execute(
        f"SELECT coalesce(failure, '{FailureKind.PERMANENT.value}'), count(*), arg_min(error, game_id) FROM games "
        f"WHERE run_id = ? AND status = '{GameStatus.FAILED}' GROUP BY ALL",
        [writer.run_id],
    ).fetchall()
    return {FailureKind(kind): (int(n), str(first)) for kind, n, first in rows}


def discard_unfinished(writer: RunWriter, *, retry_failed: bool = False) -> list[int]:
    """Delete the rows of the games a resume replays from their first round. Their rounds and comprehension
    answers are asked again; their calls move to ``superseded_calls`` (they were sent, and may have been paid
    for). Returns the games' ids."""
    con, run_id, kept = writer.con, writer.run_id, _kept(retry_failed)
    ids = [
        int(r[0])
        for r in con.execute(
            f"SELECT game_id FROM games WHERE run_id = ? AND NOT ({kept}) ORDER BY game_id", [run_id]
        ).fetchall()
    ]
    if not ids:
        return ids
    replayed = f"game_id NOT IN (SELECT game_id FROM games WHERE run_id = ? AND ({kept}))"
    with transaction(con, lambda exc: write_error(exc, writer.path, run_id)):
        con.execute(
            "INSERT INTO superseded_calls BY NAME SELECT *, ? AS superseded_at FROM calls "
            f"WHERE run_id = ? AND {replayed}",
            [utcnow(), run_id, run_id],
        )
        for table in ("calls", "round_rows", "game_moves", "comprehension"):
            con.execute(f"DELETE FROM {table} WHERE run_id = ? AND {replayed}", [run_id, run_id])
        con.execute(f"DELETE FROM games WHERE run_id = ? AND NOT ({kept})", [run_id])
    return ids


def recorded_answers(writer: RunWriter, game_ids: list[int]) -> dict[tuple[str, str, str], Answer]:
    """The answers the run received in ``game_ids`` (games a resume replays), by (provider, model, request
    JSON): a replayed request is the same request, so its recorded answer serves it when the response cache
    has lost it. A refusal is one too, and stays one (its reason is the call's ``error``)."""
    if not game_ids:
        return {}
    rows = writer.con.execute(
        "SELECT provider, model, request_json::VARCHAR, response_text, outcome, error FROM superseded_calls "
        "WHERE run_id = ? AND list_contains(?, game_id) AND response_text IS NOT NULL "
        f"AND outcome IN ('{CallOutcome.OK}', '{CallOutcome.UNPARSEABLE}', '{CallOutcome.REFUSED}')",
        [writer.run_id, game_ids],
    ).fetchall()
    return {(p, m, r): Answer(t, e if o == CallOutcome.REFUSED else None) for p, m, r, t, o, e in rows}


def spent(writer: RunWriter) -> float:
    """Dollars already spent by this run, superseded calls included (seeds --max-cost on resume)."""
    row = writer.con.execute(
        "SELECT coalesce(sum(cost_usd), 0) FROM (SELECT cost_usd FROM calls WHERE run_id = ? "
        "UNION ALL SELECT cost_usd FROM superseded_calls WHERE run_id = ?)",
        [writer.run_id, writer.run_id],
    ).fetchone()
    return float(row[0]) if row else 0.0
