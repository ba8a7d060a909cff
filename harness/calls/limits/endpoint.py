"""The limiter of one endpoint: FIFO admission under concurrency, pause, requests/min and tokens/min.

Agents never sleep; the call path does::

    async with limiter.acquire(estimated_tokens=350) as permit:
        completion = await provider.generate(...)
        permit.record_usage(actual_tokens)

Callers queue in one FIFO line (an ``anyio.Lock``, which hands itself to waiters in arrival
order). Only the head of the line waits on the limits, on an ``anyio.Event`` with a timeout
set to the moment the limits next allow a start (no polling); everyone else waits on the
lock. FIFO means no starvation; the price is that a large token estimate at the head holds
back smaller requests behind it. A caller that finds nobody in line and the limits open starts
at once, without taking the lock (there is nobody to overtake, and the lock would cost a trip
through the event loop on every request). A request starts at time ``t`` when all of these hold:

1. **Not paused**: ``t >= paused_until`` (the pause when a 429 pattern says the limit was reached,
   :mod:`harness.calls.limits.adaptation`).
2. **Concurrency**: ``in_flight < concurrency``.
3. **Requests per minute** (the configured rpm or the rate learned from 429s, the lower) and
   4. **tokens per minute** allow it (:mod:`harness.calls.limits.pacing`).

:meth:`EndpointLimiter.close` (the run was asked to stop) makes every caller in line, and every later
one, raise :class:`LimiterClosed` at once: a request that was not sent is not sent, whatever the
endpoint was waiting for (a pause of up to a minute, a slow rate).

Cancellation while queued or waiting takes nothing: the slot, the rate slot and the tokens
are all taken in one synchronous step at admission. Leaving the ``async with`` block (by
return, error or cancellation) gives the concurrency slot back; tokens stay charged, since
the request may have reached the server.

The counters a progress display needs are properties (:attr:`EndpointLimiter.in_flight`,
``waiting``, ``concurrency``, ``paused_until``, ``rate_limited_count``) and one consistent
:meth:`EndpointLimiter.snapshot`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

import anyio

from harness.calls.limits.adaptation import Adaptation
from harness.calls.limits.pacing import Charge, Pacing
from harness.calls.limits.settings import LimitSettings
from harness.providers.ratelimit_headers import RateLimitHeaders

Clock = Callable[[], float]


@dataclass(frozen=True)
class LimiterSnapshot:
    """One consistent reading of a limiter's counters, for progress displays and logs."""

    in_flight: int
    waiting: int
    concurrency: int | None
    max_concurrency: int | None
    paused_until: float | None
    rate_limited_count: int
    effective_rpm: float | None
    learned_rpm: float | None
    paused_for: float | None = None  # seconds of the pause left, None if not paused
    pause_reason: str | None = None  # why it is paused (see EndpointLimiter.pause_reason)
    limit_reached_count: int = 0  # times a 429 pattern said the limit was reached


class LimiterClosed(Exception):
    """The endpoint's limiter was closed (the run is stopping): the request must not be sent."""


class Permit:
    """The right to make one request; :meth:`record_usage` corrects its token reservation."""

    __slots__ = ("_charge", "_limiter", "estimated_tokens", "started_at")

    def __init__(self, limiter: EndpointLimiter, started_at: float, estimated_tokens: int, charge: Charge) -> None:
        self._limiter = limiter
        self._charge = charge
        self.started_at = started_at
        self.estimated_tokens = estimated_tokens

    @property
    def tokens(self) -> float:
        """Tokens currently charged to this request (the estimate until usage is recorded)."""
        return self._charge.tokens

    def record_usage(self, actual_tokens: int) -> None:
        """Replace the token estimate by what the provider reported: refunds or charges the difference."""
        if actual_tokens < 0:
            raise ValueError(f"actual_tokens must be >= 0, got {actual_tokens}")
        self._limiter._correct_tokens(self._charge, float(actual_tokens))


class _Acquire:
    """``async with limiter.acquire(...) as permit``: admission on enter, slot back on exit.

    A class rather than ``@asynccontextmanager`` so that nothing can be interrupted between
    admission and the point where the slot is guaranteed to be released.
    """

    __slots__ = ("_estimated_tokens", "_limiter", "_permit")

    def __init__(self, limiter: EndpointLimiter, estimated_tokens: int) -> None:
        self._limiter = limiter
        self._estimated_tokens = estimated_tokens
        self._permit: Permit | None = None

    async def __aenter__(self) -> Permit:
        permit = self._limiter._admit_now(self._estimated_tokens)
        if permit is None:
            permit = await self._limiter._admit(self._estimated_tokens)
        self._permit = permit
        return permit

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._permit is not None:
            self._permit = None
            self._limiter._release()


class EndpointLimiter:
    """Concurrency, requests/min and tokens/min of one endpoint, enforced together (see module doc).

    ``clock`` must tick with the event loop's clock (``time.monotonic`` for asyncio and trio);
    it is injectable so that tests can run on an event loop with virtual time.
    """

    def __init__(self, settings: LimitSettings, clock: Clock = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._gate = anyio.Lock()  # FIFO line; its holder is the head that waits on the limits
        self._changed: anyio.Event | None = None  # set when something may let the head start earlier
        self._in_flight = 0
        self._waiting = 0
        self._pacing = Pacing(settings.tpm)
        self._adaptation = Adaptation(settings)
        self._closed = False

    # ---- counters -------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Requests admitted and not yet finished."""
        return self._in_flight

    @property
    def waiting(self) -> int:
        """Callers queued in :meth:`acquire`."""
        return self._waiting

    @property
    def concurrency(self) -> int | None:
        """The concurrency limit; ``None`` if unlimited. It does not adapt: a rate limit is a rate."""
        return self.settings.concurrency

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called: no request starts any more."""
        return self._closed

    @property
    def paused_until(self) -> float | None:
        """Clock time the 429 pause ends, or ``None`` if the endpoint is not paused."""
        until = self._adaptation.paused_until
        return until if until > self._clock() else None

    @property
    def pause_reason(self) -> str | None:
        """Why the endpoint is paused: ``limit reached, Retry-After`` (the server's wait, ``... capped`` when
        longer than ``MAX_PAUSE_S``), ``limit reached, rate-limit headers`` or ``limit reached, backoff``
        (the server said nothing of how long); ``None`` if not paused."""
        a = self._adaptation
        return a.pause_reason if a.paused_until > self._clock() else None

    @property
    def rate_limited_count(self) -> int:
        """429s reported so far."""
        return self._adaptation.rate_limited_count

    @property
    def learned_rpm(self) -> float | None:
        """Request-rate cap learned from 429s, or ``None`` while none was needed."""
        return self._adaptation.learned_rpm

    @property
    def effective_rpm(self) -> float | None:
        """The request rate enforced now: the configured rpm or the learned cap, whichever is lower."""
        rates = [r for r in (self.settings.rpm, self._adaptation.learned_rpm) if r is not None]
        return min(rates) if rates else None

    def snapshot(self) -> LimiterSnapshot:
        """All counters at one instant."""
        now = self._clock()
        a = self._adaptation
        paused = a.paused_until > now
        return LimiterSnapshot(
            in_flight=self._in_flight,
            waiting=self._waiting,
            concurrency=self.settings.concurrency,
            max_concurrency=self.settings.concurrency,
            paused_until=a.paused_until if paused else None,
            rate_limited_count=a.rate_limited_count,
            effective_rpm=self.effective_rpm,
            learned_rpm=a.learned_rpm,
            paused_for=a.paused_until - now if paused else None,
            pause_reason=a.pause_reason if paused else None,
            limit_reached_count=a.limit_reached_count,
        )

    # ---- admission ------------------------------------------------------------------------

    def acquire(self, estimated_tokens: int = 0) -> _Acquire:
        """Wait (FIFO) until all limits allow one more request; use as ``async with``."""
        if estimated_tokens < 0:
            raise ValueError(f"estimated_tokens must be >= 0, got {estimated_tokens}")
        return _Acquire(self, estimated_tokens)

    def _admit_now(self, estimated_tokens: int) -> Permit | None:
        """The fast path of admission: if nobody is in line and the limits allow a start now, FIFO
        order holds and there is nothing to wait for, so the request starts at once, without taking
        the line's lock (a trip through the event loop on every request). Otherwise None."""
        if self._closed:
            raise LimiterClosed("the run is stopping: no request is sent")
        if self._waiting:
            return None
        now = self._clock()
        if self._has_slot() and self._ready_at(now, float(estimated_tokens)) <= now:
            return self._start(now, estimated_tokens)
        return None

    async def _admit(self, estimated_tokens: int) -> Permit:
        self._waiting += 1
        try:
            await self._gate.acquire()
            try:
                held_back = False  # by the request rate, not the pause nor the concurrency
                while True:
                    if self._closed:
                        raise LimiterClosed("the run is stopping: no request is sent")
                    now = self._clock()
                    ready_at = self._ready_at(now, float(estimated_tokens))
                    if ready_at <= now and self._has_slot():
                        # No await from the checks to here: admission is atomic.
                        return self._start(now, estimated_tokens, held_back, queued=True)
                    held_back |= self._pacing.request_ready_at(self._rpm()) > max(now, self._adaptation.paused_until)
                    if self._changed is None or self._changed.is_set():
                        self._changed = anyio.Event()
                    changed = self._changed
                    if ready_at > now:
                        with anyio.move_on_after(ready_at - now):
                            await changed.wait()
                    else:
                        await changed.wait()  # for a slot: _release() sets it
            finally:
                self._gate.release()
        finally:
            self._waiting -= 1

    def _has_slot(self) -> bool:
        concurrency = self.settings.concurrency
        return concurrency is None or self._in_flight < concurrency

    def _rpm(self) -> float | None:
        """:attr:`effective_rpm`, spelled out: it runs on every admission."""
        rpm, learned = self.settings.rpm, self._adaptation.learned_rpm
        if learned is not None:
            rpm = learned if rpm is None else min(rpm, learned)
        return rpm

    def _ready_at(self, now: float, tokens: float) -> float:
        """Earliest time pause, request rate and tokens all allow a start of ``tokens``."""
        return max(self._adaptation.paused_until, self._pacing.ready_at(now, tokens, self._rpm()))

    def _start(self, now: float, estimated_tokens: int, held_back: bool = False, queued: bool = False) -> Permit:
        self._in_flight += 1
        charge = self._pacing.start(now, estimated_tokens, self._rpm(), queued)
        self._adaptation.on_start(now, held_back and self._adaptation.learned_rpm is not None)
        return Permit(self, now, estimated_tokens, charge)

    def tighten(self, settings: LimitSettings) -> None:
        """Enforce ``settings`` from now on (the registry's strictest of two agents' limits)."""
        self.settings = settings
        self._pacing.set_tpm(settings.tpm)
        self._adaptation.set_settings(settings)
        self._notify()

    def close(self) -> None:
        """No request starts any more: callers in line and later ones raise :class:`LimiterClosed`."""
        self._closed = True
        self._notify()

    def _release(self) -> None:
        self._in_flight -= 1
        self._notify()

    def _notify(self) -> None:
        """Wake the head of the line to re-check the limits."""
        if self._changed is not None:
            self._changed.set()

    def _correct_tokens(self, charge: Charge, actual: float) -> None:
        if self._pacing.correct(charge, actual):
            self._notify()

    # ---- feedback from the call path ------------------------------------------------------

    def on_success(self, permit: Permit | None = None) -> None:
        """A request succeeded; its ``permit`` says when it was sent (which answers a chain of 429s breaks)."""
        started_at = permit.started_at if permit is not None else None
        if self._adaptation.on_success(self._clock(), started_at):
            self._notify()

    def on_rate_limited(
        self,
        retry_after: float | None = None,
        *,
        permit: Permit | None = None,
        waits: bool = True,
        limits: RateLimitHeaders | None = None,
    ) -> None:
        """A request got a 429: counted, and if the pattern says the limit was reached, the endpoint pauses
        and learns a rate (see :mod:`harness.calls.limits.adaptation`).

        ``retry_after`` is the server's Retry-After in seconds, if it sent one; ``limits`` what its
        rate-limit headers said. Passing the ``permit`` of the rejected request tells which refusal it
        answers. ``waits=False`` says the rejected request gives up instead of waiting: then its
        Retry-After does not set a pause.
        """
        self._adaptation.on_rate_limited(
            self._clock(),
            retry_after,
            started_at=permit.started_at if permit is not None else None,
            waits=waits,
            in_flight=self._in_flight,
            limits=limits,
        )
