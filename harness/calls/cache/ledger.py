"""The ledger of paid calls: every answer a run paid for, kept in the response cache until the run's
results file holds its ``calls`` row.

An entry is written in the same transaction as its answer (:meth:`~harness.calls.cache.cache.ResponseCache.aput`),
so a paid answer is never in the cache without the record of which run, game, seat and round it was for.
The results writer drops a run's entries after each batch it writes, so the ledger holds only the calls not
yet in the results file; after a crash, ``pdbench resume`` rebuilds those calls from it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

_INSERT = "INSERT INTO ledger (run, call_id, key, record_json, created_us) VALUES (?, ?, ?, ?, ?)"
_CHUNK = 500  # call ids per DELETE, under SQLite's limit on bound parameters


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """An answer paid for by a run: ``run`` is "<absolute results file>#<run id>#<created at>", ``record_json``
    the ``calls`` row it belongs in."""

    run: str
    record_json: str
    call_id: str  # the call within the run, to drop the entry once the results file holds the call


def add_entries(conn: sqlite3.Connection, entries: Iterable[tuple[LedgerEntry, str, int]]) -> None:
    """Write ``(entry, response key, created_us)`` rows, inside the caller's transaction."""
    conn.executemany(_INSERT, [(e.run, e.call_id, key, e.record_json, created) for e, key, created in entries])


def entries(conn: sqlite3.Connection, run: str) -> list[tuple[str, str]]:
    """The (key, record JSON) of every answer paid for by ``run`` and not yet forgotten, oldest first."""
    return list(conn.execute("SELECT key, record_json FROM ledger WHERE run = ? ORDER BY created_us, rowid", (run,)))


def forget(conn: sqlite3.Connection, run: str, call_ids: list[str] | None = None) -> int:
    """Drop ``run``'s entries (those of ``call_ids``, or all); returns how many."""
    if call_ids is None:
        return conn.execute("DELETE FROM ledger WHERE run = ?", (run,)).rowcount
    deleted = 0
    for i in range(0, len(call_ids), _CHUNK):
        chunk = call_ids[i : i + _CHUNK]
        deleted += conn.execute(
            f"DELETE FROM ledger WHERE run = ? AND call_id IN ({', '.join('?' * len(chunk))})", (run, *chunk)
        ).rowcount
    return deleted


def forget_older(conn: sqlite3.Connection, created_us: int | None) -> None:
    """Drop every entry, or those written before ``created_us`` (``pdbench cache clear``)."""
    if created_us is None:
        conn.execute("DELETE FROM ledger")
    else:
        conn.execute("DELETE FROM ledger WHERE created_us < ?", (created_us,))
