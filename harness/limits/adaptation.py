"""Adaptation on 429 (AIMD, as in TCP congestion control): the pause, the concurrency and the learned rate.

:meth:`Adaptation.on_rate_limited` is called for every 429. One overload usually produces
several 429s at once (every request in flight gets one), so they count as one *event*: a 429
starts a new event only if it arrives after the pause of the previous event ended (or, when the
caller passes the rejected request's start time, if that request started after the previous
event began). On every 429 the whole endpoint pauses until ``now + retry_after``; without a
``Retry-After`` the pause is 1 s, doubled for each further event with no success in between,
up to 30 s (plain exponential backoff, so an endpoint out of quota is not hammered).
Two bounds keep one answer from stalling every game of the endpoint:

* **Only waits somebody sits out.** The caller says (``waits=False``) when the rejected request
  will not wait at all: its Retry-After exceeds the request's retry budget (a server whose
  daily quota is spent may ask for hours, or ``Retry-After: 99999999``), or it has no attempts
  or time left. Such a 429 pauses nothing, since no game should sit out a wait that not even the
  rejected request sits out; it still counts and still starts an event (concurrency and rate
  back off), so the endpoint is not hammered either.
* **At most** ``MAX_PAUSE_S`` **(60 s) per pause.** Limits are per minute, and a rolling minute
  clears within 60 s; a longer Retry-After (up to the retry budget, 600 s by default) is sat
  out in full by the request that got it, while the other games try again after 60 s and, if
  the endpoint is still closed, get their own 429 and their own pause.

:attr:`Adaptation.pause_reason` says why the endpoint is paused (``429 Retry-After``, or
``429 backoff`` without one), for the live display. On a new event:

* **Concurrency** is halved (minimum 1); :meth:`Adaptation.on_success` adds 1 back per
  10 successes, up to the configured maximum (additive increase).
* **Request rate** is learned, because the server's limit is usually unknown (and a
  configured rpm may be shared with other clients). The rate the server accepted recently,
  ``measured``, is the successes in the last 60 s divided by the span they were made in: a
  minute, or the time since the endpoint got busy if that is shorter (at least 1 s). The cap
  becomes ``0.9 * measured`` and never rises on a 429. Why this estimate: a server enforcing
  N/min over a rolling minute rejects exactly when its window is full, so once the endpoint
  has been busy a minute, the successes of the last minute *are* N, and 0.9 N leaves room for
  the window to drain without a second wave of 429s. In the first minute the estimate is
  high (N successes over a shorter span); further events correct it, and when the cap was
  actually binding since the previous event (we started requests at >= 3/4 of it) it is cut
  to at most 0.9 of itself, so it converges in a few events. A high guess costs a few 429s;
  a low one would cost minutes of throughput, so the estimate leans high.
  While the cap binds (the measured rate is >= 3/4 of it) and no 429 comes, it rises by 2 %
  every 10 s (12 %/min): fast enough to recover from a low guess within minutes, slow enough
  that the steady state is a saw-tooth between 0.9 and 1.0 of the server's limit with about
  one 429 event a minute. A learned cap that reaches a configured rpm is dropped.

In simulations on virtual time (servers enforcing N/min by a rolling window, a one-minute
token bucket or a one-second bucket; N from 30 to 500; latency 0.05-1 s; with and without
Retry-After; the rolling-window case is a test in ``tests/unit/test_limits.py``), the
achieved rate from the second minute on was 0.89-1.0 of N for rolling-window and
token-bucket servers, with about one 429 a minute, and 0.82-0.97 for the one-second bucket
(which rejects any two requests closer than 60/N s).
"""

from __future__ import annotations

import math
from collections import deque

from harness.limits.settings import WINDOW_S, LimitSettings

DEFAULT_PAUSE_S = 1.0  # pause after a 429 that came without Retry-After
MAX_DEFAULT_PAUSE_S = 30.0  # cap of the doubling pause for repeated 429s without Retry-After
MAX_PAUSE_S = WINDOW_S  # longest pause of the whole endpoint after one 429 (a per-minute limit clears in it)
SUCCESSES_PER_SLOT = 10  # additive increase: one more concurrent request per this many successes
RATE_BACKOFF = 0.9  # after a 429, cap the request rate at this share of the rate measured
BINDING_DECREASE = 0.9  # ... and at this share of the old cap if that cap was binding
BINDING_SHARE = 0.75  # a cap binds when requests start (or succeed) at >= this share of it
RATE_RAISE = 1.02  # while the cap binds and no 429 comes, multiply it by this ...
RAISE_EVERY_S = 10.0  # ... every this many seconds
MIN_RATE_SAMPLES = 3  # fewer successes in the last minute say too little to learn a rate from
MIN_SPAN_S = 1.0  # shortest span a rate is measured over, so a burst does not read as a huge rate


class Adaptation:
    """What the endpoint learned from its answers: the current pause, concurrency and request-rate cap.

    It keeps no clock: the endpoint limiter passes ``now`` to every method, so that one reading
    of the clock serves a whole admission or answer.
    """

    def __init__(self, settings: LimitSettings) -> None:
        self._settings = settings
        self.concurrency: int | None = settings.concurrency  # the current limit; None if unlimited
        self.paused_until = -math.inf
        self.pause_reason = ""  # why the endpoint is (or was last) paused
        self.rate_limited_count = 0
        self.learned_rpm: float | None = None
        self._successes: deque[float] = deque()  # success times in the last minute
        self._last_start = -math.inf
        self._busy_since = -math.inf  # first start after a minute without any
        self._last_event_at = -math.inf  # when the last 429 event began
        self._starts_since_event = 0  # requests started since then (was the cap binding?)
        self._backoff_events = 0  # 429 events since the last success (doubles the default pause)
        self._success_streak = 0  # successes since the last 429 event (concurrency recovery)
        self._last_raise_at = -math.inf  # last raise of the learned cap, or the last event

    def on_start(self, now: float) -> None:
        """A request started: note it for the measured rate and for telling whether the cap binds."""
        if now - self._last_start > WINDOW_S:
            self._busy_since = now
        self._last_start = now
        self._starts_since_event += 1

    def on_success(self, now: float) -> bool:
        """A request succeeded: recover concurrency and, while it binds, the learned rate.

        True if a limit was loosened, so that a waiting request may start sooner.
        """
        self._prune(now)
        self._successes.append(now)
        self._backoff_events = 0
        self._success_streak += 1
        loosened = False
        top = self._settings.concurrency
        if (
            self.concurrency is not None
            and self._success_streak % SUCCESSES_PER_SLOT == 0
            and (top is None or self.concurrency < top)
        ):
            self.concurrency += 1
            loosened = True
        if self.learned_rpm is not None and now - self._last_raise_at >= RAISE_EVERY_S:
            self._last_raise_at = now
            measured = self._measured_rpm(now)
            if measured is not None and measured >= BINDING_SHARE * self.learned_rpm:
                self._set_learned_rpm(self.learned_rpm * RATE_RAISE)
                loosened = True
        return loosened

    def on_rate_limited(
        self, now: float, retry_after: float | None, *, started_at: float | None, waits: bool, in_flight: int
    ) -> None:
        """A request got a 429: pause the endpoint and, on a new overload event, back off (see module doc).

        ``started_at`` is when the rejected request started, if known; ``in_flight`` is the
        number of requests in flight, the base of the first halving when concurrency is unlimited.
        """
        self.rate_limited_count += 1
        # One overload answers several requests at once: count it once.
        new_event = started_at >= self._last_event_at if started_at is not None else now >= self.paused_until
        if new_event:
            self._backoff_events += 1
            self._success_streak = 0
            base = self.concurrency if self.concurrency is not None else max(in_flight, 1)
            self.concurrency = max(1, base // 2)
            self._learn_rate(now)
            self._last_event_at = now
            self._last_raise_at = now
            self._starts_since_event = 0
        if not waits:
            return
        if retry_after is None:
            pause = min(DEFAULT_PAUSE_S * 2 ** max(self._backoff_events - 1, 0), MAX_DEFAULT_PAUSE_S)
            reason = "429 backoff"
        elif retry_after > MAX_PAUSE_S:
            pause, reason = MAX_PAUSE_S, f"429 Retry-After {retry_after:g} s, capped"
        else:
            pause, reason = max(float(retry_after), 0.0), "429 Retry-After"
        if now + pause > self.paused_until:
            self.paused_until = now + pause
            self.pause_reason = reason

    def _learn_rate(self, now: float) -> None:
        """Lower the request-rate cap after a 429 event (multiplicative decrease)."""
        measured = self._measured_rpm(now)
        if measured is None:
            return  # too few successes to tell; the pause and the concurrency cut still act
        cap = RATE_BACKOFF * measured
        old = self.learned_rpm
        if old is not None:
            cap = min(cap, old)
            since = now - self._last_event_at
            if since > 0 and self._starts_since_event * 60.0 / since >= BINDING_SHARE * old:
                cap = min(cap, BINDING_DECREASE * old)
        self._set_learned_rpm(cap)

    def _set_learned_rpm(self, rpm: float) -> None:
        configured = self._settings.rpm
        self.learned_rpm = None if configured is not None and rpm >= configured else rpm

    def _measured_rpm(self, now: float) -> float | None:
        """Successes per minute over the last minute, or over the shorter time the endpoint has been busy."""
        self._prune(now)
        if len(self._successes) < MIN_RATE_SAMPLES:
            return None
        span = min(WINDOW_S, max(now - self._busy_since, MIN_SPAN_S))
        return len(self._successes) * 60.0 / span

    def _prune(self, now: float) -> None:
        """Forget the successes that left the rolling minute."""
        while self._successes and self._successes[0] + WINDOW_S <= now:
            self._successes.popleft()
