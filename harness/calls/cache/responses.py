"""The stored answers: the ``responses`` table of the cache file, one row per cache key.

Rows are inserted with ``INSERT OR IGNORE``: the first writer of a key wins, which is harmless, because
a key (:mod:`harness.calls.cache.keys`) identifies the request exactly, so any two values stored under it
are equally valid answers to it. Lookups are made many keys at a time (one turn of the event loop's, see
:mod:`harness.calls.cache.turns`), in a few statement shapes that stay prepared.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.calls.cache.file import cache_files, from_us, to_us, utcnow
from harness.errors import StoreError

_COLUMNS = "text, input_tokens, output_tokens, model, provider, created_us, raw_json"
_SELECT_MANY = {
    size: f"SELECT key, {_COLUMNS} FROM responses WHERE key IN ({', '.join('?' * size)})"
    for size in (1, 2, 4, 8, 16, 32, 64, 128, 256)
}  # a few statement shapes, so they stay prepared
_INSERT = (
    "INSERT OR IGNORE INTO responses (key, provider, model, text, input_tokens, output_tokens, raw_json, created_us) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)

Row = tuple[Any, ...]
"""A row to insert (``_INSERT`` order: the key first, ``created_us`` last), or a row found (``_COLUMNS`` order)."""


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
    """What ``pdbench cache stats`` shows: size, age range, entries per model."""

    path: Path
    entries: int
    size_bytes: int
    oldest: datetime | None
    newest: datetime | None
    by_model: dict[tuple[str, str], int]  # (provider, reported model) -> entries


def to_row(key: str, response: CachedResponse) -> Row:
    """The ``_INSERT`` parameters for ``response``; ValueError if ``raw`` is not plain JSON."""
    try:
        raw_json = None if response.raw is None else json.dumps(response.raw, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"CachedResponse.raw must be plain JSON values ({exc})") from exc
    return (
        key,
        response.provider,
        response.model,
        response.text,
        response.input_tokens,
        response.output_tokens,
        raw_json,
        to_us(response.created_at),
    )


def from_row(row: Row | None, path: Path) -> CachedResponse | None:
    """A found row (``_COLUMNS`` order) of the cache at ``path`` as a response; StoreError if unreadable."""
    if row is None:
        return None
    text, input_tokens, output_tokens, model, provider, created_us, raw_json = row
    try:
        raw = json.loads(raw_json) if raw_json is not None else None
    except ValueError as exc:
        raise StoreError(
            f"The response cache {path} holds an unreadable entry ({exc}). "
            "Run `pdbench cache clear`, or delete the file."
        ) from exc
    return CachedResponse(
        text=text,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        model=model,
        provider=provider,
        created_at=from_us(created_us),
        raw=raw,
    )


def select(conn: sqlite3.Connection, keys: list[str]) -> dict[str, Row]:
    """The stored row of each of ``keys`` that has one, in one statement per 256 keys."""
    unique = list(dict.fromkeys(keys))
    rows: dict[str, Row] = {}
    for i in range(0, len(unique), 256):
        chunk = unique[i : i + 256]
        size = 1 << (len(chunk) - 1).bit_length()
        chunk += chunk[-1:] * (size - len(chunk))
        for key, *row in conn.execute(_SELECT_MANY[size], chunk):
            rows[key] = tuple(row)
    return rows


def insert(conn: sqlite3.Connection, rows: list[Row]) -> list[bool]:
    """Insert ``rows`` (from :func:`to_row`), inside the caller's transaction; for each, whether it was
    stored (first writer wins)."""
    return [conn.execute(_INSERT, row).rowcount == 1 for row in rows]


def stats(conn: sqlite3.Connection, path: Path) -> CacheStats:
    """Entries, size on disk, age range and entries per (provider, model) of the cache at ``path``."""
    entries, oldest, newest = conn.execute(
        "SELECT count(*), min(created_us), max(created_us) FROM responses"
    ).fetchone()
    by_model = {
        (provider, model): n
        for provider, model, n in conn.execute(
            "SELECT provider, model, count(*) FROM responses GROUP BY provider, model ORDER BY provider, model"
        )
    }
    return CacheStats(
        path=path,
        entries=entries,
        size_bytes=sum(f.stat().st_size for f in cache_files(path) if f.exists()),
        oldest=from_us(oldest) if oldest is not None else None,
        newest=from_us(newest) if newest is not None else None,
        by_model=by_model,
    )


def delete(conn: sqlite3.Connection, created_us: int | None) -> int:
    """Delete every answer, or those created before ``created_us``; returns how many."""
    if created_us is None:
        return int(conn.execute("DELETE FROM responses").rowcount)
    return int(conn.execute("DELETE FROM responses WHERE created_us < ?", (created_us,)).rowcount)
