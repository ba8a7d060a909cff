"""A run's results file on disk: where it lives, opening it for writing under a memory bound, and
what a failed write tells the user.

DuckDB allows one writing process per file: a second one is refused on opening, with
``duckdb.IOException`` (see :func:`connect_for_writing`).
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from harness.errors import ConfigError, DiskFull, StoreError
from harness.store.schema import damaged, is_damage

MEMORY_LIMIT_ENV = "PDBENCH_DUCKDB_MEMORY"
DEFAULT_MEMORY_LIMIT = "128MB"
MIN_MEMORY_LIMIT = "64MB"
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}  # fmt: skip  # as DuckDB reads them
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)", re.IGNORECASE)


def utcnow() -> datetime:
    """Now, in UTC, as the results tables store times (naive TIMESTAMP columns in UTC)."""
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


def disk_full(exc: duckdb.Error) -> bool:
    """Whether a DuckDB error is a full disk. DuckDB has no exception type for it (it is an ``IOException``
    like any other failed write): only its message carries the system's words for ENOSPC."""
    return os.strerror(errno.ENOSPC) in str(exc) or "disk is full" in str(exc).lower()


def write_error(exc: duckdb.Error, path: Path, run_id: str) -> StoreError:
    """A failed write to a results file, as the user should read it: a full disk says so
    (:class:`DiskFull`, which stops the run as interrupted), anything else names the error."""
    # A full disk first: DuckDB reports a checkpoint that ran out of space as a fatal error, but the file is whole
    # (what was committed is in its log), so "damaged" would send the user to delete a good run.
    if disk_full(exc):
        return DiskFull(
            f"the disk holding {path} is full. Every game recorded before is kept; free some space, "
            f"then `pdbench resume {run_id}` finishes the run."
        )
    if is_damage(exc):
        return StoreError(damaged(str(path), exc))
    return StoreError(
        f"writing results to {path} failed: {exc}. Rounds written before are kept; check free disk "
        f"space and permissions, then `pdbench resume {run_id}`."
    )


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


def connect_for_writing(path: Path) -> duckdb.DuckDBPyConnection:
    """Open ``path`` for writing under :func:`memory_limit`, with a clear error for a full disk, a file another
    process is writing (DuckDB's ``IOException`` on opening) or a damaged file."""
    limit = memory_limit()  # a bad setting is refused before the file is touched
    try:
        con = duckdb.connect(str(path))
    except duckdb.IOException as exc:
        if disk_full(exc):
            raise DiskFull(f"the disk holding {path} is full; free some space, then run the command again.") from None
        raise StoreError(
            f"cannot open {path} for writing: {exc}. If another PDBench process is "
            f"writing this run, wait for it to finish."
        ) from None
    except duckdb.Error as exc:  # a damaged file (a checksum that does not match), or not a DuckDB file
        raise StoreError(damaged(str(path), exc)) from None
    con.execute(f"SET memory_limit = '{limit}'")  # memory_limit() let through only digits and a unit
    return con
