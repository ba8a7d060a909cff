"""Response cache: a model's answer to an exact request is paid for once, by any run or process.

The cache is one SQLite file (:mod:`harness.calls.cache.file` says why SQLite) shared by every run.
Each write is a short ``INSERT OR IGNORE`` (one, or the few dozen of one turn of an event loop in one
transaction), so a writer holds the lock for about a millisecond at most, and the first writer of a
key wins — harmless, because a key (:mod:`harness.calls.cache.keys`) identifies the request exactly,
so any two values stored under it are equally valid answers to it. Beside the answers the file holds
the ledger of paid calls (:mod:`harness.calls.cache.ledger`) and the claims on requests in flight
(:mod:`harness.calls.cache.claims`).

SQLite objects must not be shared across threads, so :class:`ResponseCache` keeps one connection
per thread. Calls take microseconds, but a write can wait up to the busy timeout behind another
process. Async code uses :meth:`ResponseCache.aget` and :meth:`ResponseCache.aput`, which never make
the event loop wait for another process and are grouped by turn of the event loop
(:mod:`harness.calls.cache.turns`). Each ``aput`` returns only once its row is committed, so an answer
is stored before the call path returns it, exactly as with a plain :meth:`~ResponseCache.put`: a round
is never recorded before the answers it used are in the cache, and a resumed run never pays twice.
The event loop's connection never checkpoints the WAL itself (a checkpoint waits for the disk);
every ``CHECKPOINT_ROWS`` rows written, a background thread runs a passive checkpoint, which blocks
no reader or writer. :meth:`~ResponseCache.close` waits for it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio.lowlevel

from harness.calls.cache import claims, ledger
from harness.calls.cache.claims import Claim
from harness.calls.cache.file import (
    cache_error,
    cache_files,
    checkpoint,
    connect_nowait,
    connect_waiting,
    file_identity,
    from_us,
    set_aside,
    to_us,
    utcnow,
)
from harness.calls.cache.ledger import LedgerEntry
from harness.calls.cache.turns import Group, GroupState, settle
from harness.errors import CacheLost, StoreError

log = logging.getLogger("pdbench.cache")

CHECKPOINT_ROWS = 1000  # rows written by aput between two background WAL checkpoints
_COLUMNS = "text, input_tokens, output_tokens, model, provider, created_us, raw_json"
_SELECT = f"SELECT {_COLUMNS} FROM responses WHERE key = ?"
_SELECT_MANY = {
    size: f"SELECT key, {_COLUMNS} FROM responses WHERE key IN ({', '.join('?' * size)})"
    for size in (1, 2, 4, 8, 16, 32, 64, 128, 256)
}  # a few statement shapes, so they stay prepared
_INSERT = (
    "INSERT OR IGNORE INTO responses (key, provider, model, text, input_tokens, output_tokens, raw_json, created_us) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)

Row = tuple[Any, ...]  # a responses row in _INSERT order
Write = tuple[Row, LedgerEntry | None]  # a row to store, and the ledger entry written with it


@dataclass(frozen=True)
class CachedResponse:
    """One stored answer. ``created_at`` comes back timezone-aware, in UTC."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    model: str
    provider: str
    created_at: datetime = field(default_factory=utcnow)
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


class ResponseCache:
    """SQLite response cache at ``path`` (parent folders are created), safe across threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()  # this thread's connections and open groups
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._nowait_connections: dict[threading.Thread, sqlite3.Connection] = {}
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
        self._identity = file_identity(self.path)
        self.owner = claims.new_owner(self)  # whose claims are whose (see aclaim)

    def check_file(self) -> None:
        """Raise :class:`CacheLost` if the file was deleted or replaced since it was opened: SQLite
        would go on writing to the unlinked file, and every answer written would be lost on close."""
        if file_identity(self.path) != self._identity:
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
        """This thread's connection that waits for the lock, opened (and the schema ensured) on first use."""
        return self._thread_connection("conn", self._connections, connect_waiting)

    def _nowait(self) -> sqlite3.Connection:
        """This thread's connection for the async calls, which never waits for a lock."""
        return self._thread_connection("nowait", self._nowait_connections, connect_nowait)

    def _thread_connection(
        self, slot: str, registry: dict[threading.Thread, sqlite3.Connection], connect: Any
    ) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, slot, None)
        if conn is not None:
            return conn
        if self._closed:
            raise StoreError(f"The response cache {self.path} was closed; open a new ResponseCache.")
        conn = connect(self.path)
        setattr(self._local, slot, conn)
        with self._lock:
            # Worker threads come and go (anyio retires idle ones): close the connections of
            # finished threads so that a long run does not accumulate open files.
            for thread in [t for t in registry if not t.is_alive()]:
                registry.pop(thread).close()
            registry[threading.current_thread()] = conn
        return conn

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Turn any sqlite3 failure into a StoreError that names the file and the way out."""
        try:
            yield
        except sqlite3.Error as exc:
            raise cache_error(self.path, action, exc) from exc

    def close(self) -> None:
        """Close every thread's connection. Call when no other thread or task is still using the cache.

        Every ``aput`` that returned is committed already, and so is, here, the row of one that was
        cancelled before its commit; a background checkpoint still running is waited for.
        """
        batch: Group[Write] | None = getattr(self._local, "batch", None)
        if batch is not None and batch.state is GroupState.OPEN:  # rows of calls that were cancelled: commit them
            with contextlib.suppress(Exception):
                batch.result = self._write(self._connect(), batch.items)
                self._detach(batch, "batch")
                batch.finish()
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
        self._count(row is not None, row is None)
        return self._answer(row)

    def put(self, key: str, response: CachedResponse, ledger: LedgerEntry | None = None) -> bool:
        """Store ``response`` under ``key`` unless the key is already there (first writer wins), with
        its ``ledger`` entry if given. Returns ``True`` if this call stored the response."""
        with self._guard("write to"):
            return self._write(self._connect(), [(self._row(key, response), ledger)])[0]

    def ledger(self, run: str) -> list[tuple[str, str]]:
        """The (key, record JSON) of every answer paid for by ``run`` and not yet forgotten, oldest first."""
        with self._guard("read"):
            return ledger.entries(self._connect(), run)

    def forget_ledger(self, run: str, call_ids: list[str] | None = None) -> int:
        """Drop ``run``'s ledger entries (those of ``call_ids``, or all), once its results file holds the calls
        they record: the writer does so after each batch, so the ledger holds only the calls not yet written."""
        with self._guard("write to"):
            return ledger.forget(self._connect(), run, call_ids)

    async def aget(self, key: str) -> CachedResponse | None:
        """:meth:`get` for async code: the lookups of one turn of the event loop are made together, in
        one query on the event loop's thread, unless the file is busy. Always a checkpoint."""
        batch: Group[Write] | None = getattr(self._local, "batch", None)
        pending: CachedResponse | None = None if batch is None else batch.pending.get(key)
        if pending is not None:
            await anyio.lowlevel.checkpoint()
            self._count(1, 0)
            return pending  # to be committed in this turn of the event loop
        lookup: Group[str] = self._open_group("lookup")
        lookup.items.append(key)
        await anyio.lowlevel.checkpoint()  # the other lookups of this turn join
        if (
            lookup.state is not GroupState.DONE
            and await self._settle(lookup, "lookup", self._select, "read")
            and lookup.error is None
        ):
            hits = sum(k in lookup.result for k in lookup.items)
            self._count(hits, len(lookup.items) - hits)
        if lookup.error is not None:
            raise lookup.error
        return self._answer(lookup.result.get(key))  # counted for the whole lookup

    async def aput(self, key: str, response: CachedResponse, ledger: LedgerEntry | None = None) -> bool:
        """:meth:`put` for async code: group-committed on the event loop's thread unless the file is
        busy. Returns once the row is committed; ``True`` if this call stored it.

        ``ledger`` (an answer paid for by a run) is written in the same transaction as the answer, so a
        paid answer is never in the cache without the record of which run, game, seat and round it was for.
        """
        row = self._row(key, response)
        batch: Group[Write] = self._open_group("batch")
        index = len(batch.items)
        batch.items.append((row, ledger))
        batch.pending.setdefault(key, response)
        try:
            await anyio.lowlevel.checkpoint()  # the other writes of this turn join
        except BaseException:  # cancelled: commit now if nobody else has and the file allows it
            if batch.state is GroupState.OPEN:
                with contextlib.suppress(Exception):  # else a later call, or close(), commits it
                    batch.result = self._write(self._nowait(), batch.items)
                    self._detach(batch, "batch")
                    batch.finish()
            raise
        if (
            batch.state is not GroupState.DONE
            and await self._settle(batch, "batch", self._write, "write to")
            and batch.error is None
        ):
            self._count_written(len(batch.items))
        if batch.error is not None:
            raise batch.error
        return bool(batch.result[index])

    async def aclaim(self, key: str, lease_s: float) -> Claim:
        """Claim the sending of ``key`` for ``lease_s`` seconds, unless its answer is stored already
        (``ANSWERED``) or another process holds a live claim on it (``HELD``: wait, and ask again). The
        claims of one turn of the event loop are made in one transaction; a claim ends when
        :meth:`aput` stores the answer, or with :meth:`release`."""
        return (await self.aanswer_or_claim(key, lease_s))[0]

    async def aanswer_or_claim(self, key: str, lease_s: float) -> tuple[Claim, CachedResponse | None]:
        """:meth:`aget` and :meth:`aclaim` in one step: the stored answer to ``key`` (``ANSWERED``), or else
        the claim on sending it, as :meth:`aclaim` makes it. A request about to be sent needs both, and one
        group per turn of the event loop costs less than two. The answer is None when none is stored, or
        when the stored one cannot be read (``ANSWERED``: :meth:`aget` then says why)."""
        group: Group[tuple[str, int]] = self._open_group("claims")
        index = len(group.items)
        group.items.append((key, to_us(utcnow()) + int(lease_s * 1e6)))
        await anyio.lowlevel.checkpoint()  # the other claims of this turn join
        if group.state is not GroupState.DONE:
            await self._settle(group, "claims", self._claim, "write to")
        if group.error is not None:
            raise group.error
        claim, row = group.result[index]
        if row is None:
            return claim, None
        try:
            return claim, self._answer(row)
        except StoreError:
            return claim, None

    def release(self, key: str) -> None:
        """End this process's claim on ``key`` without an answer (the request failed or was abandoned)."""
        with self._guard("write to"):
            claims.release(self._connect(), self.owner, key)

    # ---- the work of a group ------------------------------------------------------------------

    def _open_group(self, slot: str) -> Any:
        """This thread's open group of ``slot`` ("lookup", "batch", "claims"), made if there is none."""
        group = getattr(self._local, slot, None)
        if group is None:
            group = Group()
            setattr(self._local, slot, group)
        return group

    def _detach(self, group: Group[Any], slot: str) -> None:
        """Close ``group`` to new calls: the next call of its kind starts a new group."""
        if getattr(self._local, slot, None) is group:
            setattr(self._local, slot, None)

    async def _settle(self, group: Group[Any], slot: str, work: Any, action: str) -> bool:
        """Do ``group``'s ``work(connection, items)``, on this thread unless the file is busy; whether this
        call did it."""
        return await settle(
            group,
            lambda: self._detach(group, slot),
            lambda items: work(self._nowait(), items),
            lambda items: work(self._connect(), items),
            lambda exc: cache_error(self.path, action, exc),
            f"A {action} of the response cache {self.path} was interrupted.",
        )

    @staticmethod
    def _select(conn: sqlite3.Connection, keys: list[str]) -> dict[str, Row]:
        """The stored row of each of ``keys``, in one statement per 256 keys."""
        unique = list(dict.fromkeys(keys))
        rows: dict[str, Row] = {}
        for i in range(0, len(unique), 256):
            chunk = unique[i : i + 256]
            size = 1 << (len(chunk) - 1).bit_length()
            chunk += chunk[-1:] * (size - len(chunk))
            for key, *row in conn.execute(_SELECT_MANY[size], chunk):
                rows[key] = tuple(row)
        return rows

    def _write(self, conn: sqlite3.Connection, writes: list[Write]) -> list[bool]:
        """Insert ``writes`` (a response row and its ledger entry or None) in one transaction, ending this
        process's claims on them; for each, whether the response was stored (first writer wins; the ledger
        entry is written either way)."""
        self.check_file()
        conn.execute("BEGIN IMMEDIATE")
        try:
            stored = [conn.execute(_INSERT, row).rowcount == 1 for row, _ in writes]
            ledger.add_entries(conn, [(entry, row[0], row[-1]) for row, entry in writes if entry is not None])
            claims.release_answered(conn, self.owner, [row[0] for row, _ in writes])
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return stored

    def _claim(self, conn: sqlite3.Connection, items: list[tuple[str, int]]) -> list[tuple[Claim, Row | None]]:
        """For each ``(key, expires_us)``: its stored row (``ANSWERED``), found by a read that takes no lock;
        else the claim, made for all the others in one transaction (which looks for their rows again, since
        another process may have stored one meanwhile)."""
        self.check_file()
        stored = self._select(conn, [key for key, _ in items])
        unanswered = [(key, expires) for key, expires in items if key not in stored]
        made = iter(claims.claim(conn, self.owner, unanswered, to_us(utcnow()), lambda keys: self._select(conn, keys))
                    if unanswered else [])  # fmt: skip
        result: list[tuple[Claim, Row | None]] = [
            (Claim.ANSWERED, stored[key]) if key in stored else (next(made), None) for key, _ in items
        ]
        self._count(len(items) - len(unanswered), sum(claim is Claim.CLAIMED for claim, _ in result))
        return result

    def _count(self, hits: int, misses: int) -> None:
        with self._lock:
            self._hits += hits
            self._misses += misses

    def _answer(self, row: Row | None) -> CachedResponse | None:
        """A stored row (in ``_COLUMNS`` order) as a response."""
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
        return CachedResponse(text=text, input_tokens=input_tokens, output_tokens=output_tokens, model=model,
                              provider=provider, created_at=from_us(created_us), raw=raw)  # fmt: skip

    @staticmethod
    def _row(key: str, response: CachedResponse) -> Row:
        """The ``_INSERT`` parameters for ``response``; ValueError if ``raw`` is not plain JSON."""
        try:
            raw_json = None if response.raw is None else json.dumps(response.raw, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"CachedResponse.raw must be plain JSON values ({exc})") from exc
        return (key, response.provider, response.model, response.text, response.input_tokens,
                response.output_tokens, raw_json, to_us(response.created_at))  # fmt: skip

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
        checkpoint(self.path)

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
            oldest=from_us(oldest) if oldest is not None else None,
            newest=from_us(newest) if newest is not None else None,
            by_model=by_model,
        )

    def clear(self, older_than: datetime | None = None) -> int:
        """Delete every entry, or those created before ``older_than``; returns how many.

        Then gives the space back to the file system (VACUUM and a WAL truncation), unless
        another process is using the file, in which case the space is reused later instead.
        """
        cutoff = None if older_than is None else to_us(older_than)
        with self._guard("clear"):
            conn = self._connect()
            ledger.forget_older(conn, cutoff)
            if cutoff is None:
                claims.clear(conn)
                deleted: int = conn.execute("DELETE FROM responses").rowcount
            else:
                deleted = conn.execute("DELETE FROM responses WHERE created_us < ?", (cutoff,)).rowcount
        try:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:
            pass  # busy elsewhere: the rows are gone, only the file stays larger for now
        return deleted
