"""Response cache: a model's answer to an exact request is paid for once, by any run or process.

Why SQLite and not DuckDB: the cache is shared by every run, and runs may be separate
processes writing at the same time. DuckDB allows one writer per file; SQLite in WAL mode
lets any number of processes read while one writes, and queues writers behind a busy
timeout. Each write is a short ``INSERT OR IGNORE`` (one, or the few dozen of one turn of an
event loop in one transaction), so a writer holds the lock for about a millisecond at most, and
the first writer of a key wins — harmless, because a
key identifies the request exactly, so any two values stored under it are equally valid
answers to it.

The key (:func:`cache_key`) is the SHA-256 of a canonical JSON of provider, model, base URL,
messages, parameters and sample identity — the things that determine the distribution an answer
is drawn from, and which draw it is. The API key is not an input: who pays does not change the
answer, and a secret must never reach a file. The sample identity (condition, replicate, seat;
:class:`~harness.providers.base.Sample`) makes every seat of every game its own draw: two seats
that see the same prompt (round 1 of self-play) or one model facing several opponents get
independent answers rather than one answer replayed; it holds no run id, so the same experiment
run again is answered from the cache.

SQLite objects must not be shared across threads, so :class:`ResponseCache` keeps one
connection per thread. Calls take microseconds, but a write can wait up to the busy timeout
behind another process. Async code uses :meth:`ResponseCache.aget` and
:meth:`ResponseCache.aput`, which never make the event loop wait for another process:

* They first try on the event loop's own thread, with a connection that does not wait for
  locks at all (busy timeout 0): a read in WAL mode takes microseconds and does not wait for
  writers; a write holds the lock for well under a millisecond. Only if the file is busy (another
  process writing, or a checkpoint that blocks) does the call go to a worker thread, which waits
  up to the busy timeout as :meth:`get` and :meth:`put` do. Hopping to a worker thread for every
  call cost more than the call itself (a fifth of a millisecond on one core).
* They are grouped by turn of the event loop: the ``aget`` calls of one turn (the games that
  reached a new round together) become one query, and the ``aput`` calls of one turn (the games
  whose answers came in together) one transaction, since a commit, which writes every page its
  rows touched, costs more than the rows. Each call adds its key or row and yields once; the first
  of them to run again does the work for all, so no call waits on another. Each ``aput`` returns
  only once its row is committed, so an answer is stored before the call path returns it, exactly
  as with a plain :meth:`put`: a round is never recorded before the answers it used are in the
  cache, and a resumed run never pays twice.
* That connection never checkpoints the WAL itself (a checkpoint waits for the disk, and it
  would wait on the event loop); every ``CHECKPOINT_ROWS`` rows written, a background thread
  runs a passive checkpoint, which blocks no reader or writer. :meth:`close` waits for it.

A file that is not a readable cache raises :class:`~harness.errors.StoreError` naming
the file and the way out (``pdbench cache clear`` or deleting it), never a raw sqlite3 error.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from json.encoder import encode_basestring, encode_basestring_ascii
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from harness.errors import CacheLost, DiskFull, StoreError

T = TypeVar("T")
log = logging.getLogger("pdbench.cache")

SCHEMA_VERSION = 2  # 2: the ledger of paid answers, and claims on requests in flight
BUSY_TIMEOUT_S = 30.0
CHECKPOINT_ROWS = 1000  # rows written by aput between two background WAL checkpoints
_SELECT = "SELECT text, input_tokens, output_tokens, model, provider, created_us, raw_json FROM responses WHERE key = ?"
_SELECT_MANY = {
    size: "SELECT key, text, input_tokens, output_tokens, model, provider, created_us, raw_json FROM responses "
    f"WHERE key IN ({', '.join('?' * size)})"
    for size in (1, 2, 4, 8, 16, 32, 64, 128, 256)
}
_INSERT = (
    "INSERT OR IGNORE INTO responses (key, provider, model, text, input_tokens, output_tokens, raw_json, created_us) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)

_SCHEMA = """
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
"""
_CLAIM = (
    "INSERT INTO claims (key, owner, expires_us) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
    "owner = excluded.owner, expires_us = excluded.expires_us "
    "WHERE claims.expires_us < ? OR claims.owner = excluded.owner"
)
_UNCLAIM = "DELETE FROM claims WHERE key = ? AND owner = ?"
_LEDGER_INSERT = "INSERT INTO ledger (run, call_id, key, record_json, created_us) VALUES (?, ?, ?, ?, ?)"


class Claim(IntEnum):
    """What :meth:`ResponseCache.aclaim` found."""

    CLAIMED = 0  # this process sends the request
    ANSWERED = 1  # the answer is stored: read it
    HELD = 2  # another process is sending it: wait for its answer


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """An answer paid for by a run: ``run`` is "<absolute results file>#<run id>", ``record_json`` the
    ``calls`` row it belongs in (see :meth:`ResponseCache.aput`)."""

    run: str
    record_json: str
    call_id: str  # the call within the run, to drop the entry once the results file holds the call


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class CachedResponse:
    """One stored answer. ``created_at`` comes back timezone-aware, in UTC."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    model: str
    provider: str
    created_at: datetime = field(default_factory=_utcnow)
    raw: dict[str, Any] | None = None


@dataclass(frozen=True)
class CacheStats:
    """What ``pdbench cache`` shows: size, age range, this process's hit rate, entries per model."""

    path: Path
    entries: int
    size_bytes: int
    hits: int
    misses: int
    oldest: datetime | None
    newest: datetime | None
    by_model: dict[tuple[str, str], int]  # (provider, reported model) -> entries

    @property
    def hit_rate(self) -> float | None:
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else None


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def canonical_json(value: Any) -> str:
    """The canonical JSON the cache key hashes: sorted keys, no spaces, UTF-8 text, no NaN or infinity."""
    return _CANONICAL(value)


def cache_key(
    provider: str,
    model: str,
    base_url: str | None,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    sample: dict[str, Any],
) -> str:
    """SHA-256 hex of the canonical JSON of exactly these fields (sorted keys, no spaces).

    A trailing ``/`` of the base URL is dropped (it names the same server). Parameters must
    be JSON values; a non-finite float is refused, since JSON has no spelling for it.
    """
    document = {
        "provider": provider,
        "model": model,
        "base_url": base_url.rstrip("/") if base_url else None,
        "messages": messages,
        "params": params,
        "sample": sample,
    }
    try:
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache key: messages and params must be plain JSON values ({exc})") from exc
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def cache_key_parts(
    provider: str, model: str, base_url: str | None, params: dict[str, Any], sample: dict[str, Any]
) -> tuple[str, str]:
    """The canonical document of :func:`cache_key` around its messages, as ``(head, tail)``.

    ``cache_key(...) == cache_key_join(head, canonical_json(messages), tail)``: a caller that
    makes many requests with the same provider, model, parameters and sample identity builds these
    once, and a caller that has the messages as canonical JSON already does not encode them again.
    """
    try:
        return (
            f'{{"base_url":{_CANONICAL(base_url.rstrip("/") if base_url else None)},"messages":',
            f',"model":{_CANONICAL(model)},"params":{_CANONICAL(params)},"provider":{_CANONICAL(provider)},'
            f'"sample":{_CANONICAL(sample)}}}',
        )  # the keys in sorted order, as json.dumps(sort_keys=True) writes them
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache key: messages and params must be plain JSON values ({exc})") from exc


def cache_key_join(head: str, messages_json: str, tail: str) -> str:
    """The key from :func:`cache_key_parts` and the messages as ``canonical_json(messages)``."""
    return hashlib.sha256(f"{head}{messages_json}{tail}".encode()).hexdigest()


_JSON_STRINGS: dict[str, str] = {}


def json_string(text: str) -> str:
    """``text`` as a JSON string literal, exactly as ``json.dumps(text, ensure_ascii=False)`` writes it.

    For ASCII text without DEL that is also what ``ensure_ascii=True`` writes. The strings of the
    latest requests are remembered: a request's messages are encoded for its record and cache key,
    and again by a provider that hashes them (the mock), and a system prompt recurs all game long.
    """
    try:
        return _JSON_STRINGS[text]
    except KeyError:
        pass
    # The ASCII escaper gives the same bytes for ASCII text without DEL, and is about twice as fast.
    literal = encode_basestring_ascii(text) if text.isascii() and "\x7f" not in text else encode_basestring(text)
    if len(_JSON_STRINGS) >= 256:
        _JSON_STRINGS.clear()
    _JSON_STRINGS[text] = literal
    return literal


def _to_us(moment: datetime) -> int:
    """Microseconds since the epoch, exactly; a naive datetime is taken as local time."""
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return (moment - _EPOCH) // _US


def _from_us(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def cache_files(path: Path) -> list[Path]:
    """The database file and its WAL companions (which hold recent writes until a checkpoint)."""
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def delete_cache(path: str | Path) -> bool:
    """Delete a cache file and its companions even if it is corrupt; ``True`` if there was one.

    The way out when :class:`ResponseCache` refuses a file: ``pdbench cache clear`` can fall
    back to it when opening fails.
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


_OPEN, _RUNNING, _DONE = 0, 1, 2


class _Group:
    """The ``aget`` keys, or the ``aput`` rows, of one turn of the event loop (see the module doc).

    Each call adds its part and yields once; the first of them to run again does the work for all
    (one query, or one transaction). No call waits for another, unless the file was busy and the
    work went to a worker thread: then the others wait for it.
    """

    __slots__ = ("error", "event", "items", "keys", "result", "state")

    def __init__(self) -> None:
        self.items: list[Any] = []  # keys to look up, or rows to insert
        self.keys: dict[str, CachedResponse] = {}  # rows to insert: readable by aget until committed
        self.state = _OPEN
        self.result: Any = None  # {key: row} found, or [stored?] per row
        self.error: BaseException | None = None
        self.event: anyio.Event | None = None  # made when a call has to wait for the work


def _code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of an error (extended codes folded into their primary one)."""
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def _busy(exc: sqlite3.Error) -> bool:
    return _code(exc) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _identity(path: Path) -> tuple[int, int] | None:
    """The file's (device, inode), or None if it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


_HOST = socket.gethostname()


def _owner_alive(owner: str) -> bool:
    """Whether the process that made a claim may still answer it: True unless it is a process of this
    machine that is gone."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != _HOST or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, but not ours to signal
    return True


def set_aside(path: Path) -> Path:
    """Rename a broken cache file and its companions to ``<name>.corrupt-<UTC time>``; returns the new name."""
    stamp = _utcnow().strftime("%Y%m%d%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    for file, suffix in zip(cache_files(path), ("", "-wal", "-shm"), strict=True):
        with contextlib.suppress(FileNotFoundError):
            file.rename(target.with_name(target.name + suffix))
    return target


_CORRUPT = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


class ResponseCache:
    """SQLite response cache at ``path`` (parent folders are created), safe across threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._nowait_connections: dict[threading.Thread, sqlite3.Connection] = {}  # see _nowait
        self._lock = threading.Lock()  # guards the connection maps, the hit/miss counters and checkpoints
        self._hits = 0
        self._misses = 0
        self._closed = False
        self._rows_since_checkpoint = 0
        self._checkpointer: threading.Thread | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"Cannot create the folder of the response cache {self.path}: {exc}. "
                "Choose another results folder with --results."
            ) from exc
        with self._guard("open"):
            self._connect()  # open and check now, so a bad file is reported before any game starts
        self._identity = _identity(self.path)  # to notice the file being deleted or replaced while in use
        # Whose claims are whose (see aclaim): this machine, this process, this cache object.
        self.owner = f"{_HOST}:{os.getpid()}:{id(self):x}{time.time_ns():x}"

    def check_file(self) -> None:
        """Raise :class:`CacheLost` if the file was deleted or replaced since it was opened: SQLite
        would go on writing to the unlinked file, and every answer written would be lost on close."""
        if _identity(self.path) != self._identity:
            raise CacheLost(f"The response cache {self.path} was deleted or replaced while in use.", vanished=True)

    @classmethod
    def open_or_renew(cls, path: str | Path) -> ResponseCache:
        """Open the cache at ``path``; if it is corrupt, move it aside (``<name>.corrupt-<time>``, kept
        for inspection), warn, and start a fresh one there: a broken cache costs its answers, never
        the run (a resumed run takes the answers it recorded from its own results file)."""
        try:
            return cls(path)
        except CacheLost as exc:
            moved = set_aside(Path(path))
            log.warning("%s It was moved to %s; PDBench goes on with a fresh cache.", exc, moved)
            return cls(path)

    # ---- connections ------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        """This thread's connection, opened (and the schema ensured) on first use."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise StoreError(f"The response cache {self.path} was closed; open a new ResponseCache.")
        # check_same_thread=False only so that close() may close every thread's connection;
        # each connection is otherwise used by the thread that opened it alone.
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            self._init(conn)
        except BaseException:
            conn.close()
            raise
        self._local.conn = conn
        with self._lock:
            # Worker threads come and go (anyio retires idle ones): close the connections of
            # finished threads so that a long run does not accumulate open files.
            for thread in [t for t in self._connections if not t.is_alive()]:
                self._connections.pop(thread).close()
            self._connections[threading.current_thread()] = conn
        return conn

    def _nowait(self) -> sqlite3.Connection:
        """This thread's connection for the async calls: it never waits for a lock (busy timeout 0)
        and never checkpoints (see the module doc). Opened on first use; the schema is in place."""
        conn: sqlite3.Connection | None = getattr(self._local, "nowait", None)
        if conn is not None:
            return conn
        if self._closed:
            raise StoreError(f"The response cache {self.path} was closed; open a new ResponseCache.")
        conn = sqlite3.connect(self.path, timeout=0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
        except BaseException:
            conn.close()
            raise
        self._local.nowait = conn
        with self._lock:
            for thread in [t for t in self._nowait_connections if not t.is_alive()]:
                self._nowait_connections.pop(thread).close()
            self._nowait_connections[threading.current_thread()] = conn
        return conn

    def _init(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # reads the header: fails on a non-database
        if version < SCHEMA_VERSION:
            conn.execute("PRAGMA schema_version").fetchone()  # reads the schema: fails on a corrupt one
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"The response cache {self.path} was written by a newer PDBench (cache schema {version}, "
                f"this one knows {SCHEMA_VERSION}). Upgrade PDBench, or run `pdbench cache clear` to start afresh."
            )
        self._with_retry(lambda: conn.execute("PRAGMA journal_mode=WAL"))
        conn.execute("PRAGMA synchronous=NORMAL")  # in WAL: durable on commit except on power loss; fine for a cache
        if version < SCHEMA_VERSION:
            self._with_retry(lambda: conn.executescript(_SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};"))

    @staticmethod
    def _with_retry(step: Callable[[], object]) -> None:
        """Run a schema or journal-mode step, retrying while another process holds the lock.

        Changing the journal mode can report "database is locked" at once, without waiting
        for the busy timeout, when several processes open a new file together.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                step()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Turn any sqlite3 failure into a StoreError that names the file and the way out."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self._store_error(action, exc) from exc

    def _store_error(self, action: str, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        code = _code(exc)
        if code == sqlite3.SQLITE_FULL:
            return DiskFull(f"The disk holding the response cache {self.path} is full (sqlite: {text}). Free some "
                            "space, then `pdbench resume` the run: every answer recorded so far is kept.")  # fmt: skip
        if code in _CORRUPT:
            return CacheLost(f"The response cache {self.path} is corrupt or not a PDBench cache (sqlite: {text}). "
                             "Runs move such a file aside and go on with a fresh cache; otherwise run "
                             f"`pdbench cache clear`, or delete the file (and any {self.path.name}-wal / -shm "
                             "next to it); only cached answers are lost.")  # fmt: skip
        if _busy(exc):
            hint = (
                f"another process kept it locked for more than {BUSY_TIMEOUT_S:.0f} s. "
                "Try again, or stop the other process."
            )
        elif "unable to open" in text:
            hint = "check that the path is a file in a folder you can write to, or choose another --results folder."
        else:
            hint = (
                "it looks corrupt or is not a PDBench cache. Run `pdbench cache clear`, or delete the file "
                f"(and any {self.path.name}-wal / -shm next to it); only cached answers are lost."
            )
        return StoreError(f"Cannot {action} the response cache {self.path} (sqlite: {text}): {hint}")

    def close(self) -> None:
        """Close every thread's connection. Call when no other thread or task is still using the cache.

        Every ``aput`` that returned is committed already, and so is, here, the row of one that was
        cancelled before its commit; a background checkpoint still running is waited for.
        """
        batch: _Group | None = getattr(self._local, "batch", None)
        if batch is not None and batch.state == _OPEN:  # rows of calls that were cancelled: commit them
            with contextlib.suppress(Exception):
                batch.result = self._write(self._connect(), batch.items)
                self._close(batch, "batch")
        with self._lock:
            self._closed = True
            checkpointer, self._checkpointer = self._checkpointer, None
        if checkpointer is not None:
            checkpointer.join()
        with self._lock:
            connections, self._connections = self._connections, {}
            nowait, self._nowait_connections = self._nowait_connections, {}
        for conn in [*nowait.values(), *connections.values()]:
            conn.close()
        self._local = threading.local()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- reads and writes -------------------------------------------------------------------

    def get(self, key: str) -> CachedResponse | None:
        """The stored answer for ``key``, or ``None``; counts a hit or a miss."""
        with self._guard("read"):
            row = self._connect().execute(_SELECT, (key,)).fetchone()
        return self._answer(row)

    def _count(self, hits: int, misses: int) -> None:
        with self._lock:
            self._hits += hits
            self._misses += misses

    def _answer(self, row: tuple[Any, ...] | None, *, count: bool = True) -> CachedResponse | None:
        """A row of ``_SELECT`` as a response, counting a hit or a miss unless told not to."""
        if count:
            self._count(row is not None, row is None)
        if row is None:
            return None
        text, input_tokens, output_tokens, model, provider, created_us, raw_json = row
        try:
            raw = json.loads(raw_json) if raw_json is not None else None
        except ValueError as exc:
            raise StoreError(
                f"The response cache {self.path} holds an unreadable entry ({exc}). "
                "Run `pdbench cache clear`, or delete the file."
            ) from exc
        return CachedResponse(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            model=model,
            provider=provider,
            created_at=_from_us(created_us),
            raw=raw,
        )

    @staticmethod
    def _row(key: str, response: CachedResponse) -> tuple[Any, ...]:
        """The ``_INSERT`` parameters for ``response``; ValueError if ``raw`` is not plain JSON."""
        try:
            raw_json = None if response.raw is None else json.dumps(response.raw, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"CachedResponse.raw must be plain JSON values ({exc})") from exc
        return (key, response.provider, response.model, response.text, response.input_tokens,
                response.output_tokens, raw_json, _to_us(response.created_at))  # fmt: skip

    def put(self, key: str, response: CachedResponse, ledger: LedgerEntry | None = None) -> bool:
        """Store ``response`` under ``key`` unless the key is already there (first writer wins), with
        its ``ledger`` entry if given. Returns ``True`` if this call stored the response."""
        with self._guard("write to"):
            return self._write(self._connect(), [(*self._row(key, response), ledger)])[0]

    def ledger(self, run: str) -> list[tuple[str, str]]:
        """The (key, record JSON) of every answer paid for by ``run`` and not yet forgotten, oldest first."""
        with self._guard("read"):
            return list(self._connect().execute(
                "SELECT key, record_json FROM ledger WHERE run = ? ORDER BY created_us, rowid", (run,)
            ))  # fmt: skip

    def forget_ledger(self, run: str, call_ids: list[str] | None = None) -> int:
        """Drop ``run``'s ledger entries (those of ``call_ids``, or all), once its results file holds the calls
        they record: the writer does so after each batch, so the ledger holds only the calls not yet written."""
        with self._guard("write to"):
            conn = self._connect()
            if call_ids is None:
                return conn.execute("DELETE FROM ledger WHERE run = ?", (run,)).rowcount
            deleted = 0
            for i in range(0, len(call_ids), 500):
                chunk = call_ids[i : i + 500]
                deleted += conn.execute(
                    f"DELETE FROM ledger WHERE run = ? AND call_id IN ({', '.join('?' * len(chunk))})", (run, *chunk)
                ).rowcount
            return deleted

    async def aget(self, key: str) -> CachedResponse | None:
        """:meth:`get` for async code: the lookups of one turn of the event loop are made together, in
        one query on the event loop's thread, unless the file is busy (module doc). Always a checkpoint."""
        batch: _Group | None = getattr(self._local, "batch", None)
        if batch is not None and (pending := batch.keys.get(key)) is not None:
            await anyio.lowlevel.checkpoint()
            self._count(1, 0)
            return pending  # to be committed in this turn of the event loop
        lookup: _Group | None = getattr(self._local, "lookup", None)
        if lookup is None:
            lookup = self._local.lookup = _Group()
        lookup.items.append(key)
        await anyio.lowlevel.checkpoint()  # the other lookups of this turn join
        if lookup.state != _DONE:
            await self._settle(lookup, "lookup", self._select, self._select_waiting, "read")
        if lookup.error is not None:
            raise lookup.error
        return self._answer(lookup.result.get(key), count=False)  # counted for the whole lookup

    async def aput(self, key: str, response: CachedResponse, ledger: LedgerEntry | None = None) -> bool:
        """:meth:`put` for async code: group-committed on the event loop's thread unless the file is
        busy (module doc). Returns once the row is committed; ``True`` if this call stored it.

        ``ledger`` (an answer paid for by a run) is written in the same transaction as the answer, so a
        paid answer is never in the cache without the record of which run, game, seat and round it was for.
        """
        row = (*self._row(key, response), ledger)
        batch: _Group | None = getattr(self._local, "batch", None)
        if batch is None:
            batch = self._local.batch = _Group()
        index = len(batch.items)
        batch.items.append(row)
        batch.keys.setdefault(key, response)
        try:
            await anyio.lowlevel.checkpoint()  # the other writes of this turn join
        except BaseException:  # cancelled: commit now if nobody else has and the file allows it
            if batch.state == _OPEN:
                with contextlib.suppress(Exception):  # else a later call, or close(), commits it
                    batch.result = self._write(self._nowait(), batch.items)
                    self._close(batch, "batch")
            raise
        if batch.state != _DONE:
            await self._settle(batch, "batch", self._write, self._write_waiting, "write to")
        if batch.error is not None:
            raise batch.error
        return bool(batch.result[index])

    async def aclaim(self, key: str, lease_s: float) -> Claim:
        """Claim the sending of ``key`` for ``lease_s`` seconds, unless its answer is stored already
        (``ANSWERED``) or another process holds a live claim on it (``HELD``: wait, and ask again). The
        claims of one turn of the event loop are made in one transaction; a claim ends when
        :meth:`aput` stores the answer, or with :meth:`release`."""
        claims: _Group | None = getattr(self._local, "claims", None)
        if claims is None:
            claims = self._local.claims = _Group()
        index = len(claims.items)
        claims.items.append((key, _to_us(_utcnow()) + int(lease_s * 1e6)))
        await anyio.lowlevel.checkpoint()
        if claims.state != _DONE:
            await self._settle(claims, "claims", self._claim, self._claim_waiting, "write to")
        if claims.error is not None:
            raise claims.error
        return Claim(claims.result[index])

    def _claim_waiting(self, items: list[tuple[str, int]]) -> list[int]:
        return self._claim(self._connect(), items)

    def _claim(self, conn: sqlite3.Connection, items: list[tuple[str, int]]) -> list[int]:
        self.check_file()
        now = _to_us(_utcnow())
        conn.execute("BEGIN IMMEDIATE")
        try:
            answered = set(self._select(conn, [key for key, _ in items]))
            result = [
                Claim.ANSWERED if key in answered
                else Claim.CLAIMED if conn.execute(_CLAIM, (key, self.owner, expires, now)).rowcount == 1
                or self._take_over(conn, key, expires)
                else Claim.HELD
                for key, expires in items
            ]  # fmt: skip
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result

    def _take_over(self, conn: sqlite3.Connection, key: str, expires: int) -> bool:
        """Take ``key``'s claim if its owner is a process of this machine that no longer runs (killed
        mid-request): its answer will never come, so waiting out its lease would only stall this run."""
        row = conn.execute("SELECT owner FROM claims WHERE key = ?", (key,)).fetchone()
        if row is None or _owner_alive(row[0]):
            return False
        return conn.execute("UPDATE claims SET owner = ?, expires_us = ? WHERE key = ? AND owner = ?",
                            (self.owner, expires, key, row[0])).rowcount == 1  # fmt: skip

    def release(self, key: str) -> None:
        """End this process's claim on ``key`` without an answer (the request failed or was abandoned)."""
        with self._guard("write to"):
            self._connect().execute(_UNCLAIM, (key, self.owner))

    def _close(self, group: _Group, slot: str) -> None:
        """Mark ``group`` done; calls from now on start a new one."""
        if getattr(self._local, slot, None) is group:
            setattr(self._local, slot, None)
        group.state = _DONE
        if group.event is not None:
            group.event.set()

    async def _settle(
        self,
        group: _Group,
        slot: str,
        run: Callable[[sqlite3.Connection, list[Any]], Any],
        run_waiting: Callable[[list[Any]], Any],
        action: str,
    ) -> None:
        """Do ``group``'s work for all its calls, unless one of them is doing it already: then wait."""
        if group.state == _RUNNING:  # on a worker thread: the file was busy
            if group.event is None:
                group.event = anyio.Event()
            await group.event.wait()
            return
        if getattr(self._local, slot, None) is group:
            setattr(self._local, slot, None)  # from now on, calls start a new group
        group.state = _RUNNING
        try:
            try:
                group.result = run(self._nowait(), group.items)
            except sqlite3.Error as exc:
                if not _busy(exc):
                    raise
                with anyio.CancelScope(shield=True):  # the other calls rely on it
                    group.result = await self._in_thread(run_waiting, group.items)
        except sqlite3.Error as exc:
            group.error = self._store_error(action, exc)
        except Exception as exc:  # a closed cache (StoreError), or a bug: every call sees it
            group.error = exc
        finally:
            if group.result is None and group.error is None:
                group.error = StoreError(f"A {action} of the response cache {self.path} was interrupted.")
            self._close(group, slot)
        if group.error is not None:
            return
        if slot == "batch":
            self._count_written(len(group.items))
        elif slot == "lookup":
            hits = sum(key in group.result for key in group.items)
            self._count(hits, len(group.items) - hits)

    def _select_waiting(self, keys: list[str]) -> dict[str, tuple[Any, ...]]:
        """``_select`` with this (worker) thread's connection, which waits for the lock."""
        return self._select(self._connect(), keys)

    @staticmethod
    def _select(conn: sqlite3.Connection, keys: list[str]) -> dict[str, tuple[Any, ...]]:
        """The ``_SELECT`` row of each of ``keys`` that is stored, in one statement per 256 keys."""
        unique = list(dict.fromkeys(keys))
        rows: dict[str, tuple[Any, ...]] = {}
        for i in range(0, len(unique), 256):
            chunk = unique[i : i + 256]
            size = 1 << (len(chunk) - 1).bit_length()  # a few statement shapes, so they stay prepared
            chunk += chunk[-1:] * (size - len(chunk))
            for key, *row in conn.execute(_SELECT_MANY[size], chunk):
                rows[key] = tuple(row)
        return rows

    def _write_waiting(self, rows: list[tuple[Any, ...]]) -> list[bool]:
        """``_write`` with this (worker) thread's connection, which waits for the lock."""
        return self._write(self._connect(), rows)

    def _write(self, conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> list[bool]:
        """Insert ``rows`` (a response row and its ledger entry or None) in one transaction; for each,
        whether the response was stored (first writer wins; the ledger entry is written either way)."""
        self.check_file()
        ledger = [(e.run, e.call_id, r[0], e.record_json, r[-1]) for *r, e in rows if e is not None]
        conn.execute("BEGIN IMMEDIATE")
        try:
            stored = [conn.execute(_INSERT, row[:-1]).rowcount == 1 for row in rows]
            if ledger:
                conn.executemany(_LEDGER_INSERT, ledger)
            conn.executemany(_UNCLAIM, [(row[0], self.owner) for row in rows])
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return stored

    def _count_written(self, rows: int) -> None:
        """Start a background checkpoint every CHECKPOINT_ROWS rows written by the no-wait connections."""
        with self._lock:
            self._rows_since_checkpoint += rows
            if self._rows_since_checkpoint < CHECKPOINT_ROWS or self._closed:
                return
            if self._checkpointer is not None and self._checkpointer.is_alive():
                return
            self._rows_since_checkpoint = 0
            self._checkpointer = threading.Thread(target=self._checkpoint, name="pdbench-cache-checkpoint",
                                                  daemon=True)  # fmt: skip
            self._checkpointer.start()

    def _checkpoint(self) -> None:
        """A passive checkpoint: copies what it can of the WAL into the file, blocking nobody."""
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            finally:
                conn.close()
        except sqlite3.Error:
            pass  # a later checkpoint, or the last connection's close, does it

    @staticmethod
    async def _in_thread(func: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(functools.partial(func, *args))

    # ---- maintenance ------------------------------------------------------------------------

    def stats(self) -> CacheStats:
        """Entries, size on disk, age range, entries per (provider, model), and this process's hits/misses."""
        with self._guard("read"):
            conn = self._connect()
            entries, oldest, newest = conn.execute(
                "SELECT count(*), min(created_us), max(created_us) FROM responses"
            ).fetchone()
            by_model = {
                (provider, model): n
                for provider, model, n in conn.execute(
                    "SELECT provider, model, count(*) FROM responses GROUP BY provider, model ORDER BY provider, model"
                )
            }
        size = sum(f.stat().st_size for f in cache_files(self.path) if f.exists())
        with self._lock:
            hits, misses = self._hits, self._misses
        return CacheStats(
            path=self.path,
            entries=entries,
            size_bytes=size,
            hits=hits,
            misses=misses,
            oldest=_from_us(oldest) if oldest is not None else None,
            newest=_from_us(newest) if newest is not None else None,
            by_model=by_model,
        )

    def clear(self, older_than: datetime | None = None) -> int:
        """Delete every entry, or those created before ``older_than``; returns how many.

        Then gives the space back to the file system (VACUUM and a WAL truncation), unless
        another process is using the file, in which case the space is reused later instead.
        """
        with self._guard("clear"):
            conn = self._connect()
            if older_than is None:
                conn.execute("DELETE FROM ledger")
                conn.execute("DELETE FROM claims")
                deleted = conn.execute("DELETE FROM responses").rowcount
            else:
                conn.execute("DELETE FROM ledger WHERE created_us < ?", (_to_us(older_than),))
                deleted = conn.execute("DELETE FROM responses WHERE created_us < ?", (_to_us(older_than),)).rowcount
        try:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:
            pass  # busy elsewhere: the rows are gone, only the file stays larger for now
        return deleted
