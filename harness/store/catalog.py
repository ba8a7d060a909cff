"""All runs in a results folder, read-only, as one database with the same table names.

Each ``<run_id>.duckdb`` file is attached read-only; its data tables (``runs``, ``games``,
``calls``, ...) become views that union every attached file, and the views of
:mod:`harness.store.views.core` sit on top (``rounds`` first, over ``round_rows`` and
``game_moves``). So ``pdbench sql``, ``pdbench report`` and the dashboard see exactly what a
user's own SQL sees. After setup, the connection is locked
down: no file can be read, written or attached from user SQL.

A run being written is read through the live copy its writer publishes (see
:mod:`harness.store.snapshot`): a consistent state of the run a few seconds old.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from harness.errors import QueryError, RunNotFoundError, StoreError
from harness.states import RunStatus
from harness.store import snapshot
from harness.store.query_guard import guarded
from harness.store.schema import (
    SCHEMA_VERSION,
    data_tables,
    declare_move,
    empty_tables,
    file_problem,
    file_schema_version,
    is_damage,
    migrate,
    unreadable,
)
from harness.store.views.core import create_views

T = TypeVar("T")


@dataclass
class Catalog:
    """A read-only view over the runs of ``results_dir`` (or only ``run_ids`` if given).

    A run another process (or thread) is writing is read through its live copy, which its writer publishes
    on request (:mod:`harness.store.snapshot`): such a run is in ``busy`` and in ``live`` (with the copy's
    time). A run being written that offers no copy (within a few seconds of asking) is in ``busy`` and in
    ``skipped``. Opening a catalog may so wait up to :data:`harness.store.snapshot.WAIT_S` seconds.
    """

    results_dir: Path
    run_ids: list[str] | None = None
    con: duckdb.DuckDBPyConnection = field(init=False)
    attached: dict[str, Path] = field(init=False, default_factory=dict)  # alias -> run file
    skipped: list[tuple[Path, str]] = field(init=False, default_factory=list)
    busy: set[Path] = field(init=False, default_factory=set)  # run files a writer holds open
    live: dict[Path, datetime] = field(init=False, default_factory=dict)  # busy files read from a live copy
    left_out: list[tuple[Path, str]] = field(init=False, default_factory=list)  # found damaged by a query (in skipped)

    def __post_init__(self) -> None:
        self._owners: dict[str, Path] = {}
        self.con = duckdb.connect(":memory:")
        files = self._files()
        written: dict[Path, str] = {}  # run files a writer holds -> why they cannot be opened
        unreadable: set[Path] = set()
        for i, path in enumerate(files):
            try:
                self.con.execute(f"ATTACH '{_sql_str(str(path))}' AS run{i} (READ_ONLY)")
            except duckdb.Error as exc:
                if _being_written(exc):
                    written[path] = _unattachable(exc)
                else:
                    self.skipped.append((path, _unattachable(exc)))
                    unreadable.add(path)
        copies = snapshot.live_copies(list(written)) if written else {}
        for i, path in enumerate(files):
            alias = f"run{i}"
            if path in written:
                if not self._attach_live(alias, path, copies.get(path), written[path]):
                    continue
            elif path in unreadable:
                continue
            else:
                snapshot.remove_leftovers(path)  # opened: no one writes this run, so live files are stale
            problem = self._check(alias, path)
            if problem is _OLDER:
                problem = (
                    self._upgrade(alias, path)
                    if path not in self.live
                    else "its live copy was written by an older PDBench"
                )
            if problem is not None:
                self.con.execute(f"DETACH DATABASE IF EXISTS {alias}")
                self.skipped.append((path, problem))
                self.live.pop(path, None)
                continue
            self.attached[alias] = path
        self._create_union_views()
        create_views(self.con)
        self.con.execute("SET enable_external_access = false")
        self.con.execute("SET lock_configuration = true")

    def _attach_live(self, alias: str, path: Path, copy: snapshot.LiveCopy | None, reason: str) -> bool:
        """Attach the live copy of a run being written as ``alias``; or, if its writer has just closed it, the
        run file itself. False (the run skipped, with ``reason``) if neither can be opened."""
        for _ in range(3):
            if copy is None:
                break
            try:
                self.con.execute(f"ATTACH '{_sql_str(str(copy.path))}' AS {alias} (READ_ONLY)")
            except duckdb.Error:
                # Gone as it was opened: superseded long ago (a newer one exists), or the writer has closed
                # (then the run file may be free).
                copy = snapshot.newest_copy(path)
            else:
                self.busy.add(path)
                self.live[path] = copy.taken_at
                return True
        try:
            self.con.execute(f"ATTACH '{_sql_str(str(path))}' AS {alias} (READ_ONLY)")
        except duckdb.Error as exc:
            self.busy.add(path)
            self.skipped.append((path, _unattachable(exc) if _being_written(exc) else reason))
            return False
        snapshot.remove_leftovers(path)
        return True

    def _check(self, alias: str, path: Path) -> str | None:
        """Why an attached file cannot be read as PDBench results (None if it can; ``_OLDER`` if an
        upgrade would make it readable)."""
        try:
            version = file_schema_version(self.con, alias)
            if version is None:
                return file_problem(self.con, alias)
        except StoreError as exc:
            return str(exc)
        except duckdb.Error as exc:
            return f"it cannot be read ({str(exc).strip().splitlines()[0] if str(exc).strip() else 'damaged'})"
        if version > SCHEMA_VERSION:
            return f"written by a newer PDBench (schema {version}); upgrade PDBench to read it"
        tables = {
            r[0]
            for r in self.con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [alias]
            ).fetchall()
        }
        missing = [t for t in data_tables(version) if t not in tables]
        if missing:
            return f"it lacks the table{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
        if version < 1:  # no PDBench wrote one: there is no migration from it
            return (
                f"written by an older PDBench (schema {version}; this one reads schema {SCHEMA_VERSION}) and no "
                "upgrade exists for it: re-run its experiment with this PDBench"
            )
        if version < SCHEMA_VERSION:
            return _OLDER
        run_ids = [r[0] for r in self.con.execute(f"SELECT run_id FROM {alias}.main.runs").fetchall()]
        for run_id in run_ids:
            if run_id in self._owners:
                return f"it holds run {run_id!r}, already read from {self._owners[run_id].name} (a copy?); counted once"
        for run_id in run_ids:
            self._owners[run_id] = path
        return None

    def _upgrade(self, alias: str, path: Path) -> str | None:
        """Migrate an older results file in place (its rows are kept; columns and views are added) and
        attach it again; or say why it could not be (a read-only file, another process writing it)."""
        self.con.execute(f"DETACH {alias}")
        try:
            with duckdb.connect(str(path)) as con:
                migrate(con, str(path))
            self.con.execute(f"ATTACH '{_sql_str(str(path))}' AS {alias} (READ_ONLY)")
        except (duckdb.Error, StoreError) as exc:
            reason = str(exc).splitlines()[0]
            return (
                f"written by an older PDBench, and upgrading it to schema {SCHEMA_VERSION} failed ({reason}); "
                "make the file writable and let no other process use it, then try again"
            )
        return self._check(alias, path)

    def _files(self) -> list[Path]:
        if not self.results_dir.is_dir():
            return []
        if self.run_ids is not None:
            paths = []
            for run_id in self.run_ids:
                path = self.results_dir / f"{run_id}.duckdb"
                if not path.exists():
                    raise RunNotFoundError(not_found(run_id, self.results_dir))
                paths.append(path)
            return paths
        return sorted(self.results_dir.glob("*.duckdb"))

    def _create_union_views(self) -> None:
        """The data tables as views over every attached file (made again when a damaged file is left out)."""
        con = self.con
        for name in data_tables():
            con.execute(f"DROP VIEW IF EXISTS {name}")
        declare_move(con)  # the type the views unfold compact games into (see harness.store.views.core)
        if not self.attached:
            # An empty folder still answers queries, with empty tables of the right shape.
            empty_tables(con, "empty")
            for name in data_tables():
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM empty.{name}")
            return
        for name in data_tables():
            union = " UNION ALL BY NAME ".join(f"SELECT * FROM {a}.main.{name}" for a in self.attached)
            con.execute(f"CREATE VIEW {name} AS {union}")

    # -- queries ---------------------------------------------------------------------------
    def query(
        self, sql: str, params: list[Any] | None = None, *, timeout_s: float | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run read-only SQL; returns the last statement's (column names, rows).

        Only queries are allowed (SELECT, WITH, FROM, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN, PRAGMA):
        results are evidence, and nothing typed at ``pdbench sql`` may change or add to them.
        A failing query is a QueryError with DuckDB's explanation, not a crash. A query that meets a damaged
        file (a block whose checksum does not match: attaching reads only the file's catalog) is answered
        from the other files: the damaged one is left out, and in ``skipped`` with why.
        A Ctrl-C (on the main thread) or ``timeout_s`` stops it (:func:`harness.store.query_guard.guarded`).
        """
        try:
            statements = self.con.extract_statements(sql)
        except duckdb.Error as exc:
            raise _failed(exc) from None
        if not statements:
            raise QueryError("the query is empty; write a SELECT, e.g. `select * from runs`.")
        for stmt in statements:
            if stmt.type not in _READ_ONLY:
                raise QueryError(
                    f"only queries are allowed here (SELECT, DESCRIBE, SHOW, EXPLAIN...), not "
                    f"{stmt.type.name}: the results folder is read-only to `pdbench sql`."
                )
        return guarded(self.con, lambda: self._answer(statements, params or []), timeout_s)

    def _answer(self, statements: list[duckdb.Statement], params: list[Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The statements' answer; a file found damaged on the way is left out and the statements run again."""
        while True:
            try:
                cur = None
                for i, stmt in enumerate(statements):
                    cur = self.con.execute(stmt, params if i == len(statements) - 1 else [])
                if cur is None or cur.description is None:
                    return [], []
                return [d[0] for d in cur.description], cur.fetchall()
            except duckdb.InterruptException:
                raise  # stopped on purpose: see guarded
            except duckdb.Error as exc:
                if not (is_damage(exc) and self._leave_out_damaged()):
                    raise _failed(exc) from None

    def _leave_out_damaged(self) -> bool:
        """Find the attached files that cannot be read whole, detach them and say why (in ``skipped``); whether
        any was found. Reads every file once: only done after a query met damage, which names no file."""
        try:
            self.con.execute("SELECT 1").fetchall()
        except duckdb.InterruptException:
            raise
        except duckdb.Error:
            return False  # the connection itself is lost (a fatal error), not one file
        found = {
            alias: error
            for alias in self.attached
            if (error := unreadable(self.con, alias)) is not None and is_damage(error)
        }
        for alias, error in found.items():
            path = self.attached.pop(alias)
            self.con.execute(f"DETACH DATABASE IF EXISTS {alias}")
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            why = (
                f"it is damaged and cannot be read ({reason}); left out. Restore it from a backup if you have "
                "one, or move it out of the folder"
            )
            self.skipped.append((path, why))
            self.left_out.append((path, why))
            self.live.pop(path, None)
            self._owners = {run_id: p for run_id, p in self._owners.items() if p != path}
        if found:
            self._create_union_views()
        return bool(found)

    def held(self, run_id: str) -> bool:
        """Whether a process holds the file of ``run_id`` open for writing. DuckDB locks a file for its writer
        and the lock goes with the process, however it ends: so a file this catalog opened itself (rather than
        its live copy) is held by no one, and a ``running`` run in it was left so by a writer killed (kill -9,
        a power cut) before it could say how the run ended."""
        path = self._owners.get(run_id)
        return path is not None and path in self.busy

    def shown_status(self, run_id: str, stored: str) -> RunStatus:
        """A run's status as the run lists show it: its stored one, but ``crashed`` for a ``running`` run no
        process holds (:meth:`held`). The file is left as it is: ``pdbench resume`` continues the run."""
        status = RunStatus(stored)
        return RunStatus.CRASHED if status is RunStatus.RUNNING and not self.held(run_id) else status

    def consistent(self, reads: Callable[[Catalog], T]) -> T:
        """``reads(self)``, done again if a file was found damaged meanwhile (and left out): so that several
        queries that must agree (a list of runs and their total) all read the same files."""
        while True:
            before = len(self.skipped)
            out = reads(self)
            if len(self.skipped) == before:
                return out

    def records(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        cols, rows = self.query(sql, params)
        return [dict(zip(cols, row, strict=True)) for row in rows]

    def require_run(self, run_id: str) -> dict[str, Any]:
        """The run's row, its status as shown (:meth:`shown_status`); an error that says why if it cannot be read
        (its file was found damaged) or is not there."""
        rows = self.records("SELECT * FROM runs WHERE run_id = ?", [run_id])
        if not rows:
            for path, reason in self.skipped:
                if path.name == f"{run_id}.duckdb":
                    raise StoreError(f"cannot read run {run_id!r}: {reason}.")
            raise RunNotFoundError(not_found(run_id, self.results_dir))
        return {**rows[0], "status": self.shown_status(run_id, rows[0]["status"]).value}

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_OLDER = "older"  # _check's answer for a file that an upgrade can bring to this schema
_READ_ONLY = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN, duckdb.StatementType.PRAGMA}


def _being_written(exc: duckdb.Error) -> bool:
    """Whether a file could not be attached because a writer holds it (see :func:`_unattachable`)."""
    return isinstance(exc, duckdb.ResourceInUseException | duckdb.ConnectionException) or (
        isinstance(exc, duckdb.IOException) and "Could not set lock on file" in str(exc)
    )


def _unattachable(exc: duckdb.Error) -> str:
    """Why a results file could not be attached, and what to do.

    A file this process is writing is refused with ``duckdb.ResourceInUseException`` (or, opened with
    other settings, ``duckdb.ConnectionException``). A file another process is writing is refused with
    ``duckdb.IOException``, the type DuckDB also gives a file that is not a database: it has no type of
    its own for a lock held elsewhere, so that one case is told by the words DuckDB's lock failure
    begins with.
    """
    if isinstance(exc, duckdb.ResourceInUseException | duckdb.ConnectionException):
        return "it is being written by this process; try again when the run ends"
    if _being_written(exc):
        return "it is being written by another PDBench process; try again when it ends"
    return str(exc).splitlines()[0]


def _failed(exc: duckdb.Error) -> QueryError:
    return QueryError(
        f"the query failed: {str(exc).strip()}. Tables: runs, games, rounds, "
        f"calls; views: player_metrics, cooperation_over_time, tournament, matchups, "
        f"behaviour_profile, per_game_strategy_fit, per_game_best_fit_shares, model_parsing, player_parsing "
        f"(see docs/results.md)."
    )


def _sql_str(s: str) -> str:
    return s.replace("'", "''")


LATEST = "latest"  # the run id that names the newest run (resolved by harness.store.run_ref)


def not_found(ref: str, results_dir: Path) -> str:
    """The one-paragraph error for a run that is not there, with how to list the runs that are."""
    return (
        f"no run {ref!r} in {results_dir}. List the runs with `pdbench runs --results {results_dir}`; a run is "
        f"named by its id, by any prefix of it that no other run shares, or by `{LATEST}` (the newest run)."
    )


def open_run(results_dir: Path, run_id: str) -> Catalog:
    """A catalog of one run, with a clear error if it is missing or unreadable."""
    if not results_dir.is_dir():
        raise StoreError(
            f"the results folder {results_dir} does not exist or is not a folder; "
            f"give the folder that holds {run_id}.duckdb with --results DIR."
        )
    cat = Catalog(results_dir, [run_id])
    if not cat.attached:
        reason = cat.skipped[0][1] if cat.skipped else "unknown reason"
        cat.close()
        raise StoreError(f"cannot read run {run_id!r}: {reason}.")
    return cat
