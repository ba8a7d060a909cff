"""Claims on requests in flight, so that two processes asking the same request pay for it once.

A process about to send a request claims its cache key for a lease; another process that asks
the same request while the claim is live waits for the answer instead of buying it too. A claim
ends with its answer (in the same transaction, see :func:`release_answered`), when the sender gives
up (:func:`release`), or when its lease runs out (a sender that crashed on another machine). A claim
of a process of this machine that no longer runs is taken over at once: its answer will never come.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from collections.abc import Iterable
from enum import IntEnum

from harness.calls.cache import responses
from harness.calls.cache.file import to_us, transaction, utcnow
from harness.calls.cache.responses import Row

_HOST = socket.gethostname()
_CLAIM = (
    "INSERT INTO claims (key, owner, expires_us) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
    "owner = excluded.owner, expires_us = excluded.expires_us "
    "WHERE claims.expires_us < ? OR claims.owner = excluded.owner"
)
_UNCLAIM = "DELETE FROM claims WHERE key = ? AND owner = ?"


class Claim(IntEnum):
    """What a claim on a request found."""

    CLAIMED = 0  # this process sends the request
    ANSWERED = 1  # the answer is stored: read it
    HELD = 2  # another process is sending it: wait for its answer


def new_owner(token: object) -> str:
    """A claimant's name: this machine, this process, and ``token`` (the cache object) made unique in time."""
    return f"{_HOST}:{os.getpid()}:{id(token):x}{time.time_ns():x}"


def owner_alive(owner: str) -> bool:
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


def answer_or_claim(
    conn: sqlite3.Connection, owner: str, items: list[tuple[str, int]]
) -> list[tuple[Claim, Row | None]]:
    """For each ``(key, expires_us)``: its stored row (``ANSWERED``), found by a read that takes no lock;
    else the claim, made for all the others in one transaction (see :func:`claim`)."""
    stored = responses.select(conn, [key for key, _ in items])
    unanswered = [(key, expires) for key, expires in items if key not in stored]
    made = iter(claim(conn, owner, unanswered) if unanswered else [])
    return [(Claim.ANSWERED, stored[key]) if key in stored else (next(made), None) for key, _ in items]


def claim(conn: sqlite3.Connection, owner: str, items: list[tuple[str, int]]) -> list[Claim]:
    """Claim each ``(key, expires_us)`` for ``owner`` in one transaction, unless its answer is stored (looked for
    again inside the transaction: another process may have stored one meanwhile) or another live claimant
    holds it."""
    now_us = to_us(utcnow())
    with transaction(conn):
        stored = responses.select(conn, [key for key, _ in items])
        return [
            Claim.ANSWERED if key in stored else _claim_one(conn, owner, key, expires, now_us) for key, expires in items
        ]


def _claim_one(conn: sqlite3.Connection, owner: str, key: str, expires: int, now_us: int) -> Claim:
    """``CLAIMED`` if ``key`` was unclaimed, or its claim lapsed, was ``owner``'s or a dead process's; else ``HELD``."""
    if conn.execute(_CLAIM, (key, owner, expires, now_us)).rowcount == 1 or _take_over(conn, owner, key, expires):
        return Claim.CLAIMED
    return Claim.HELD


def _take_over(conn: sqlite3.Connection, owner: str, key: str, expires: int) -> bool:
    """Take ``key``'s claim if its owner is a process of this machine that no longer runs (killed
    mid-request): its answer will never come, so waiting out its lease would only stall this run."""
    row = conn.execute("SELECT owner FROM claims WHERE key = ?", (key,)).fetchone()
    if row is None or owner_alive(row[0]):
        return False
    taken = conn.execute(
        "UPDATE claims SET owner = ?, expires_us = ? WHERE key = ? AND owner = ?", (owner, expires, key, row[0])
    )
    return bool(taken.rowcount == 1)


def release(conn: sqlite3.Connection, owner: str, key: str) -> None:
    """End ``owner``'s claim on ``key`` without an answer (the request failed or was abandoned)."""
    conn.execute(_UNCLAIM, (key, owner))


def release_answered(conn: sqlite3.Connection, owner: str, keys: Iterable[str]) -> None:
    """End ``owner``'s claims on ``keys``, whose answers are being stored in the caller's transaction."""
    conn.executemany(_UNCLAIM, [(key, owner) for key in keys])


def clear(conn: sqlite3.Connection) -> None:
    """Drop every claim (``pdbench cache clear``)."""
    conn.execute("DELETE FROM claims")
