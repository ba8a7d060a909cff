"""The response cache's SQLite file: its tables, opening it, telling its failures apart, setting it aside.

Why SQLite and not DuckDB: the cache is shared by every run, and runs may be separate
processes writing at the same time. DuckDB allows one writer per file; SQLite in WAL mode
lets any number of processes read while one writes, and queues writers behind a busy
timeout. A file that is not a readable cache is a :class:`~harness.errors.StoreError` naming
the file and the way out (``pdbench cache clear`` or deleting it), never a raw sqlite3 error.

SQLite failures are told apart by their result code (``sqlite3.Error.sqlite_errorcode``), never by
the words of the message: busy or locked, full, corrupt, cannot open.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness.errors import CacheLost, DiskFull, StoreError

SCHEMA_VERSION = 3  # 2: the ledger of paid answers, and claims on requests in flight; 3: provider batches
BUSY_TIMEOUT_S = 30.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key           TEXT PRIMARY KEY,   -- cache_key(): sha256 hex of the canonical request
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,      -- the model the provider reported
    text          TEXT NOT NULL,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    raw_json      TEXT,               -- JSON extras, or NULL
    created_us    INTEGER NOT NULL    -- microseconds since 1970-01-01 UTC
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS responses_created ON responses (created_us);
-- The ledger: every answer paid for, with the calls row it belongs in, written in the same transaction
-- as its response. A run's rows are dropped once its results file holds them all (the run ended
-- cleanly); after a crash, resume rebuilds the calls rows the results file is missing from here.
CREATE TABLE IF NOT EXISTS ledger (
    run           TEXT NOT NULL,      -- "<absolute results file>#<run id>#<run created at>"
    call_id       TEXT NOT NULL,      -- "<game>:<round>:<seat>:<purpose>:<attempt>" within the run
    key           TEXT NOT NULL,      -- the answer in responses
    record_json   TEXT NOT NULL,      -- the calls row: game, round, seat, attempt, tokens, cost, text
    created_us    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_run ON ledger (run, call_id);
-- Claims: a request one process is sending, so that another process asking the same waits for its
-- answer instead of buying it too. A claim ends with its answer (same transaction) or when the sender
-- gives up; a crashed sender's claim lapses at expires_us.
CREATE TABLE IF NOT EXISTS claims (
    key           TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,      -- the ResponseCache (process) that sends it
    expires_us    INTEGER NOT NULL
) WITHOUT ROWID;
-- Provider batches not yet collected (see batches.py): a submission is stored before the batch is created,
-- its provider id once known, each item's raw result once the batch has ended; an item goes once its answer
-- is in responses.
CREATE TABLE IF NOT EXISTS batches (
    submission    TEXT PRIMARY KEY,   -- this side's name for the batch
    endpoint      TEXT NOT NULL,      -- provider, base URL, key id and model it was sent to
    batch_id      TEXT,               -- the provider's id; NULL until the provider gave one
    items         INTEGER NOT NULL,
    created_us    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS batch_items (
    key           TEXT PRIMARY KEY,   -- the request's cache key
    submission    TEXT NOT NULL,
    custom_id     TEXT NOT NULL,
    result        TEXT                -- the item's raw result (provider JSON); NULL until the batch ended
) WITHOUT ROWID;
"""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_CORRUPT = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_us(moment: datetime) -> int:
    """Microseconds since the epoch, exactly, as the cache stores times; a naive datetime is taken as local time."""
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return (moment - _EPOCH) // _US


def from_us(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


# ---- failures -----------------------------------------------------------------------------------


def sqlite_code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of an error (extended codes folded into their primary one)."""
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether another connection holds the lock (SQLITE_BUSY), or a table of this one (SQLITE_LOCKED)."""
    return sqlite_code(exc) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def cache_error(path: Path, action: str, exc: sqlite3.Error) -> StoreError:
    """A failed ``action`` ("read", "write to"...) on the cache at ``path``, as the user should read it."""
    text = str(exc)
    code = sqlite_code(exc)
    if code == sqlite3.SQLITE_FULL:
        return DiskFull(
            f"The disk holding the response cache {path} is full (sqlite: {text}). Free some "
            "space, then `pdbench resume` the run: every answer recorded so far is kept."
        )
    if code in _CORRUPT:
        return CacheLost(
            f"The response cache {path} is corrupt or not a PDBench cache (sqlite: {text}). "
            "Runs move such a file aside and go on with a fresh cache; otherwise run "
            f"`pdbench cache clear`, or delete the file (and any {path.name}-wal / -shm "
            "next to it); only cached answers are lost."
        )
    if is_busy(exc):
        hint = (
            f"another process kept it locked for more than {BUSY_TIMEOUT_S:.0f} s. "
            "Try again, or stop the other process."
        )
    elif code == sqlite3.SQLITE_CANTOPEN:
        hint = "check that the path is a file in a folder you can write to, or choose another --results folder."
    else:
        hint = (
            "it looks corrupt or is not a PDBench cache. Run `pdbench cache clear`, or delete the file "
            f"(and any {path.name}-wal / -shm next to it); only cached answers are lost."
        )
    return StoreError(f"Cannot {action} the response cache {path} (sqlite: {text}): {hint}")


# ---- opening --------------------------------------------------------------------------------------


def connect_waiting(path: Path) -> sqlite3.Connection:
    """A connection that waits up to ``BUSY_TIMEOUT_S`` for the lock, with the file checked and its schema ensured.

    ``check_same_thread=False`` only so that the cache may close every thread's connection; each
    connection is otherwise used by the thread that opened it alone.
    """
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        _ensure_schema(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_nowait(path: Path) -> sqlite3.Connection:
    """A connection that never waits for a lock (busy timeout 0) and never checkpoints the WAL: for the
    event loop's thread, where a wait would stall every game. Open it after :func:`connect_waiting`,
    which sets the file up."""
    conn = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")
    except BaseException:
        conn.close()
        raise
    return conn


def _ensure_schema(conn: sqlite3.Connection, path: Path) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]  # reads the header: fails on a non-database
    if version < SCHEMA_VERSION:
        conn.execute("PRAGMA schema_version").fetchone()  # reads the schema: fails on a corrupt one
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"The response cache {path} was written by a newer PDBench (cache schema {version}, "
            f"this one knows {SCHEMA_VERSION}). Upgrade PDBench, or run `pdbench cache clear` to start afresh."
        )
    _while_busy(lambda: conn.execute("PRAGMA journal_mode=WAL"))
    conn.execute("PRAGMA synchronous=NORMAL")  # in WAL: durable on commit except on power loss; fine for a cache
    if version < SCHEMA_VERSION:
        _while_busy(lambda: conn.executescript(SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};"))


def _while_busy(step: Callable[[], object]) -> None:
    """Run a schema or journal-mode step, retrying while another process holds the lock.

    Changing the journal mode can report SQLITE_BUSY at once, without waiting for the busy
    timeout, when several processes open a new file together.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taking the lock at once (``BEGIN IMMEDIATE``: no deadlock between two
    processes that both read first), committed at the end and rolled back on any exception, cancellation too."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def give_back_space(conn: sqlite3.Connection) -> None:
    """Return the space of deleted rows to the file system (VACUUM and a WAL truncation), unless another
    process is using the file: then the space is reused later instead."""
    try:
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError:
        pass  # busy elsewhere: the rows are gone, only the file stays larger for now


def checkpoint(path: Path) -> None:
    """A passive checkpoint: copies what it can of the WAL into the file, blocking no reader or writer."""
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            conn.close()
    except sqlite3.Error:
        pass  # a later checkpoint, or the last connection's close, does it


# ---- the file on disk -----------------------------------------------------------------------------


def file_identity(path: Path) -> tuple[int, int] | None:
    """The file's (device, inode), or None if it is gone: to notice it being deleted or replaced while in use."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def cache_files(path: Path) -> list[Path]:
    """The database file and its WAL companions (which hold recent writes until a checkpoint)."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def delete_cache(path: str | Path) -> bool:
    """Delete a cache file and its companions even if it is corrupt; ``True`` if there was one.

    The way out when :class:`~harness.calls.cache.cache.ResponseCache` refuses a file: ``pdbench cache clear``
    can fall back to it when opening fails.
    """
    existed = False
    for file in cache_files(Path(path)):
        try:
            file.unlink()
            existed = True
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise StoreError(f"Cannot delete the response cache file {file}: {exc}. Delete it by hand.") from exc
    return existed


def set_aside(path: Path) -> Path:
    """Rename a broken cache file and its companions to ``<name>.corrupt-<UTC time>``; returns the new name."""
    stamp = utcnow().strftime("%Y%m%d%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    for file, suffix in zip(cache_files(path), ("", "-wal", "-shm"), strict=True):
        with contextlib.suppress(FileNotFoundError):
            file.rename(target.with_name(target.name + suffix))
    return target
