"""Per-endpoint rate limiting: concurrency, requests/min and tokens/min at once, adaptive on 429.

Providers limit an API key (an organisation) on a server, not a game: fifty games sharing one
key share one budget. So there is one :class:`EndpointLimiter` per endpoint — provider, base
URL and a short SHA-256 of the key (the key itself is never kept) — handed out by
:class:`LimiterRegistry` to every game of the process. Agents never sleep; the call path does::

    async with limiter.acquire(estimated_tokens=350) as permit:
        completion = await provider.generate(...)
        permit.record_usage(actual_tokens)

Admission
---------
Callers queue in one FIFO line (an ``anyio.Lock``, which hands itself to waiters in arrival
order). Only the head of the line waits on the limits, on an ``anyio.Event`` with a timeout
set to the moment the limits next allow a start (no polling); everyone else waits on the
lock. FIFO means no starvation; the price is that a large token estimate at the head holds
back smaller requests behind it. A caller that finds nobody in line and the limits open starts
at once, without taking the lock (there is nobody to overtake, and the lock would cost a trip
through the event loop on every request). A request starts at time ``t`` when all of these hold:

1. **Not paused**: ``t >= paused_until`` (see 429 handling below).
2. **Concurrency**: ``in_flight < concurrency`` (the *current* value, which adapts).
3. **Requests per minute**, as GCRA (a leaky bucket) with zero burst tolerance: a start is
   allowed once ``t >= next_request_at``, and then ``next_request_at = max(next_request_at,
   t) + 60/rpm``. Starts are therefore at least ``60/rpm`` s apart, and ``n`` starts in a
   half-open 60-s window span ``(n-1)*60/rpm < 60`` s, so ``n <= rpm``: a server that enforces
   rpm over any rolling minute never sees more, and rejects none. We chose this over the
   usual token bucket with one minute's capacity because that bucket admits up to ``2*rpm``
   in some 60-s window (a full bucket plus a minute of refill), which a hard rolling-window
   limit answers with 429s. Idle time earns no credit, so there is no burst after a pause
   either; under steady demand the achieved rate is exactly ``rpm``.
4. **Tokens per minute**: the estimate is reserved at the start, under two rules. *Pacing*
   (GCRA again): ``t >= next_token_at``, then ``next_token_at = max(next_token_at, t) +
   tokens*60/tpm``, which spreads token use evenly at ``tpm``. *Window ledger*: the tokens
   charged to starts in ``(t-60, t]`` plus this request's must not exceed ``tpm``. Pacing
   alone lets the last request of a window overshoot by its own size; the ledger makes the
   rolling-window bound exact. An estimate larger than ``tpm`` is clamped to ``tpm`` (it
   could never fit otherwise): it waits for an empty window. :meth:`Permit.record_usage`
   replaces the estimate by the reported usage in both, refunding or charging the difference.

Cancellation while queued or waiting takes nothing: the slot, the rate slot and the tokens
are all taken in one synchronous step at admission. Leaving the ``async with`` block (by
return, error or cancellation) gives the concurrency slot back; tokens stay charged, since
the request may have reached the server.

Adaptation on 429 (AIMD, as in TCP congestion control)
------------------------------------------------------
:meth:`EndpointLimiter.on_rate_limited` is called for every 429. One overload usually
produces several 429s at once (every request in flight gets one), so they count as one
*event*: a 429 starts a new event only if it arrives after the pause of the previous event
ended (or, when the caller passes its ``permit``, if that request started after the previous
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

:attr:`EndpointLimiter.pause_reason` says why the endpoint is paused (``429 Retry-After``, or
``429 backoff`` without one), for the live display. On a new event:

* **Concurrency** is halved (minimum 1); :meth:`EndpointLimiter.on_success` adds 1 back per
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

The counters a progress display needs are properties (:attr:`EndpointLimiter.in_flight`,
``waiting``, ``concurrency``, ``paused_until``, ``rate_limited_count``) and one consistent
:meth:`EndpointLimiter.snapshot`.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

import anyio
from pydantic import BaseModel, ConfigDict, Field

from harness.providers.base import key_id

WINDOW_S = 60.0  # providers state limits per minute; a rolling minute is the strictest reading
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
MAX_CONCURRENCY = 10_000
MIN_RPM, MAX_RPM = 0.1, 1_000_000.0
MIN_TPM, MAX_TPM = 100.0, 10_000_000_000.0

Clock = Callable[[], float]


class LimitSettings(BaseModel):
    """The limits of one endpoint. ``None`` means unlimited in that dimension."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # Bounded so that no setting can stall a run: at 0.1 rpm requests are 10 minutes apart, and at 100
    # tpm a request waits (its tokens) * 60 / 100 s: slow, but it starts.
    concurrency: int | None = Field(8, ge=1, le=MAX_CONCURRENCY, description="max requests in flight")
    rpm: float | None = Field(None, ge=MIN_RPM, le=MAX_RPM, description="max requests started per minute")
    tpm: float | None = Field(None, ge=MIN_TPM, le=MAX_TPM, description="max tokens (input + output) per minute")


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


class _Charge:
    """Tokens charged to one request start, in the window ledger; mutable for corrections."""

    __slots__ = ("in_ledger", "started_at", "tokens")

    def __init__(self, started_at: float, tokens: float) -> None:
        self.started_at = started_at
        self.tokens = tokens
        self.in_ledger = False  # True while it counts toward the rolling-minute total


class Permit:
    """The right to make one request; :meth:`record_usage` corrects its token reservation."""

    __slots__ = ("_charge", "_limiter", "estimated_tokens", "started_at")

    def __init__(self, limiter: EndpointLimiter, started_at: float, estimated_tokens: int, charge: _Charge) -> None:
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
        self._concurrency: int | None = settings.concurrency
        self._paused_until = -math.inf
        self._pause_reason = ""  # why the endpoint is (or was last) paused
        self._rate_limited_count = 0
        self._next_request_at = -math.inf  # GCRA state for requests
        self._next_token_at = -math.inf  # GCRA state for tokens
        self._ledger: deque[_Charge] = deque()  # token charges of starts in the last minute
        self._ledger_total = 0.0
        # Adaptation state (see module doc).
        self._successes: deque[float] = deque()  # success times in the last minute
        self._last_start = -math.inf
        self._busy_since = -math.inf  # first start after a minute without any
        self._learned_rpm: float | None = None
        self._last_event_at = -math.inf  # when the last 429 event began
        self._starts_since_event = 0  # requests started since then (was the cap binding?)
        self._backoff_events = 0  # 429 events since the last success (doubles the default pause)
        self._success_streak = 0  # successes since the last 429 event (concurrency recovery)
        self._last_raise_at = -math.inf  # last raise of the learned cap, or the last event

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
        """Current (adaptive) concurrency limit; ``None`` if unlimited and never rate limited."""
        return self._concurrency

    @property
    def paused_until(self) -> float | None:
        """Clock time the 429 pause ends, or ``None`` if the endpoint is not paused."""
        return self._paused_until if self._paused_until > self._clock() else None

    @property
    def pause_reason(self) -> str | None:
        """Why the endpoint is paused: ``429 Retry-After`` (the server's wait, ``..., capped`` when it
        was longer than ``MAX_PAUSE_S``) or ``429 backoff`` (none given); ``None`` if not paused."""
        return self._pause_reason if self._paused_until > self._clock() else None

    @property
    def rate_limited_count(self) -> int:
        """429s reported so far."""
        return self._rate_limited_count

    @property
    def learned_rpm(self) -> float | None:
        """Request-rate cap learned from 429s, or ``None`` while none was needed."""
        return self._learned_rpm

    @property
    def effective_rpm(self) -> float | None:
        """The request rate enforced now: the configured rpm or the learned cap, whichever is lower."""
        rates = [r for r in (self.settings.rpm, self._learned_rpm) if r is not None]
        return min(rates) if rates else None

    def snapshot(self) -> LimiterSnapshot:
        """All counters at one instant."""
        now = self._clock()
        paused = self._paused_until > now
        return LimiterSnapshot(
            in_flight=self._in_flight,
            waiting=self._waiting,
            concurrency=self._concurrency,
            max_concurrency=self.settings.concurrency,
            paused_until=self._paused_until if paused else None,
            rate_limited_count=self._rate_limited_count,
            effective_rpm=self.effective_rpm,
            learned_rpm=self._learned_rpm,
            paused_for=self._paused_until - now if paused else None,
            pause_reason=self._pause_reason if paused else None,
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
                while True:
                    now = self._clock()
                    ready_at = self._ready_at(now, float(estimated_tokens))
                    if ready_at <= now and self._has_slot():
                        # No await from the checks to here: admission is atomic.
                        return self._start(now, estimated_tokens)
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
        return self._concurrency is None or self._in_flight < self._concurrency

    def _ready_at(self, now: float, tokens: float) -> float:
        """Earliest time pause, request rate and tokens all allow a start of ``tokens``."""
        ready = max(self._paused_until, self._next_request_at)
        tpm = self.settings.tpm
        if tpm is not None:
            ready = max(ready, self._next_token_at)
            self._prune(now)
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

    def _start(self, now: float, estimated_tokens: int) -> Permit:
        self._in_flight += 1
        rpm, learned = self.settings.rpm, self._learned_rpm  # effective_rpm, inlined: it runs for every start
        if learned is not None:
            rpm = learned if rpm is None else min(rpm, learned)
        if rpm is not None:
            self._next_request_at = max(self._next_request_at, now) + 60.0 / rpm
        tpm = self.settings.tpm
        charge = _Charge(now, float(estimated_tokens))
        if tpm is not None:
            self._next_token_at = max(self._next_token_at, now) + estimated_tokens * 60.0 / tpm
            charge.in_ledger = True
            self._ledger.append(charge)
            self._ledger_total += charge.tokens
        if now - self._last_start > WINDOW_S:
            self._busy_since = now
        self._last_start = now
        self._starts_since_event += 1
        return Permit(self, now, estimated_tokens, charge)

    def _release(self) -> None:
        self._in_flight -= 1
        self._notify()

    def _notify(self) -> None:
        """Wake the head of the line to re-check the limits."""
        if self._changed is not None:
            self._changed.set()

    def _correct_tokens(self, charge: _Charge, actual: float) -> None:
        tpm = self.settings.tpm
        delta = actual - charge.tokens
        charge.tokens = actual
        if tpm is None or delta == 0:
            return
        self._next_token_at += delta * 60.0 / tpm
        if charge.in_ledger:
            self._ledger_total += delta
        if delta < 0:
            self._notify()

    def _prune(self, now: float) -> None:
        """Forget what left the rolling minute: a start at ``s`` counts while ``s + 60 > now``.

        Written as ``s + 60 <= now`` rather than ``s <= now - 60`` so that it agrees, to the last
        bit, with the wake-up time ``s + 60`` computed in :meth:`_ready_at`.
        """
        while self._ledger and self._ledger[0].started_at + WINDOW_S <= now:
            old = self._ledger.popleft()
            old.in_ledger = False
            self._ledger_total -= old.tokens
        if not self._ledger:
            self._ledger_total = 0.0  # no float drift accumulates across windows
        while self._successes and self._successes[0] + WINDOW_S <= now:
            self._successes.popleft()

    # ---- feedback from the call path ------------------------------------------------------

    def on_success(self) -> None:
        """A request succeeded: recover concurrency and, while it binds, the learned rate."""
        now = self._clock()
        self._prune(now)
        self._successes.append(now)
        self._backoff_events = 0
        self._success_streak += 1
        top = self.settings.concurrency
        if (
            self._concurrency is not None
            and self._success_streak % SUCCESSES_PER_SLOT == 0
            and (top is None or self._concurrency < top)
        ):
            self._concurrency += 1
            self._notify()
        if self._learned_rpm is not None and now - self._last_raise_at >= RAISE_EVERY_S:
            self._last_raise_at = now
            measured = self._measured_rpm(now)
            if measured is not None and measured >= BINDING_SHARE * self._learned_rpm:
                self._set_learned_rpm(self._learned_rpm * RATE_RAISE)
                self._notify()

    def on_rate_limited(
        self, retry_after: float | None = None, *, permit: Permit | None = None, waits: bool = True
    ) -> None:
        """A request got a 429: pause the endpoint and, on a new overload event, back off.

        ``retry_after`` is the server's Retry-After in seconds, if it sent one. Passing the
        ``permit`` of the rejected request tells a new overload from a late answer to an old
        one more precisely than timing alone (see module doc). ``waits=False`` says the rejected
        request gives up instead of waiting: then nothing is paused (see module doc).
        """
        now = self._clock()
        self._rate_limited_count += 1
        # One overload answers several requests at once: count it once (see module doc).
        new_event = permit.started_at >= self._last_event_at if permit is not None else now >= self._paused_until
        if new_event:
            self._backoff_events += 1
            self._success_streak = 0
            base = self._concurrency if self._concurrency is not None else max(self._in_flight, 1)
            self._concurrency = max(1, base // 2)
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
        if now + pause > self._paused_until:
            self._paused_until = now + pause
            self._pause_reason = reason

    def _learn_rate(self, now: float) -> None:
        """Lower the request-rate cap after a 429 event (multiplicative decrease)."""
        measured = self._measured_rpm(now)
        if measured is None:
            return  # too few successes to tell; the pause and the concurrency cut still act
        cap = RATE_BACKOFF * measured
        old = self._learned_rpm
        if old is not None:
            cap = min(cap, old)
            since = now - self._last_event_at
            if since > 0 and self._starts_since_event * 60.0 / since >= BINDING_SHARE * old:
                cap = min(cap, BINDING_DECREASE * old)
        self._set_learned_rpm(cap)

    def _set_learned_rpm(self, rpm: float) -> None:
        configured = self.settings.rpm
        self._learned_rpm = None if configured is not None and rpm >= configured else rpm

    def _measured_rpm(self, now: float) -> float | None:
        """Successes per minute over the last minute, or over the shorter time the endpoint has been busy."""
        self._prune(now)
        if len(self._successes) < MIN_RATE_SAMPLES:
            return None
        span = min(WINDOW_S, max(now - self._busy_since, MIN_SPAN_S))
        return len(self._successes) * 60.0 / span


key_fingerprint = key_id  # the limiter's name for it: an endpoint is told apart by its key's hash


class LimiterRegistry:
    """One limiter per endpoint (provider, base URL, key fingerprint), shared by every game.

    The first ``get`` of an endpoint fixes its settings; later calls with other settings get
    the same limiter, since two budgets for one endpoint would together exceed it.
    """

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._limiters: dict[tuple[str, str | None, str | None], EndpointLimiter] = {}

    def get(self, provider: str, base_url: str | None, api_key: str | None, settings: LimitSettings) -> EndpointLimiter:
        """The limiter of this endpoint, created on first use."""
        key = (provider, base_url.rstrip("/") if base_url else None, key_fingerprint(api_key))
        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = self._limiters[key] = EndpointLimiter(settings, clock=self._clock)
        return limiter

    def limiters(self) -> dict[tuple[str, str | None, str | None], EndpointLimiter]:
        """Every endpoint's limiter, keyed by (provider, base URL, key fingerprint), for displays."""
        return dict(self._limiters)
