"""A run file as a writer leaves it mid-run, held open by that writer, and the writer's next steps, for the
dashboard's tests of a running run: made from a finished run of the same plan, so every game written is a real
one. The file is held as a run's own writer holds it (a ``running`` run whose file no one holds is one whose
writer was killed: it is shown as crashed), and read, as readers read a run being written, through live copies."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import duckdb

from harness.store.snapshot import Publisher

LOCK_WAIT_S = 20.0  # a reader (the dashboard listing the folder) may hold the file for a moment
_LOOK_S = 0.02  # how often the writer looks for readers' requests (a real one: after each batch)


class HeldRun:
    """The writer of a run in progress, in this process: it holds the run file and publishes live copies while
    someone reads (:mod:`harness.store.snapshot`), as a run's writer does between its batches."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.con = _writing(path).__enter__()
        self.live = Publisher(path)
        self.live.open()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        with self._lock:
            self.live.publish()
        self._thread = threading.Thread(target=self._serve, name="held-run", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._closed.wait(_LOOK_S):
            with self._lock:
                if not self._closed.is_set() and self.live.due():
                    self.live.publish()

    def write_games(self, source: Path, upto: int, status: str = "running") -> None:
        """What the writer does next: record the games of ``source`` below ``upto`` and set the run's status, then
        publish (a reader waits for that); a status other than running ends the run, and the writer closes."""
        with self._lock:
            _record(self.con, source, upto, status)
            self.live.publish()
        if status != "running":
            self.close()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._thread.join()
        self.con.close()
        self.live.close()


def running_copy(source: Path, folder: Path, keep: int) -> HeldRun:
    """A copy of the finished run ``source`` in ``folder``, status running, with only its first ``keep`` games,
    held open by its writer (close it when the test ends)."""
    path = folder / source.name
    shutil.copy(source, path)
    with _writing(path) as con:
        con.execute("update runs set status = 'running', finished_at = null")
        for table in ("round_rows", "game_moves", "games"):
            con.execute(f"delete from {table} where game_id >= ?", [keep])
    return HeldRun(path)


def _record(con: duckdb.DuckDBPyConnection, source: Path, upto: int, status: str) -> None:
    con.execute(f"attach '{source}' as src (read_only)")
    for table in ("games", "round_rows", "game_moves"):
        con.execute(f"insert into {table} select * from src.{table} where game_id < ? "
                    f"and game_id not in (select game_id from {table})", [upto])  # fmt: skip
    con.execute(
        "update runs set status = ?, finished_at = case when ? = 'running' then null else now() end", [status, status]
    )
    con.execute("detach src")


class _writing:
    """A read-write connection to ``path``, waiting while another process reads the file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                self.con = duckdb.connect(str(self.path))
                return self.con
            except duckdb.IOException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        self.con.close()
