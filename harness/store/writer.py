"""The one writer of a run's results file: buffered, batched, transactional.

Finished games are buffered as columns and written in one transaction per batch
(games and their rounds together), so a crash or Ctrl-C leaves every flushed game
whole and never a game without its rounds. Columnar buffers go to DuckDB as NumPy
arrays: a 400,000-round tournament is stored in a fraction of a second.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from harness import __version__
from harness.errors import ConfigError, DiskFull, RunExistsError, StoreError
from harness.keys import scrub
from harness.match import Match
from harness.plan import GamePlan
from harness.store.schema import SCHEMA_VERSION, create_schema, damaged, is_damage, migrate

FLUSH_ROUNDS = 200_000
FLUSH_GAMES = 2_000

MEMORY_LIMIT_ENV = "PDBENCH_DUCKDB_MEMORY"
DEFAULT_MEMORY_LIMIT = "128MB"
MIN_MEMORY_LIMIT = "64MB"
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}  # fmt: skip  # as DuckDB reads them
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)", re.IGNORECASE)

# The games a resume keeps (SQL over ``games``): complete ones, and failed ones unless they failed on a
# cause that may have passed (retryable, authentication) or the user asks to retry every failure.
_KEPT_ON_RESUME = {
    "permanent": "status = 'complete' OR (status = 'failed' AND coalesce(failure, 'permanent') = 'permanent')",
    "all_failures": "status = 'complete'",
}


def _disk_full(exc: duckdb.Error) -> bool:
    """DuckDB reports a full disk only in its message, with the system's words for ENOSPC."""
    return os.strerror(errno.ENOSPC) in str(exc) or "disk is full" in str(exc).lower()


def write_error(exc: duckdb.Error, path: Path, run_id: str) -> StoreError:
    """A failed write to a results file, as the user should read it: a full disk says so
    (:class:`DiskFull`, which stops the run as interrupted), anything else names the error."""
    if is_damage(exc):
        return StoreError(damaged(str(path), exc))
    if _disk_full(exc):
        return DiskFull(f"the disk holding {path} is full. Every game recorded before is kept; free some space, "
                        f"then `pdbench resume {run_id}` finishes the run.")  # fmt: skip
    return StoreError(f"writing results to {path} failed: {exc}. Rounds written before are kept; check free disk "
                      f"space and permissions, then `pdbench resume {run_id}`.")  # fmt: skip


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def run_path(results_dir: Path, run_id: str) -> Path:
    return results_dir / f"{run_id}.duckdb"


def ensure_results_dir(results_dir: Path) -> Path:
    """Create the results folder if needed and check it can be written, with a clear error if not."""
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the results folder {results_dir}: {exc.strerror}. "
            f"Choose another with --results DIR or PDBENCH_RESULTS."
        ) from None
    if not results_dir.is_dir() or not os.access(results_dir, os.W_OK | os.X_OK):
        raise StoreError(
            f"the results folder {results_dir} is not a writable folder. "
            f"Fix its permissions or choose another with --results DIR."
        )
    return results_dir


class RunWriter:
    """Owns one run's DuckDB file for writing. Use as a context manager."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, run_id: str) -> None:
        self.path = path
        self.con = con
        self.run_id = run_id
        self._games: list[tuple[Any, ...]] = []  # one row per game: a single append, so never half-added
        self._rounds = _RoundBuffer()
        self.games_written = 0
        self.rounds_written = 0

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def create(cls, results_dir: Path, run_id: str, *, overwrite: bool = False) -> RunWriter:
        """A new results file for ``run_id``; refuses an existing run unless ``overwrite``."""
        ensure_results_dir(results_dir)
        path = run_path(results_dir, run_id)
        if path.exists() or path.is_symlink():
            if not overwrite:
                raise RunExistsError(
                    f"a run with id {run_id!r} already exists ({path}). Choose another run id "
                    f"(--run-id or run.run_id), or pass --overwrite to replace it."
                )
            if not path.is_file():
                raise StoreError(f"{path} is not a results file (it is a folder or a link); move it away first.")
            # Taking the file's lock first refuses to delete a run another process is still writing.
            _connect(path).close()
            for p in (path, path.with_name(path.name + ".wal")):
                p.unlink(missing_ok=True)
        con = _connect(path)
        try:
            create_schema(con)
        except duckdb.Error as exc:
            con.close()
            if _disk_full(exc):
                raise write_error(exc, path, run_id) from None
            raise StoreError(f"cannot create the results file {path}: {exc}") from None
        return cls(path, con, run_id)

    @classmethod
    def reopen(cls, path: Path, run_id: str) -> RunWriter:
        """An existing results file, migrated to the current schema (for resuming a run)."""
        con = _connect(path)
        try:
            migrate(con, str(path))
        except duckdb.Error as exc:
            con.close()
            if _disk_full(exc):
                raise write_error(exc, path, run_id) from None
            raise
        except BaseException:
            con.close()
            raise
        return cls(path, con, run_id)

    def discard_unfinished(self, *, retry_failed: bool = False) -> list[int]:
        """Delete the rows of the games a resume replays from their first round: games that did not
        finish (running or interrupted), games that failed on a cause that may have passed (``failure``
        retryable or authentication) and, with ``retry_failed``, games that failed for good as well.
        Their rounds and comprehension answers are asked again; their calls move to ``superseded_calls``
        (they were sent, and may have been paid for). Returns the games' ids."""
        kept = _KEPT_ON_RESUME["all_failures" if retry_failed else "permanent"]
        ids = [r[0] for r in self.con.execute(
            f"SELECT game_id FROM games WHERE run_id = ? AND NOT ({kept}) ORDER BY game_id", [self.run_id]
        ).fetchall()]  # fmt: skip
        if not ids:
            return ids
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute(
                "INSERT INTO superseded_calls BY NAME SELECT *, ? AS superseded_at FROM calls "
                f"WHERE run_id = ? AND game_id NOT IN (SELECT game_id FROM games WHERE run_id = ? AND ({kept}))",
                [utcnow(), self.run_id, self.run_id],
            )
            for table in ("calls", "rounds", "comprehension"):
                self.con.execute(
                    f"DELETE FROM {table} WHERE run_id = ? AND game_id NOT IN "
                    f"(SELECT game_id FROM games WHERE run_id = ? AND ({kept}))",
                    [self.run_id, self.run_id],
                )
            self.con.execute(f"DELETE FROM games WHERE run_id = ? AND NOT ({kept})", [self.run_id])
            self.con.execute("COMMIT")
        except duckdb.Error as exc:
            with contextlib.suppress(duckdb.Error):
                self.con.execute("ROLLBACK")
            raise write_error(exc, self.path, self.run_id) from None
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                self.con.execute("ROLLBACK")
            raise
        return ids

    def recorded_answers(self, game_ids: list[int]) -> dict[tuple[str, str, str], str]:
        """The answers the run received in ``game_ids`` (games a resume replays), by (provider, model,
        request JSON): a replayed request is the same request, so its recorded answer serves it when the
        response cache has lost it."""
        if not game_ids:
            return {}
        rows = self.con.execute(
            "SELECT provider, model, request_json::VARCHAR, response_text FROM superseded_calls "
            "WHERE run_id = ? AND list_contains(?, game_id) AND response_text IS NOT NULL "
            "AND outcome IN ('ok', 'unparseable')",
            [self.run_id, game_ids],
        ).fetchall()
        return {(p, m, r): t for p, m, r, t in rows}

    def finished_game_ids(self, *, retry_failed: bool = False) -> np.ndarray:
        """The ids of the games a resume keeps (see :meth:`discard_unfinished`), ascending, as 32-bit
        integers: an array rather than Python objects, so it costs 4 bytes per game."""
        kept = _KEPT_ON_RESUME["all_failures" if retry_failed else "permanent"]
        ids = self.con.execute(
            f"SELECT game_id FROM games WHERE run_id = ? AND ({kept}) ORDER BY game_id", [self.run_id]
        ).fetchnumpy()["game_id"]
        return np.asarray(ids, dtype=np.int32)

    def finished_per_condition(self, *, retry_failed: bool = False) -> dict[str, int]:
        """How many games a resume keeps in each condition (the live display starts from them)."""
        kept = _KEPT_ON_RESUME["all_failures" if retry_failed else "permanent"]
        return dict(self.con.execute(
            f"SELECT condition, count(*) FROM games WHERE run_id = ? AND ({kept}) GROUP BY condition", [self.run_id]
        ).fetchall())  # fmt: skip

    def failures(self) -> dict[str, tuple[int, str]]:
        """Failed games by ``failure`` kind: how many, and the reason of the first."""
        rows = self.con.execute(
            "SELECT coalesce(failure, 'permanent'), count(*), arg_min(error, game_id) FROM games "
            "WHERE run_id = ? AND status = 'failed' GROUP BY ALL",
            [self.run_id],
        ).fetchall()
        return {kind: (int(n), str(first)) for kind, n, first in rows}

    def created_at(self) -> str:
        """When the run was created (ISO): with the file and run id, what tells this run from an earlier one
        under the same id (``--overwrite``)."""
        row = self.con.execute("SELECT created_at FROM runs WHERE run_id = ?", [self.run_id]).fetchone()
        return "" if row is None else row[0].isoformat()

    def run_state(self) -> tuple[str, str] | None:
        """The run's (status, config JSON), or None if the file holds no such run."""
        row = self.con.execute("SELECT status, config_json FROM runs WHERE run_id = ?", [self.run_id]).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def games_planned(self) -> int:
        row = self.con.execute("SELECT games_planned FROM runs WHERE run_id = ?", [self.run_id]).fetchone()
        return int(row[0]) if row else 0

    def mark_running(self) -> None:
        """A resumed run is running again."""
        try:
            self.con.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, error = NULL WHERE run_id = ?", [self.run_id]
            )
        except duckdb.Error as exc:
            raise write_error(exc, self.path, self.run_id) from None

    def games_and_rounds(self) -> tuple[int, int]:
        """Complete games and recorded rounds of the run (for a summary after a forced stop)."""
        games = self.con.execute(
            "SELECT count(*) FROM games WHERE run_id = ? AND status = 'complete'", [self.run_id]
        ).fetchone()
        rounds = self.con.execute("SELECT count(*) FROM rounds WHERE run_id = ?", [self.run_id]).fetchone()
        return int(games[0]), int(rounds[0])

    def spent(self) -> float:
        """Dollars already spent by this run, superseded calls included (seeds --max-cost on resume)."""
        row = self.con.execute(
            "SELECT coalesce(sum(cost_usd), 0) FROM (SELECT cost_usd FROM calls WHERE run_id = ? "
            "UNION ALL SELECT cost_usd FROM superseded_calls WHERE run_id = ?)",
            [self.run_id, self.run_id],
        ).fetchone()
        return float(row[0])

    # -- the run row -------------------------------------------------------------------
    def start_run(
        self,
        *,
        kind: str,
        config: dict[str, Any],
        seed: int,
        games_planned: int,
        collapse_k: int,
        collapse_threshold: float,
    ) -> None:
        self.con.execute(
            "INSERT INTO runs (run_id, kind, created_at, finished_at, status, config_json, seed, "
            "pdbench_version, schema_version, games_planned, collapse_k, collapse_threshold, error) "
            "VALUES (?, ?, ?, NULL, 'running', ?, ?, ?, ?, ?, ?, ?, NULL)",
            [
                self.run_id,
                kind,
                utcnow(),
                json.dumps(config, sort_keys=True),
                seed,
                __version__,
                SCHEMA_VERSION,
                games_planned,
                collapse_k,
                collapse_threshold,
            ],
        )

    def finish(self, status: str, error: str | None = None) -> tuple[str, str | None]:
        """Flush what is buffered and mark the run ``complete``, ``interrupted`` or ``failed``.

        The status is written even if the flush fails (the run is then ``failed`` with the reason),
        so a results file never claims to be running when nothing is. ``error`` may be any exception's
        text: it is scrubbed of API keys before it is stored (see harness.keys).
        """
        try:
            self.flush()
        except DiskFull as exc:  # not the run's fault: resume plays the games that were not written
            status, error = "interrupted", str(exc)
            self._games.clear()
            self._rounds.clear()
        except Exception as exc:
            status, error = "failed", f"{error + '; ' if error else ''}could not write the last games: {exc}"
            self._games.clear()
            self._rounds.clear()
        error = scrub(error) if error else error
        try:
            self.con.execute(
                "UPDATE runs SET status = ?, finished_at = ?, error = ? WHERE run_id = ?",
                [status, utcnow(), error, self.run_id],
            )
            self.con.execute("CHECKPOINT")
        except duckdb.Error as exc:
            raise write_error(exc, self.path, self.run_id) from None
        return status, error

    # -- games -------------------------------------------------------------------------
    def add_game(
        self, plan: GamePlan, match: Match, planned_rounds: int, status: str = "complete", error: str | None = None
    ) -> None:
        """Buffer one game and all its rounds; written at the next flush."""
        cond = plan.condition
        row = (
            self.run_id, plan.game_id, cond.name, plan.replicate, cond.player_a.name, cond.player_b.name,
            cond.player_a.params_json, cond.player_b.params_json,
            cond.horizon.kind, planned_rounds, cond.horizon.stop_prob, cond.noise, plan.seed, status,
            match.rounds_played, match.score_a, match.score_b, error,
        )  # fmt: skip
        self._rounds.add(plan.game_id, match)
        self._games.append(row)
        if self._rounds.size >= FLUSH_ROUNDS or len(self._games) >= FLUSH_GAMES:
            self.flush()

    def flush(self) -> None:
        """Write buffered games and rounds in one transaction."""
        n_games = len(self._games)
        if n_games == 0:
            return
        n_rounds = self._rounds.size
        games = _game_arrays(self._games)
        rounds = self._rounds.arrays()
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            con.register("_pdb_games", games)
            con.register("_pdb_rounds", rounds)
            con.execute(
                f"INSERT INTO games ({', '.join(_GAME_COLUMNS)}) SELECT {', '.join(_GAME_COLUMNS)} FROM _pdb_games"
            )
            con.execute(
                "INSERT INTO rounds (run_id, game_id, round, action_a, action_b, intended_a, intended_b, "
                "payoff_a, payoff_b) SELECT ?, game_id, round, "
                "if(c_a, 'C'::move, 'D'::move), if(c_b, 'C'::move, 'D'::move), "
                "if(ic_a, 'C'::move, 'D'::move), if(ic_b, 'C'::move, 'D'::move), "
                "payoff_a, payoff_b FROM _pdb_rounds",
                [self.run_id],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise write_error(exc, self.path, self.run_id) from None
        except BaseException:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            raise
        finally:
            con.unregister("_pdb_games")
            con.unregister("_pdb_rounds")
        self._games.clear()
        self._rounds.clear()
        self.games_written += n_games
        self.rounds_written += n_rounds

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_GAME_COLUMNS = (
    "run_id",
    "game_id",
    "condition",
    "replicate",
    "player_a",
    "player_b",
    "params_a",
    "params_b",
    "horizon",
    "planned_rounds",
    "stop_prob",
    "noise",
    "seed",
    "status",
    "rounds_played",
    "score_a",
    "score_b",
    "error",
)
_INT_COLUMNS = {"game_id", "replicate", "planned_rounds", "rounds_played"}
_FLOAT_COLUMNS = {"noise", "score_a", "score_b"}


def _game_arrays(rows: list[tuple[Any, ...]]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for i, col in enumerate(_GAME_COLUMNS):
        values = [row[i] for row in rows]
        if col in _INT_COLUMNS:
            out[col] = np.asarray(values, dtype=np.int32)
        elif col == "seed":
            out[col] = np.asarray(values, dtype=np.int64)
        elif col in _FLOAT_COLUMNS:
            out[col] = np.asarray(values, dtype=np.float64)
        else:
            out[col] = np.asarray(values, dtype=object)
    return out


class _RoundBuffer:
    """Rounds of buffered games, kept compactly: each game's moves as one string per column.

    Each game is one tuple appended at once (so an interrupt never leaves the buffer half-updated).
    Moves cross into DuckDB as boolean arrays ("cooperated?") made from the strings' bytes and
    become 'C'/'D' in SQL: far cheaper than handing DuckDB one Python string per move.
    """

    def __init__(self) -> None:
        self.games: list[tuple[int, str, str, str, str, list[float], list[float]]] = []
        self.size = 0

    def clear(self) -> None:
        self.games = []
        self.size = 0

    def add(self, game_id: int, match: Match) -> None:
        self.games.append((
            game_id, "".join(match.moves_a), "".join(match.moves_b), "".join(match.intended_a),
            "".join(match.intended_b), match.payoffs_a, match.payoffs_b,
        ))  # fmt: skip
        self.size += match.rounds_played

    def arrays(self) -> dict[str, np.ndarray]:
        lengths = np.asarray([len(g[1]) for g in self.games], dtype=np.int64)
        total = int(lengths.sum())
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        out: dict[str, np.ndarray] = {
            "game_id": np.repeat(np.asarray([g[0] for g in self.games], dtype=np.int32), lengths),
            "round": (np.arange(total, dtype=np.int64) - starts + 1).astype(np.int32),
            "payoff_a": np.fromiter(chain.from_iterable(g[5] for g in self.games), np.float64, total),
            "payoff_b": np.fromiter(chain.from_iterable(g[6] for g in self.games), np.float64, total),
        }
        for i, col in enumerate(("c_a", "c_b", "ic_a", "ic_b"), start=1):
            moves = "".join(g[i] for g in self.games).encode("ascii")
            out[col] = np.frombuffer(moves, dtype=np.uint8) == ord("C")
        return out


def memory_limit(environ: Mapping[str, str] = os.environ) -> str:
    """The memory DuckDB may use while writing a run: ``$PDBENCH_DUCKDB_MEMORY``, else ``DEFAULT_MEMORY_LIMIT``.

    Why a bound at all: DuckDB keeps every block of the file it reads or writes in its buffer pool until
    the pool is full, and the pool defaults to 80% of the machine's memory, so a writer's memory grew with
    its results file. Under the bound, blocks already on disk are evicted, and what cannot be (rows not
    yet checkpointed, a row group being rewritten by a checkpoint) spills to ``<run>.duckdb.tmp``.
    """
    value = (environ.get(MEMORY_LIMIT_ENV) or DEFAULT_MEMORY_LIMIT).strip()
    size = _SIZE.fullmatch(value)
    if size is None or size.group(2).lower() not in _UNITS:
        raise ConfigError(
            f"{MEMORY_LIMIT_ENV}={value!r} is not a size. Give a number and a unit, such as 256MB or 1GB (the "
            f"memory DuckDB may use while writing a run), or leave it unset for {DEFAULT_MEMORY_LIMIT}."
        )
    if float(size.group(1)) * _UNITS[size.group(2).lower()] < 64 * 10**6:
        raise ConfigError(
            f"{MEMORY_LIMIT_ENV}={value!r} is too little for DuckDB to write a run; give at least "
            f"{MIN_MEMORY_LIMIT}, or leave it unset for {DEFAULT_MEMORY_LIMIT}."
        )
    return value


def _connect(path: Path) -> duckdb.DuckDBPyConnection:
    limit = memory_limit()  # a bad setting is refused before the file is touched
    try:
        con = duckdb.connect(str(path))
    except duckdb.IOException as exc:
        if _disk_full(exc):
            raise DiskFull(f"the disk holding {path} is full; free some space, then run the command again.") from None
        raise StoreError(
            f"cannot open {path} for writing: {exc}. If another PDBench process is "
            f"writing this run, wait for it to finish."
        ) from None
    except duckdb.Error as exc:  # a damaged file (a checksum that does not match), or not a DuckDB file
        raise StoreError(damaged(str(path), exc)) from None
    con.execute(f"SET memory_limit = '{limit}'")  # memory_limit() let through only digits and a unit
    return con
