"""Provider batches that are out: which requests went into which batch, so none is ever bought twice.

A submission is stored *before* the batch is created (this side's name for it, the endpoint, its items' cache
keys and custom ids), its provider id as soon as the provider gives one, and each item's raw result as soon as
the batch has ended. So a process killed at any point leaves what the next one needs: an item whose batch id is
known is polled again, one whose results are stored is read from here, and a submission without an id is looked
for at the provider (:meth:`~harness.providers.batch.BatchApi.find`) before anything is sent again. An item's row
goes once its answer is in ``responses`` (with its ledger entry), and a submission's row with its last item.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from harness.calls.cache.file import transaction

_CHUNK = 500  # keys per statement, under SQLite's limit on bound parameters


@dataclass(frozen=True, slots=True)
class BatchItem:
    """A request that went into a batch: its submission (with the batch's id once known, its item count and when
    it was stored), its custom id in the batch, and its raw result once the batch has ended."""

    key: str
    submission: str
    batch_id: str | None
    endpoint: str
    items: int
    created_us: int
    custom_id: str
    result: str | None


def add_submission(
    conn: sqlite3.Connection, submission: str, endpoint: str, items: list[tuple[str, str]], created_us: int
) -> None:
    """Store a submission about to be sent, with its ``(key, custom id)`` items (a key of an earlier batch that
    failed it is moved to this one). Items whose answers are stored already (a process killed between storing an
    answer and dropping its item) go, with submissions left without items."""
    with transaction(conn):
        conn.execute("DELETE FROM batch_items WHERE key IN (SELECT key FROM responses)")
        conn.execute("DELETE FROM batches WHERE submission NOT IN (SELECT submission FROM batch_items)")
        conn.execute(
            "INSERT INTO batches (submission, endpoint, batch_id, items, created_us) VALUES (?, ?, NULL, ?, ?)",
            (submission, endpoint, len(items), created_us),
        )
        conn.executemany(
            "INSERT OR REPLACE INTO batch_items (key, submission, custom_id, result) VALUES (?, ?, ?, NULL)",
            [(key, submission, custom_id) for key, custom_id in items],
        )


def set_batch_id(conn: sqlite3.Connection, submission: str, batch_id: str) -> None:
    """The provider's id for a stored submission."""
    with transaction(conn):
        conn.execute("UPDATE batches SET batch_id = ? WHERE submission = ?", (batch_id, submission))


def set_results(conn: sqlite3.Connection, submission: str, results: dict[str, str]) -> None:
    """An ended batch's raw results, by custom id, on its items."""
    with transaction(conn):
        conn.executemany(
            "UPDATE batch_items SET result = ? WHERE submission = ? AND custom_id = ?",
            [(raw, submission, custom_id) for custom_id, raw in results.items()],
        )


def find(conn: sqlite3.Connection, key: str) -> BatchItem | None:
    """The batch item of request ``key``, if it went into a batch that is not yet collected."""
    row = conn.execute(
        "SELECT i.key, i.submission, b.batch_id, b.endpoint, b.items, b.created_us, i.custom_id, i.result "
        "FROM batch_items i JOIN batches b USING (submission) WHERE i.key = ?",
        (key,),
    ).fetchone()
    return None if row is None else BatchItem(*row)


def forget_items(conn: sqlite3.Connection, keys: list[str]) -> None:
    """Drop the items of ``keys`` (answered and stored, or failed and to be asked again), and every submission
    left without items."""
    with transaction(conn):
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i : i + _CHUNK]
            conn.execute(f"DELETE FROM batch_items WHERE key IN ({', '.join('?' * len(chunk))})", chunk)
        conn.execute("DELETE FROM batches WHERE submission NOT IN (SELECT submission FROM batch_items)")


def forget_submission(conn: sqlite3.Connection, submission: str) -> None:
    """Drop a submission and its items (it was never created, or the provider refused it as a whole)."""
    with transaction(conn):
        conn.execute("DELETE FROM batch_items WHERE submission = ?", (submission,))
        conn.execute("DELETE FROM batches WHERE submission = ?", (submission,))


def ids(conn: sqlite3.Connection) -> frozenset[str]:
    """The provider ids of every stored submission."""
    return frozenset(r[0] for r in conn.execute("SELECT batch_id FROM batches WHERE batch_id IS NOT NULL"))


def out(conn: sqlite3.Connection) -> int:
    """How many submissions are stored and not yet collected (``pdbench cache stats`` shows it)."""
    return int(conn.execute("SELECT count(*) FROM batches").fetchone()[0])
