"""Response cache: a model's answer to an exact request is paid for once, by any run or process.

The cache is one SQLite file (:mod:`harness.calls.cache.file` says why SQLite) shared by every run, and
:class:`ResponseCache` composes its jobs, each in its own module: the stored answers
(:mod:`~harness.calls.cache.responses`, under keys from :mod:`~harness.calls.cache.keys`), the ledger of
paid calls (:mod:`~harness.calls.cache.ledger`), the claims on requests in flight
(:mod:`~harness.calls.cache.claims`), this process's connections to the file
(:mod:`~harness.calls.cache.storage`), and the grouping of async calls by turn of the event loop
(:mod:`~harness.calls.cache.turns`).

Each write is a short transaction (the few dozen answers of one turn of the event loop), so a writer
holds the lock for about a millisecond at most. Async code uses :meth:`ResponseCache.aget` and
:meth:`ResponseCache.aput`, which never make the event loop wait for another process. Each ``aput``
returns only once its row is committed, so an answer is stored before the call path returns it: a round
is never recorded before the answers it used are in the cache, and a resumed run never pays twice.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime
from pathlib import Path

import anyio.lowlevel

from harness.calls.cache import batches, claims, ledger, responses
from harness.calls.cache.batches import BatchItem
from harness.calls.cache.claims import Claim
from harness.calls.cache.file import give_back_space, set_aside, to_us, transaction, utcnow
from harness.calls.cache.ledger import LedgerEntry
from harness.calls.cache.responses import CachedResponse, CacheStats, Row
from harness.calls.cache.storage import Storage
from harness.calls.cache.turns import Group, GroupState, Turns
from harness.errors import CacheLost, StoreError

log = logging.getLogger("pdbench.cache")

Write = tuple[Row, LedgerEntry | None]  # a responses row to insert, and the ledger entry written with it


class ResponseCache:
    """SQLite response cache at ``path`` (parent folders are created), safe across threads and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._storage = Storage(self.path)
        self._lookups = Turns(self._storage)  # aget
        self._writes = Turns(self._storage)  # aput
        self._claiming = Turns(self._storage)  # aanswer_or_claim
        self.owner = claims.new_owner(self)  # whose claims are whose (see aclaim)

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

    def close(self) -> None:
        """Close every thread's connection. Call when no other thread or task is still using the cache.

        Every ``aput`` that returned is committed already, and so is, here, the row of one that was
        cancelled before its commit; a background checkpoint still running is waited for.
        """
        batch = self._writes.current()
        if batch is not None:  # rows of calls that were cancelled: commit them
            self._writes.do_now(batch, self._store, self._storage.waiting)
        self._storage.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the ledger and claims, from worker threads -----------------------------------------

    def ledger(self, run: str) -> list[tuple[str, str]]:
        """The (key, record JSON) of every answer paid for by ``run`` and not yet forgotten, oldest first."""
        with self._storage.guard("read"):
            return ledger.entries(self._storage.waiting(), run)

    def forget_ledger(self, run: str, call_ids: list[str] | None = None) -> int:
        """Drop ``run``'s ledger entries (those of ``call_ids``, or all), once its results file holds the calls
        they record: the writer does so after each batch, so the ledger holds only the calls not yet written."""
        with self._storage.guard("write to"):
            return ledger.forget(self._storage.waiting(), run, call_ids)

    def release(self, key: str) -> None:
        """End this process's claim on ``key`` without an answer (the request failed or was abandoned)."""
        with self._storage.guard("write to"):
            claims.release(self._storage.waiting(), self.owner, key)

    # ---- provider batches that are out (see harness.calls.cache.batches), from worker threads -------------

    def add_batch(self, submission: str, endpoint: str, items: list[tuple[str, str]]) -> None:
        """Store a submission before it is sent: its endpoint and its ``(key, custom id)`` items."""
        with self._storage.guard("write to"):
            batches.add_submission(self._storage.waiting(), submission, endpoint, items, to_us(utcnow()))

    def batch_sent(self, submission: str, batch_id: str) -> None:
        """The provider's id for a stored submission."""
        with self._storage.guard("write to"):
            batches.set_batch_id(self._storage.waiting(), submission, batch_id)

    def batch_ended(self, submission: str, results: dict[str, str]) -> None:
        """An ended batch's raw results, kept until each item's answer is stored."""
        with self._storage.guard("write to"):
            batches.set_results(self._storage.waiting(), submission, results)

    def batch_item(self, key: str) -> BatchItem | None:
        """The batch request ``key`` went into, if any is not yet collected."""
        with self._storage.guard("read"):
            return batches.find(self._storage.waiting(), key)

    def batch_ids(self) -> frozenset[str]:
        """The provider ids of every stored submission (a lost batch is never taken for one of these)."""
        with self._storage.guard("read"):
            return batches.ids(self._storage.waiting())

    def batches_out(self) -> int:
        """Stored submissions not yet collected (``pdbench cache stats`` shows them; ``clear`` keeps them)."""
        with self._storage.guard("read"):
            return batches.out(self._storage.waiting())

    def forget_batch_items(self, keys: list[str]) -> None:
        """Drop the batch items of ``keys`` (their answers are stored, or they failed and are asked again)."""
        with self._storage.guard("write to"):
            batches.forget_items(self._storage.waiting(), keys)

    def forget_batch(self, submission: str) -> None:
        """Drop a submission that was never created or that the provider refused as a whole."""
        with self._storage.guard("write to"):
            batches.forget_submission(self._storage.waiting(), submission)

    # ---- async reads and writes, grouped by turn of the event loop ---------------------------

    async def aget(self, key: str) -> CachedResponse | None:
        """The stored answer for ``key``, or ``None``: the lookups of one turn of the event loop are made
        together, in one query on the event loop's thread, unless the file is busy. Always a checkpoint."""
        batch = self._writes.current()
        pending: CachedResponse | None = None if batch is None else batch.pending.get(key)
        if pending is not None:
            await anyio.lowlevel.checkpoint()
            return pending  # to be committed in this turn of the event loop
        lookup: Group[str] = self._lookups.join()
        lookup.items.append(key)
        await anyio.lowlevel.checkpoint()  # the other lookups of this turn join
        if lookup.state is not GroupState.DONE:
            await self._lookups.settle(lookup, responses.select, "read")
        if lookup.error is not None:
            raise lookup.error
        return responses.from_row(lookup.result.get(key), self.path)

    async def aput(self, key: str, response: CachedResponse, ledger: LedgerEntry | None = None) -> bool:
        """Store ``response`` under ``key`` unless the key is already there (first writer wins): group-committed
        on the event loop's thread unless the file is busy. Returns once the row is committed; ``True`` if this
        call stored it.

        ``ledger`` (an answer paid for by a run) is written in the same transaction as the answer, so a
        paid answer is never in the cache without the record of which run, game, seat and round it was for.
        """
        row = responses.to_row(key, response)
        batch: Group[Write] = self._writes.join()
        index = len(batch.items)
        batch.items.append((row, ledger))
        batch.pending.setdefault(key, response)
        try:
            await anyio.lowlevel.checkpoint()  # the other writes of this turn join
        except BaseException:  # cancelled: commit now if nobody else has and the file allows it
            self._writes.do_now(batch, self._store, self._storage.nowait)
            raise
        if (
            batch.state is not GroupState.DONE
            and await self._writes.settle(batch, self._store, "write to")
            and batch.error is None
        ):
            self._storage.written(len(batch.items))
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
        group: Group[tuple[str, int]] = self._claiming.join()
        index = len(group.items)
        group.items.append((key, to_us(utcnow()) + int(lease_s * 1e6)))
        await anyio.lowlevel.checkpoint()  # the other claims of this turn join
        if group.state is not GroupState.DONE:
            await self._claiming.settle(group, self._claim, "write to")
        if group.error is not None:
            raise group.error
        claim, row = group.result[index]
        try:
            return claim, responses.from_row(row, self.path)
        except StoreError:
            return claim, None

    def _store(self, conn: sqlite3.Connection, writes: list[Write]) -> list[bool]:
        """Insert ``writes`` in one transaction, with their ledger entries, ending this process's claims on
        them; for each, whether the response was stored (the ledger entry is written either way)."""
        self._storage.check_file()
        with transaction(conn):
            stored = responses.insert(conn, [row for row, _ in writes])
            # A row holds its key first and its created_us last (see responses.to_row).
            ledger.add_entries(conn, [(entry, row[0], row[-1]) for row, entry in writes if entry is not None])
            claims.release_answered(conn, self.owner, [row[0] for row, _ in writes])
        return stored

    def _claim(self, conn: sqlite3.Connection, items: list[tuple[str, int]]) -> list[tuple[Claim, Row | None]]:
        self._storage.check_file()
        return claims.answer_or_claim(conn, self.owner, items)

    # ---- maintenance ------------------------------------------------------------------------

    def stats(self) -> CacheStats:
        """Entries, size on disk, age range and entries per (provider, model)."""
        with self._storage.guard("read"):
            return responses.stats(self._storage.waiting(), self.path)

    def clear(self, older_than: datetime | None = None) -> int:
        """Delete every entry, or those created before ``older_than``; returns how many.

        Then gives the space back to the file system, unless another process is using the file, in
        which case the space is reused later instead.
        """
        cutoff = None if older_than is None else to_us(older_than)
        with self._storage.guard("clear"):
            conn = self._storage.waiting()
            ledger.forget_older(conn, cutoff)
            if cutoff is None:
                claims.clear(conn)  # batches out are kept: they were paid for, and a resume collects them
            deleted = responses.delete(conn, cutoff)
        give_back_space(conn)
        return deleted
