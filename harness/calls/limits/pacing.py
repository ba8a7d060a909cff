"""Requests per minute and tokens per minute: when the next request may start, and what a start costs.

A request starts at time ``t`` only when both of these allow it (the endpoint limiter adds the pause
and the concurrency slot, see :mod:`harness.calls.limits.endpoint`):

* **Requests per minute**, two rules. *Pacing* (GCRA, a leaky bucket): a start is allowed once
  ``t >= next_request_at``, and then ``next_request_at = max(next_request_at, t - CATCH_UP_S) + 60/rpm``
  (``t`` for a request that did not wait in line).
  Starts are spread evenly at ``60/rpm`` s; a start that comes late (the waiting task woke late, on a
  busy CPU) does not push the schedule back, since the next start keeps its booked time: the lateness
  is caught up by a burst of at most ``CATCH_UP_S`` worth of requests, so the achieved rate does not
  depend on how busy the CPU is. Only requests that waited in line catch up: one that finds the rate
  idle books from its own start, so idle time earns no burst. *Window*: at most ``rpm``
  starts (at least 1) in any ``WINDOW_S + WINDOW_MARGIN_S`` seconds, from a log of the last ``rpm``
  starts, so the catch-up can never make a rolling minute hold more than the limit; the margin
  absorbs the requests' jitter on their way to the server, which counts their arrivals. We chose
  this over the usual token bucket with one minute's capacity because that bucket admits up to
  ``2*rpm`` in some 60-s window (a full bucket plus a minute of refill), which a hard rolling-window
  limit answers with 429s.
* **Tokens per minute**: the estimate is reserved at the start, under two rules. *Pacing*
  (GCRA again): ``t >= next_token_at``, then ``next_token_at = max(next_token_at, t - CATCH_UP_S) +
  tokens*60/tpm``, which spreads token use evenly at ``tpm``. *Window ledger*: the tokens
  charged to starts in ``(t-60, t]`` plus this request's must not exceed ``tpm``. Pacing
  alone lets the last request of a window overshoot by its own size; the ledger makes the
  rolling-window bound exact. An estimate larger than ``tpm`` is clamped to ``tpm`` (it
  could never fit otherwise): it waits for an empty window. :meth:`Pacing.correct` replaces
  the estimate by the reported usage in both, refunding or charging the difference.

The request rate enforced is passed in at each start, since it may be a cap learned from 429s
(:mod:`harness.calls.limits.adaptation`) rather than the configured rpm.
"""

from __future__ import annotations

import math
from collections import deque

from harness.calls.limits.settings import WINDOW_S

CATCH_UP_S = 1.0
"""How far behind its schedule the pacing may fall and still catch up (a late wake-up, a short idle spell):
the largest burst is this many seconds' worth of requests (or tokens), and the window rule still holds."""
WINDOW_MARGIN_S = 0.5
"""The window rule counts starts over a minute and this much more: the server counts arrival times, which a
loaded machine or network delays by tenths of a second (0.8 % of the rate at most)."""


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
        self._starts: deque[float] = deque()  # the last starts, as many as the request rate allows a minute
        self._ledger: deque[Charge] = deque()  # token charges of starts in the last minute
        self._ledger_total = 0.0

    def set_tpm(self, tpm: float | None) -> None:
        """Enforce another tokens-per-minute limit from now on (the ledger keeps what was charged)."""
        self._tpm = tpm

    def request_ready_at(self, rpm: float | None) -> float:
        """Earliest time the request rate ``rpm`` alone allows a start (pacing and window)."""
        if rpm is None:
            return -math.inf
        ready = self._next_request_at
        allowed = _starts_a_window(rpm)
        if len(self._starts) >= allowed:
            ready = max(ready, self._starts[-allowed] + WINDOW_S + WINDOW_MARGIN_S)
        return ready

    def ready_at(self, now: float, tokens: float, rpm: float | None) -> float:
        """Earliest time the request rate ``rpm`` and the tokens allow a start of ``tokens``."""
        ready = self.request_ready_at(rpm)
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

    def start(self, now: float, tokens: int, rpm: float | None, queued: bool = False) -> Charge:
        """Book a start at ``now`` of ``tokens`` (estimated) under the request rate ``rpm``.

        ``queued``: the request waited in line, so the schedule is behind by whatever the wake-up was late,
        and is caught up (bounded by ``CATCH_UP_S``). A request nobody was waiting for found the rate idle:
        idle time earns no burst."""
        since = now - CATCH_UP_S if queued else now
        if rpm is not None:
            self._next_request_at = max(self._next_request_at, since) + 60.0 / rpm
            self._starts.append(now)
            allowed = _starts_a_window(rpm)
            while len(self._starts) > allowed:
                self._starts.popleft()
        charge = Charge(now, float(tokens))
        tpm = self._tpm
        if tpm is not None:
            self._next_token_at = max(self._next_token_at, since) + tokens * 60.0 / tpm
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


def _starts_a_window(rpm: float) -> int:
    """How many starts the window rule allows in a minute at ``rpm`` (at least one, so a rate below 1 a
    minute is left to the pacing)."""
    return max(1, math.floor(rpm + 1e-9))
