"""The one writer of a run's results file: buffered, batched, transactional.

Finished games of classic strategies are buffered and written in one transaction per batch (games and
their moves together), so a crash or Ctrl-C leaves every flushed game whole and never a game without its
rounds. A game is stored at its size: one ``game_moves`` row holding a letter a round (the ``rounds`` view
unfolds it, :mod:`harness.store.views.core`), made for a whole batch at once with NumPy, once for every
replicate of a deterministic pairing (they share one :class:`~harness.game.match.Match`).

While someone reads the run, the writer also publishes live copies of it between batches
(:mod:`harness.store.snapshot`), since DuckDB lets no one else open a file being written. For their
sake it checkpoints itself (:meth:`RunWriter.committed`) rather than leaving it to DuckDB.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from harness import __version__
from harness.config.plan import GamePlan
from harness.errors import DiskFull, RunExistsError, StoreError
from harness.game.match import Match
from harness.providers.keys import scrub
from harness.states import GameStatus, RunStatus
from harness.store.rows import GAME_COLUMNS, game_row
from harness.store.run_file import connect_for_writing, disk_full, ensure_results_dir, run_path, utcnow, write_error
from harness.store.schema import SCHEMA_VERSION, create_schema, migrate
from harness.store.snapshot import CHECKPOINT_BYTES, MOST_LOG_BYTES, Publisher
from harness.store.transaction import transaction
from harness.store.views.core import OBSERVED_CODE_BITS, ROUND_CODE_BITS

FLUSH_ROUNDS = 200_000  # rounds of distinct matches: what the buffer holds, and what a crash would replay
FLUSH_GAMES = 2_000


class RunWriter:
    """Owns one run's DuckDB file for writing. Use as a context manager."""

    def __init__(self, path: Path, con: duckdb.DuckDBPyConnection, run_id: str) -> None:
        self.path = path
        self.con = con
        self.run_id = run_id
        self._games: list[tuple[Any, ...]] = []  # one row per game: a single append, so never half-added
        self._moves = _MovesBuffer()
        self.live = Publisher(path)
        self.live.open()  # the file's lock is ours: what an earlier writer left is stale
        self._wal = path.with_name(path.name + ".wal")
        self.log_kept: str | None = None  # why the last checkpoint could not be made (a full disk), if it could not
        try:  # DuckDB checkpoints on its own only past this; below it, committed() decides
            con.execute(f"SET wal_autocheckpoint = '{MOST_LOG_BYTES}B'")
        except duckdb.Error as exc:
            con.close()
            raise write_error(exc, path, run_id) from None

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
            connect_for_writing(path).close()
            for p in (path, path.with_name(path.name + ".wal")):
                p.unlink(missing_ok=True)
        con = connect_for_writing(path)
        try:
            create_schema(con)
        except duckdb.Error as exc:
            con.close()
            if disk_full(exc):
                raise write_error(exc, path, run_id) from None
            raise StoreError(f"cannot create the results file {path}: {exc}") from None
        return cls(path, con, run_id)

    @classmethod
    def reopen(cls, path: Path, run_id: str) -> RunWriter:
        """An existing results file, migrated to the current schema (for resuming a run)."""
        con = connect_for_writing(path)
        try:
            migrate(con, str(path))
        except duckdb.Error as exc:
            con.close()
            if disk_full(exc):
                raise write_error(exc, path, run_id) from None
            raise
        except BaseException:
            con.close()
            raise
        return cls(path, con, run_id)

    def created_at(self) -> str:
        """When the run was created (ISO): with the file and run id, what tells this run from an earlier one
        under the same id (``--overwrite``)."""
        row = self.con.execute("SELECT created_at FROM runs WHERE run_id = ?", [self.run_id]).fetchone()
        return "" if row is None else row[0].isoformat()

    def mark_running(self) -> None:
        """A resumed run is running again."""
        try:
            self.con.execute(
                "UPDATE runs SET status = ?, finished_at = NULL, error = NULL WHERE run_id = ?",
                [RunStatus.RUNNING.value, self.run_id],
            )
        except duckdb.Error as exc:
            raise write_error(exc, self.path, self.run_id) from None

    def games_and_rounds(self) -> tuple[int, int]:
        """Complete games and recorded rounds of the run (for a summary after a forced stop)."""
        games = self.con.execute(
            "SELECT count(*) FROM games WHERE run_id = ? AND status = ?", [self.run_id, GameStatus.COMPLETE.value]
        ).fetchone()
        rounds = self.con.execute("SELECT count(*) FROM rounds WHERE run_id = ?", [self.run_id]).fetchone()
        return (int(games[0]) if games else 0), (int(rounds[0]) if rounds else 0)

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
            "VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
            [
                self.run_id,
                kind,
                utcnow(),
                RunStatus.RUNNING.value,
                json.dumps(config, sort_keys=True),
                seed,
                __version__,
                SCHEMA_VERSION,
                games_planned,
                collapse_k,
                collapse_threshold,
            ],
        )

    def finish(self, status: RunStatus, error: str | None = None) -> tuple[RunStatus, str | None]:
        """Flush what is buffered and mark the run ``complete``, ``interrupted`` or ``failed``.

        The status is written even if the flush fails (the run is then ``failed`` with the reason),
        so a results file never claims to be running when nothing is. ``error`` may be any exception's
        text: it is scrubbed of API keys before it is stored (see harness.providers.keys).
        """
        try:
            self._write_buffered()
        except DiskFull as exc:  # not the run's fault: resume plays the games that were not written
            status, error = RunStatus.INTERRUPTED, str(exc)
            self._games.clear()
            self._moves.clear()
        except Exception as exc:
            status, error = RunStatus.FAILED, f"{error + '; ' if error else ''}could not write the last games: {exc}"
            self._games.clear()
            self._moves.clear()
        error = scrub(error) if error else error
        try:
            self.con.execute(
                "UPDATE runs SET status = ?, finished_at = ?, error = ? WHERE run_id = ?",
                [status.value, utcnow(), error, self.run_id],
            )
        except duckdb.Error as exc:
            raise write_error(exc, self.path, self.run_id) from None
        try:
            self.con.execute("CHECKPOINT")
        except duckdb.Error as exc:
            if not disk_full(exc):
                raise write_error(exc, self.path, self.run_id) from None
            # Everything, the status too, is committed in the file's log: the run is whole and readable. Only
            # folding the log into the file needs space, and the next writer to open the file does it.
            self.log_kept = (
                f"the disk holding {self.path} is full, so the run's last writes stay in its log "
                f"({self._wal.name}, read with the file) until there is space; free some"
            )
        return status, error

    # -- games -------------------------------------------------------------------------
    def add_game(
        self,
        plan: GamePlan,
        match: Match,
        planned_rounds: int,
        status: GameStatus = GameStatus.COMPLETE,
        error: str | None = None,
    ) -> None:
        """Buffer one game and all its rounds; written at the next flush (at once if a reader waits for a copy)."""
        row = game_row(self.run_id, plan, planned_rounds, status, match, error)
        self._moves.add(plan.game_id, match)
        self._games.append(row)
        if self._moves.size >= FLUSH_ROUNDS or len(self._games) >= FLUSH_GAMES or self.live.due():
            self.flush()

    def flush(self) -> None:
        """Write buffered games and rounds in one transaction; then what :meth:`committed` does."""
        self._write_buffered()
        self.committed()

    def committed(self) -> None:
        """Call after each transaction that wrote results: publishes a live copy of the run if a reader waits
        for one, then checkpoints if the log has grown to :data:`~harness.store.snapshot.CHECKPOINT_BYTES`
        and readers do not need it held back (:meth:`~harness.store.snapshot.Publisher.may_checkpoint`).

        The copy goes first, so that it only has to append the log; the whole copy a checkpoint makes
        necessary then comes at the next publication, a second later. While someone reads, a checkpoint is
        preceded by a copy however recent the last: no commit can be made while one runs (seconds, on a large
        run and a busy core), so what was committed before it is published before it."""
        try:
            log_bytes = self._wal.stat().st_size
        except OSError:  # no log (nothing since the last checkpoint), or one that cannot be looked at: DuckDB's
            log_bytes = 0  # own checkpoints then keep it in bounds
        checkpoint = log_bytes >= CHECKPOINT_BYTES and self.live.may_checkpoint()
        if self.live.due() or (checkpoint and self.live.wanted):
            self.live.publish()
        if checkpoint and self.live.may_checkpoint():  # (a whole copy just made holds it back)
            try:
                self.con.execute("CHECKPOINT")
            except duckdb.Error as exc:
                raise write_error(exc, self.path, self.run_id) from None

    def _write_buffered(self) -> None:
        """Write buffered games and their moves in one transaction."""
        if not self._games:
            return
        games = _game_arrays(self._games)
        moves = self._moves.arrays()
        con = self.con
        try:
            with transaction(con, lambda exc: write_error(exc, self.path, self.run_id)):
                con.register("_pdb_games", games)
                con.register("_pdb_moves", moves)
                con.execute(
                    f"INSERT INTO games ({', '.join(GAME_COLUMNS)}) SELECT {', '.join(GAME_COLUMNS)} FROM _pdb_games"
                )
                con.execute(
                    f"INSERT INTO game_moves (run_id, {', '.join(_MOVES_COLUMNS)}) "
                    f"SELECT ?, {', '.join(_MOVES_COLUMNS)} FROM _pdb_moves",
                    [self.run_id],
                )
        finally:
            con.unregister("_pdb_games")
            con.unregister("_pdb_moves")
        self._games.clear()
        self._moves.clear()

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            self.live.close()

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_INT_COLUMNS = {"game_id", "replicate", "planned_rounds", "rounds_played"}
_FLOAT_COLUMNS = {"noise", "observation_noise", "score_a", "score_b"}


def _game_arrays(rows: list[tuple[Any, ...]]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for i, col in enumerate(GAME_COLUMNS):
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


_CELLS = ("cc", "cd", "dc", "dd")
_MOVES_COLUMNS = ("game_id", "moves", *(f"payoff_{cell}_{seat}" for cell in _CELLS for seat in "ab"), "observed")


class _MovesBuffer:
    """The moves of buffered games, made into ``game_moves`` columns at a flush.

    Each game is one tuple appended at once (so an interrupt never leaves the buffer half-updated). At a flush
    the moves of every distinct match in the batch are joined into four strings, coded a letter a round in
    one NumPy pass (see :data:`~harness.store.views.core.ROUND_CODE_BITS`) and cut back into one string a
    game: far cheaper than a row, or a Python object, a round.
    """

    def __init__(self) -> None:
        self.games: list[tuple[int, Match]] = []
        self.size = 0  # rounds held: those of distinct matches, as replicates share one (see arrays)
        self._held: set[int] = set()

    def clear(self) -> None:
        self.games = []
        self.size = 0
        self._held = set()

    def add(self, game_id: int, match: Match) -> None:
        self.games.append((game_id, match))
        if id(match) not in self._held:
            self._held.add(id(match))
            self.size += match.rounds_played

    def arrays(self) -> dict[str, np.ndarray]:
        distinct: dict[int, Match] = {}  # replicates of a deterministic pairing share their match
        for _, match in self.games:
            distinct.setdefault(id(match), match)
        matches = list(distinct.values())
        code = np.full(sum(m.rounds_played for m in matches), ord("A"), dtype=np.uint8)
        for column, bit in ROUND_CODE_BITS.items():
            joined = "".join("".join(getattr(m, _MATCH_LISTS[column])) for m in matches)
            code += (np.frombuffer(joined.encode("ascii"), dtype=np.uint8) == ord("D")) * np.uint8(bit)
        letters = code.tobytes().decode("ascii")
        coded: dict[int, str] = {}
        start = 0
        for key, match in distinct.items():
            coded[key] = letters[start : start + match.rounds_played]
            start += match.rounds_played
        out: dict[str, np.ndarray] = {
            "game_id": np.asarray([g for g, _ in self.games], dtype=np.int32),
            "moves": np.asarray([coded[id(m)] for _, m in self.games], dtype=object),
        }
        observed = {key: _observed_letters(m) for key, m in distinct.items()}
        out["observed"] = np.asarray([observed[id(m)] for _, m in self.games], dtype=object)
        for cell in _CELLS:
            pays = np.asarray([getattr(m.game, cell) for _, m in self.games], dtype=np.float64).reshape(-1, 2)
            out[f"payoff_{cell}_a"], out[f"payoff_{cell}_b"] = pays[:, 0].copy(), pays[:, 1].copy()
        return out


def _observed_letters(match: Match) -> str | None:
    """``game_moves.observed`` of a game: None (NULL, read as "observed = played") without observation noise,
    else a letter a round, 'A' plus the bits of :data:`~harness.store.views.core.OBSERVED_CODE_BITS`."""
    if match.observation == 0.0:
        return None
    code = np.full(match.rounds_played, ord("A"), dtype=np.uint8)
    for column, bit in OBSERVED_CODE_BITS.items():
        seen = np.frombuffer("".join(getattr(match, column)).encode("ascii"), dtype=np.uint8)
        code += (seen == ord("D")) * np.uint8(bit)
    return code.tobytes().decode("ascii")


# Where a Match keeps each column's moves.
_MATCH_LISTS = {"action_a": "moves_a", "action_b": "moves_b", "intended_a": "intended_a", "intended_b": "intended_b"}
