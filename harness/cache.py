"""Response cache: a model's answer to an exact request is paid for once, by any run or process.

Why SQLite and not DuckDB: the cache is shared by every run, and runs may be separate
processes writing at the same time. DuckDB allows one writer per file; SQLite in WAL mode
lets any number of processes read while one writes, and queues writers behind a busy
timeout. Each write is one short ``INSERT OR IGNORE`` (autocommit), so a writer holds the
lock for well under a millisecond and the first writer of a key wins — harmless, because a
key identifies the request exactly, so any two values stored under it are equally valid
answers to it.

The key (:func:`cache_key`) is the SHA-256 of a canonical JSON of provider, model, base URL,
messages, parameters and sample index — the things that determine the distribution an answer
is drawn from. The API key is not an input: who pays does not change the answer, and a
secret must never reach a file. ``sample_index`` makes the replicates of a game at
temperature > 0 independent draws rather than one answer replayed.

SQLite objects must not be shared across threads, so :class:`ResponseCache` keeps one
connection per thread. Calls take microseconds, but a write can wait up to the busy timeout
behind another process; async code should use :meth:`ResponseCache.aget` and
:meth:`ResponseCache.aput`, which run the call in a worker thread so the event loop never
blocks. A file that is not a readable cache raises :class:`~harness.errors.StoreError` naming
the file and the way out (``pdbench cache clear`` or deleting it), never a raw sqlite3 error.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread

from harness.errors import StoreError

T = TypeVar("T")

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 30.0
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
"""


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


def cache_key(
    provider: str,
    model: str,
    base_url: str | None,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    sample_index: int,
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
        "sample_index": sample_index,
    }
    try:
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache key: messages and params must be plain JSON values ({exc})") from exc
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


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


class ResponseCache:
    """SQLite response cache at ``path`` (parent folders are created), safe across threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._lock = threading.Lock()  # guards _connections and the hit/miss counters
        self._hits = 0
        self._misses = 0
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"Cannot create the folder of the response cache {self.path}: {exc}. "
                "Choose another results folder with --results."
            ) from exc
        with self._guard("open"):
            self._connect()  # open and check now, so a bad file is reported before any game starts

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

    def _init(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # reads the header: fails on a non-database
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
            text = str(exc)
            if "locked" in text or "busy" in text:
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
            raise StoreError(f"Cannot {action} the response cache {self.path} (sqlite: {text}): {hint}") from exc

    def close(self) -> None:
        """Close every thread's connection. Call when no other thread is still using the cache."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, {}
        for conn in connections.values():
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
            row = (
                self._connect()
                .execute(
                    "SELECT text, input_tokens, output_tokens, model, provider, created_us, raw_json "
                    "FROM responses WHERE key = ?",
                    (key,),
                )
                .fetchone()
            )
        with self._lock:
            if row is None:
                self._misses += 1
            else:
                self._hits += 1
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

    def put(self, key: str, response: CachedResponse) -> bool:
        """Store ``response`` under ``key`` unless the key is already there (first writer wins).

        Returns ``True`` if this call stored it.
        """
        try:
            raw_json = None if response.raw is None else json.dumps(response.raw, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"CachedResponse.raw must be plain JSON values ({exc})") from exc
        with self._guard("write to"):
            cursor = self._connect().execute(
                "INSERT OR IGNORE INTO responses "
                "(key, provider, model, text, input_tokens, output_tokens, raw_json, created_us) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    response.provider,
                    response.model,
                    response.text,
                    response.input_tokens,
                    response.output_tokens,
                    raw_json,
                    _to_us(response.created_at),
                ),
            )
        return cursor.rowcount == 1

    async def aget(self, key: str) -> CachedResponse | None:
        """:meth:`get` in a worker thread, so a busy file never blocks the event loop."""
        return await self._in_thread(self.get, key)

    async def aput(self, key: str, response: CachedResponse) -> bool:
        """:meth:`put` in a worker thread, so a busy file never blocks the event loop."""
        return await self._in_thread(self.put, key, response)

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
                deleted = conn.execute("DELETE FROM responses").rowcount
            else:
                deleted = conn.execute("DELETE FROM responses WHERE created_us < ?", (_to_us(older_than),)).rowcount
        try:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:
            pass  # busy elsewhere: the rows are gone, only the file stays larger for now
        return deleted
