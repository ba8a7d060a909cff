"""The one writer of a run's results file: buffered, batched, transactional.

Finished games are buffered as columns and written in one transaction per batch
(games and their rounds together), so a crash or Ctrl-C leaves every flushed game
whole and never a game without its rounds. Columnar buffers go to DuckDB as NumPy
arrays: a 400,000-round tournament is stored in a fraction of a second.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from harness import __version__
from harness.errors import RunExistsError, StoreError
from harness.match import Match
from harness.plan import GamePlan
from harness.store.schema import SCHEMA_VERSION, create_schema, migrate

FLUSH_ROUNDS = 200_000
FLUSH_GAMES = 2_000


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
        self._games: dict[str, list[Any]] = {k: [] for k in _GAME_COLUMNS}
        self._rounds = _RoundBuffer()
        self.games_written = 0
        self.rounds_written = 0

    # -- opening -------------------------------------------------------------------------
    @classmethod
    def create(cls, results_dir: Path, run_id: str, *, overwrite: bool = False) -> RunWriter:
        """A new results file for ``run_id``; refuses an existing run unless ``overwrite``."""
        ensure_results_dir(results_dir)
        path = run_path(results_dir, run_id)
        if path.exists():
            if not overwrite:
                raise RunExistsError(
                    f"a run with id {run_id!r} already exists ({path}). Choose another run id "
                    f"(--run-id or run.run_id), or pass --overwrite to replace it."
                )
            for p in (path, path.with_name(path.name + ".wal")):
                p.unlink(missing_ok=True)
        con = _connect(path)
        create_schema(con)
        return cls(path, con, run_id)

    @classmethod
    def reopen(cls, path: Path, run_id: str) -> RunWriter:
        """An existing results file, migrated to the current schema (for resuming a run)."""
        con = _connect(path)
        migrate(con, str(path))
        return cls(path, con, run_id)

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

    def finish(self, status: str, error: str | None = None) -> None:
        """Flush what is buffered and mark the run ``complete``, ``interrupted`` or ``failed``."""
        self.flush()
        self.con.execute(
            "UPDATE runs SET status = ?, finished_at = ?, error = ? WHERE run_id = ?",
            [status, utcnow(), error, self.run_id],
        )
        self.con.execute("CHECKPOINT")

    # -- games -------------------------------------------------------------------------
    def add_game(
        self, plan: GamePlan, match: Match, planned_rounds: int, status: str = "complete", error: str | None = None
    ) -> None:
        """Buffer one game and all its rounds; written at the next flush."""
        cond = plan.condition
        g = self._games
        g["game_id"].append(plan.game_id)
        g["condition"].append(cond.name)
        g["replicate"].append(plan.replicate)
        g["player_a"].append(cond.player_a.name)
        g["player_b"].append(cond.player_b.name)
        g["params_a"].append(_params_json(cond.player_a.spec.params_dict()))
        g["params_b"].append(_params_json(cond.player_b.spec.params_dict()))
        g["horizon"].append(cond.horizon.kind)
        g["planned_rounds"].append(planned_rounds)
        g["stop_prob"].append(cond.horizon.stop_prob)
        g["noise"].append(cond.noise)
        g["seed"].append(plan.seed)
        g["status"].append(status)
        n = match.rounds_played
        g["rounds_played"].append(n)
        g["score_a"].append(match.score_a)
        g["score_b"].append(match.score_b)
        g["error"].append(error)

        self._rounds.add(plan.game_id, match)
        if self._rounds.size >= FLUSH_ROUNDS or len(g["game_id"]) >= FLUSH_GAMES:
            self.flush()

    def flush(self) -> None:
        """Write buffered games and rounds in one transaction."""
        n_games = len(self._games["game_id"])
        if n_games == 0:
            return
        n_rounds = self._rounds.size
        games = _game_arrays(self._games, self.run_id)
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
                "CASE WHEN c_a THEN 'C' ELSE 'D' END, CASE WHEN c_b THEN 'C' ELSE 'D' END, "
                "CASE WHEN ic_a THEN 'C' ELSE 'D' END, CASE WHEN ic_b THEN 'C' ELSE 'D' END, "
                "payoff_a, payoff_b FROM _pdb_rounds",
                [self.run_id],
            )
            con.execute("COMMIT")
        except duckdb.Error as exc:
            con.execute("ROLLBACK")
            raise StoreError(
                f"writing results to {self.path} failed: {exc}. The {self.games_written} games written "
                f"before are kept; check free disk space and permissions, then run again."
            ) from None
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            con.unregister("_pdb_games")
            con.unregister("_pdb_rounds")
        for col in self._games.values():
            col.clear()
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


def _game_arrays(buffer: dict[str, list[Any]], run_id: str) -> dict[str, np.ndarray]:
    n = len(buffer["game_id"])
    out: dict[str, np.ndarray] = {"run_id": np.full(n, run_id, dtype=object)}
    for col in _GAME_COLUMNS[1:]:
        values = buffer[col]
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

    Moves cross into DuckDB as boolean arrays ("cooperated?") made from the strings' bytes and
    become 'C'/'D' in SQL: far cheaper than handing DuckDB one Python string per move.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.game_ids: list[int] = []
        self.lengths: list[int] = []
        self.moves: dict[str, list[str]] = {"c_a": [], "c_b": [], "ic_a": [], "ic_b": []}
        self.payoff_a: list[float] = []
        self.payoff_b: list[float] = []
        self.size = 0

    def add(self, game_id: int, match: Match) -> None:
        n = match.rounds_played
        self.game_ids.append(game_id)
        self.lengths.append(n)
        self.moves["c_a"].append("".join(match.moves_a))
        self.moves["c_b"].append("".join(match.moves_b))
        self.moves["ic_a"].append("".join(match.intended_a))
        self.moves["ic_b"].append("".join(match.intended_b))
        self.payoff_a.extend(match.payoffs_a)
        self.payoff_b.extend(match.payoffs_b)
        self.size += n

    def arrays(self) -> dict[str, np.ndarray]:
        lengths = np.asarray(self.lengths, dtype=np.int64)
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        out: dict[str, np.ndarray] = {
            "game_id": np.repeat(np.asarray(self.game_ids, dtype=np.int32), lengths),
            "round": (np.arange(self.size, dtype=np.int64) - starts + 1).astype(np.int32),
            "payoff_a": np.asarray(self.payoff_a, dtype=np.float64),
            "payoff_b": np.asarray(self.payoff_b, dtype=np.float64),
        }
        for col, parts in self.moves.items():
            out[col] = np.frombuffer("".join(parts).encode("ascii"), dtype=np.uint8) == ord("C")
        return out


def _params_json(params: dict[str, Any]) -> str | None:
    return json.dumps(params, sort_keys=True) if params else None


def _connect(path: Path) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path))
    except duckdb.IOException as exc:
        raise StoreError(
            f"cannot open {path} for writing: {exc}. If another PDBench process is "
            f"writing this run, wait for it to finish."
        ) from None
