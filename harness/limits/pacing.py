"""Requests per minute and tokens per minute: when the next request may start, and what a start costs.

A request starts at time ``t`` only when both of these allow it (the endpoint limiter adds the pause
and the concurrency slot, see :mod:`harness.limits.endpoint`):

* **Requests per minute**, as GCRA (a leaky bucket) with zero burst tolerance: a start is
  allowed once ``t >= next_request_at``, and then ``next_request_at = max(next_request_at,
  t) + 60/rpm``. Starts are therefore at least ``60/rpm`` s apart, and ``n`` starts in a
  half-open 60-s window span ``(n-1)*60/rpm < 60`` s, so ``n <= rpm``: a server that enforces
  rpm over any rolling minute never sees more, and rejects none. We chose this over the
  usual token bucket with one minute's capacity because that bucket admits up to ``2*rpm``
  in some 60-s window (a full bucket plus a minute of refill), which a hard rolling-window
  limit answers with 429s. Idle time earns no credit, so there is no burst after a pause
  either; under steady demand the achieved rate is exactly ``rpm``.
* **Tokens per minute**: the estimate is reserved at the start, under two rules. *Pacing*
  (GCRA again): ``t >= next_token_at``, then ``next_token_at = max(next_token_at, t) +
  tokens*60/tpm``, which spreads token use evenly at ``tpm``. *Window ledger*: the tokens
  charged to starts in ``(t-60, t]`` plus this request's must not exceed ``tpm``. Pacing
  alone lets the last request of a window overshoot by its own size; the ledger makes the
  rolling-window bound exact. An estimate larger than ``tpm`` is clamped to ``tpm`` (it
  could never fit otherwise): it waits for an empty window. :meth:`Pacing.correct` replaces
  the estimate by the reported usage in both, refunding or charging the difference.

The request rate enforced is passed in at each start, since it may be a cap learned from 429s
(:mod:`harness.limits.adaptation`) rather than the configured rpm.
"""

from __future__ import annotations

import math
from collections import deque

from harness.limits.settings import WINDOW_S


class Charge:
    """Tokens charged to one request start, in the window ledger; mutable for corrections."""

    __slots__ = ("in_ledger", "started_at", "tokens")

    def __init__(self, started_at: float, tokens: float) -> None:
        self.started_at = started_at
        self.tokens = tokens
        self.in_ledger = False  # True while it counts toward the rolling-minute total


class Pacing:
    """The GCRA state of requests and tokens, and the ledger of tokens charged in the last minute."""

    def __init__(self, tpm: float | None) -> None:
        self._tpm = tpm
        self._next_request_at = -math.inf
        self._next_token_at = -math.inf
        self._ledger: deque[Charge] = deque()  # token charges of starts in the last minute
        self._ledger_total = 0.0

    def ready_at(self, now: float, tokens: float) -> float:
        """Earliest time the request rate and the tokens allow a start of ``tokens``."""
        ready = self._next_request_at
        tpm = self._tpm
        if tpm is not None:
            ready = max(ready, self._next_token_at)
            self.prune(now)
            need = min(tokens, tpm)
            excess = self._ledger_total + need - tpm
            if excess > 0:
                # Wait until enough of the oldest charges leave the window (at started_at + 60 s).
                for charge in self._ledger:
                    excess -= charge.tokens
                    if excess <= 0:
                        ready = max(ready, charge.started_at + WINDOW_S)
                        break
        return ready

    def start(self, now: float, tokens: int, rpm: float | None) -> Charge:
        """Book a start at ``now`` of ``tokens`` (estimated) under the request rate ``rpm``."""
        if rpm is not None:
            self._next_request_at = max(self._next_request_at, now) + 60.0 / rpm
        charge = Charge(now, float(tokens))
        tpm = self._tpm
        if tpm is not None:
            self._next_token_at = max(self._next_token_at, now) + tokens * 60.0 / tpm
            charge.in_ledger = True
            self._ledger.append(charge)
            self._ledger_total += charge.tokens
        return charge

    def correct(self, charge: Charge, actual: float) -> bool:
        """Replace a start's token estimate by ``actual``; True if that refunded tokens (a waiter may start sooner)."""
        tpm = self._tpm
        delta = actual - charge.tokens
        charge.tokens = actual
        if tpm is None or delta == 0:
            return False
        self._next_token_at += delta * 60.0 / tpm
        if charge.in_ledger:
            self._ledger_total += delta
        return delta < 0

    def prune(self, now: float) -> None:
        """Forget the charges that left the rolling minute: a start at ``s`` counts while ``s + 60 > now``.

        Written as ``s + 60 <= now`` rather than ``s <= now - 60`` so that it agrees, to the last
        bit, with the wake-up time ``s + 60`` computed in :meth:`ready_at`.
        """
        while self._ledger and self._ledger[0].started_at + WINDOW_S <= now:
            old = self._ledger.popleft()
            old.in_ledger = False
            self._ledger_total -= old.tokens
        if not self._ledger:
            self._ledger_total = 0.0  # no float drift accumulates across windows
