"""A run file as a writer leaves it mid-run, and the writer's next steps, for the dashboard's tests of a
running run: made from a finished run of the same plan, so every game written is a real one."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import duckdb

LOCK_WAIT_S = 20.0  # a reader (the dashboard listing the folder) may hold the file for a moment


def running_copy(source: Path, folder: Path, keep: int) -> Path:
    """A copy of the finished run ``source`` in ``folder``, status running, with only its first ``keep`` games."""
    path = folder / source.name
    shutil.copy(source, path)
    with _writing(path) as con:
        con.execute("update runs set status = 'running', finished_at = null")
        for table in ("rounds", "games"):
            con.execute(f"delete from {table} where game_id >= ?", [keep])
    return path


def write_games(path: Path, source: Path, upto: int, status: str = "running") -> None:
    """What the writer does next: record the games of ``source`` below ``upto``, and set the run's status."""
    with _writing(path) as con:
        con.execute(f"attach '{source}' as src (read_only)")
        for table in ("games", "rounds"):
            con.execute(f"insert into {table} select * from src.{table} where game_id < ? "
                        f"and game_id not in (select game_id from {table})", [upto])  # fmt: skip
        con.execute("update runs set status = ?, finished_at = case when ? = 'running' then null else now() end",
                    [status, status])  # fmt: skip
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
