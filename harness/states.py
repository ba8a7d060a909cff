"""The states a run, a game and a call can be in, as enums shared by every layer.

They are ``StrEnum`` so the values stored in DuckDB (``runs.status``, ``games.status``,
``calls.outcome``) stay the plain words users query with SQL, while Python code compares
members, so a misspelt state is an ``AttributeError`` rather than a silent mismatch.
"""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """``runs.status``: a run is written while ``running`` and ends complete, interrupted or failed."""

    RUNNING = "running"
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # stopped (Ctrl-C, budget, outage, disk full): `pdbench resume` continues it
    FAILED = "failed"  # the engine itself broke: the reason is in runs.error
    # Never stored: how a run whose file says `running` is shown once no process holds that file (its writer was
    # killed before it could write how the run ended; see harness.store.catalog.Catalog.held). Resume continues it.
    CRASHED = "crashed"


class GameStatus(StrEnum):
    """``games.status``: only ``complete`` games enter the metrics."""

    RUNNING = "running"  # a model game being played round by round (or cut off by a crash: resume replays it)
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"  # stopped before its last round: resume replays it
    FAILED = "failed"  # games.failure says why (retryable, authentication, permanent)


class CallOutcome(StrEnum):
    """``calls.outcome``: what became of one attempt at a request."""

    OK = "ok"  # an answer that was read as a move (or a comprehension answer)
    UNPARSEABLE = "unparseable"  # an answer, but no move could be read from it
    REFUSED = "refused"  # the provider withheld the answer (its content filter): no move; the error says why
    RATE_LIMITED = "rate_limited"  # a 429 (or 529), retried
    TIMEOUT = "timeout"
    ERROR = "error"  # any other failed attempt
