"""Endpoint limiter: concurrency, rpm and tpm hold together; 429s pause and adapt; nothing leaks.

Time-dependent tests run on an asyncio loop with *virtual* time (:class:`VirtualLoop`): when
every task is waiting, the loop jumps to the next timer instead of sleeping, and the limiter's
clock is the loop's clock. So "20 requests at 600 rpm take 1.9 s" is checked exactly, and ten
simulated minutes of a rate-limited server take a fraction of a real second.
"""

from __future__ import annotations

import asyncio
import random
import selectors
from collections import deque
from collections.abc import Awaitable, Callable
from itertools import pairwise
from typing import Any, TypeVar

import anyio
import pytest
from pydantic import ValidationError

from harness.calls.limits import EndpointLimiter, LimiterRegistry, LimitSettings
from harness.calls.limits.pacing import WINDOW_MARGIN_S
from harness.providers.base import key_id
from harness.providers.ratelimit_headers import RateLimitHeaders

T = TypeVar("T")
Clock = Callable[[], float]


class _VirtualSelector(selectors.DefaultSelector):
    """A selector that, instead of blocking for ``timeout``, advances virtual time by it."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            raise RuntimeError("virtual loop would block forever: every task waits and no timer is set")
        events = super().select(0)
        if not events:
            self.now += timeout
        return events


class VirtualLoop(asyncio.SelectorEventLoop):
    """An asyncio loop whose ``time()`` is virtual and jumps ahead whenever all tasks wait."""

    def __init__(self) -> None:
        self._virtual = _VirtualSelector()
        super().__init__(selector=self._virtual)

    def time(self) -> float:
        return self._virtual.now


def run_virtual(main: Callable[[Clock], Awaitable[T]]) -> T:
    """Run ``main(clock)`` on a fresh virtual-time loop; ``clock`` reads virtual seconds from 0."""
    loop = VirtualLoop()
    try:
        return loop.run_until_complete(main(loop.time))  # type: ignore[arg-type]
    finally:
        loop.close()


def max_in_any_window(times: list[float], window: float = 60.0) -> int:
    """Most events in any half-open window ``(t - window, t]`` (an event at ``s`` counts while ``s + window > t``)."""
    times = sorted(times)
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while times[lo] + window <= t:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


# ---- settings -------------------------------------------------------------------------------


def test_settings_defaults_and_validation() -> None:
    s = LimitSettings()
    assert (s.concurrency, s.rpm, s.tpm) == (8, None, None)
    with pytest.raises(ValidationError):
        LimitSettings(rpn=10)  # type: ignore[call-arg]  # a typo must not pass silently
    with pytest.raises(ValidationError):
        LimitSettings(concurrency=0)
    with pytest.raises(ValidationError):
        LimitSettings(rpm=0)


# ---- concurrency and fairness ---------------------------------------------------------------


async def test_concurrency_cap_is_never_exceeded() -> None:
    limiter = EndpointLimiter(LimitSettings(concurrency=3))
    in_flight = peak = done = 0

    async def call(i: int) -> None:
        nonlocal in_flight, peak, done
        async with limiter.acquire():
            in_flight += 1
            peak = max(peak, in_flight)
            assert limiter.in_flight == in_flight <= 3
            for _ in range(i % 4 + 1):
                await anyio.sleep(0)
            in_flight -= 1
        done += 1

    async with anyio.create_task_group() as tg:
        for i in range(60):
            tg.start_soon(call, i)
    assert peak == 3
    assert done == 60
    assert (limiter.in_flight, limiter.waiting) == (0, 0)


async def test_waiters_start_in_arrival_order() -> None:
    limiter = EndpointLimiter(LimitSettings(concurrency=1))
    order: list[int] = []
    release = anyio.Event()

    async def call(i: int) -> None:
        async with limiter.acquire():
            order.append(i)
            if i == 0:
                await release.wait()

    async with anyio.create_task_group() as tg:
        for i in range(10):
            tg.start_soon(call, i)
            await anyio.sleep(0)  # arrive one after another
        await anyio.sleep(0)
        assert limiter.waiting == 9
        release.set()
    assert order == list(range(10))


async def test_a_free_endpoint_admits_without_a_trip_through_the_event_loop() -> None:
    limiter = EndpointLimiter(LimitSettings(concurrency=2, rpm=600, tpm=100_000))
    other_ran = False

    async def other() -> None:
        nonlocal other_ran
        other_ran = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        async with limiter.acquire(100):
            assert not other_ran  # admitted at once: nothing else could run in between
            assert (limiter.in_flight, limiter.waiting) == (1, 0)
    assert limiter.in_flight == 0


async def test_a_newcomer_does_not_overtake_a_caller_in_line() -> None:
    """When a slot frees up, the caller waiting for it gets it, even if another arrives first."""
    limiter = EndpointLimiter(LimitSettings(concurrency=1))
    order: list[str] = []
    release = anyio.Event()

    async def call(name: str) -> None:
        async with limiter.acquire():
            order.append(name)
            if name == "first":
                await release.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "first")
        await anyio.sleep(0)
        tg.start_soon(call, "waiting")
        await anyio.sleep(0)
        assert limiter.waiting == 1
        release.set()
        await anyio.sleep(0)  # "first" leaves; the slot is free, "waiting" is not yet awake
        assert limiter.in_flight == 0 and limiter.waiting == 1
        await call("newcomer")  # must queue behind "waiting", not take the free slot
    assert order == ["first", "waiting", "newcomer"]


async def test_slot_is_released_when_the_call_fails() -> None:
    limiter = EndpointLimiter(LimitSettings(concurrency=1))
    with pytest.raises(RuntimeError):
        async with limiter.acquire():
            raise RuntimeError("provider down")
    assert limiter.in_flight == 0
    with anyio.fail_after(1):
        async with limiter.acquire():
            pass


# ---- requests per minute --------------------------------------------------------------------


def test_rpm_spaces_request_starts_evenly() -> None:
    async def main(clock: Clock) -> list[float]:
        limiter = EndpointLimiter(LimitSettings(concurrency=None, rpm=600), clock=clock)
        starts: list[float] = []

        async def call() -> None:
            async with limiter.acquire():
                starts.append(clock())
                await anyio.sleep(0.5)

        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(call)
        return starts

    starts = run_virtual(main)
    assert starts[0] == pytest.approx(0.0)
    assert starts[-1] == pytest.approx(1.9)  # 20 requests at 10/s: 19 gaps of 0.1 s
    gaps = [b - a for a, b in pairwise(starts)]
    assert min(gaps) == pytest.approx(0.1) and max(gaps) == pytest.approx(0.1)


def test_rpm_never_exceeds_the_limit_in_any_rolling_minute_nor_bursts_after_idle() -> None:
    async def main(clock: Clock) -> list[float]:
        limiter = EndpointLimiter(LimitSettings(concurrency=4, rpm=30), clock=clock)
        starts: list[float] = []

        async def call() -> None:
            async with limiter.acquire():
                starts.append(clock())
                await anyio.sleep(1.0)

        async with anyio.create_task_group() as tg:
            for _ in range(100):
                tg.start_soon(call)
        await anyio.sleep(300)  # idle: earns no burst credit
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(call)
        return starts

    starts = run_virtual(main)
    assert max_in_any_window(starts) == 30
    assert max_in_any_window(starts, 60.0 + WINDOW_MARGIN_S - 1e-9) == 30  # room for the requests' jitter
    # The achieved rate is the limit itself, less the window's margin once a minute (3 minutes here).
    assert starts[99] == pytest.approx(99 * 2.0 + 3 * WINDOW_MARGIN_S)
    after_idle = starts[100:]
    assert [b - a for a, b in pairwise(after_idle)] == pytest.approx([2.0] * 4)


# ---- tokens per minute ----------------------------------------------------------------------


def _two_calls_with_usage(actual: int | None) -> float:
    """tpm=1000; A reserves 600 and reports ``actual`` after 1 s; return when B (600) starts."""

    async def main(clock: Clock) -> float:
        limiter = EndpointLimiter(LimitSettings(concurrency=None, tpm=1000), clock=clock)
        b_started = -1.0

        async def a() -> None:
            async with limiter.acquire(estimated_tokens=600) as permit:
                assert permit.tokens == 600
                await anyio.sleep(1.0)
                if actual is not None:
                    permit.record_usage(actual)
                    assert permit.tokens == actual

        async def b() -> None:
            nonlocal b_started
            async with limiter.acquire(estimated_tokens=600):
                b_started = clock()

        async with anyio.create_task_group() as tg:
            tg.start_soon(a)
            await anyio.sleep(0.01)
            tg.start_soon(b)
        return b_started

    return run_virtual(main)


def test_tpm_reserves_the_estimate_then_refunds_or_charges_the_actual_usage() -> None:
    # Reserved 600 of 1000: B's 600 fits once A's charge leaves the rolling minute (pacing alone: 36 s).
    assert _two_calls_with_usage(None) == pytest.approx(60.0)
    # A used only 100: pacing 100 * 60/1000 = 6 s, and the window has room at once.
    assert _two_calls_with_usage(100) == pytest.approx(6.0)
    # A used 1500: pacing 1500 * 60/1000 = 90 s; the window is over the limit until 60 s.
    assert _two_calls_with_usage(1500) == pytest.approx(90.0)


def test_tpm_holds_over_every_rolling_minute_with_uneven_requests() -> None:
    rng = random.Random(7)
    sizes = [rng.choice([50, 200, 400, 900]) for _ in range(300)]

    async def main(clock: Clock) -> list[tuple[float, int]]:
        limiter = EndpointLimiter(LimitSettings(concurrency=20, tpm=10_000), clock=clock)
        log: list[tuple[float, int]] = []

        async def call(size: int) -> None:
            async with limiter.acquire(estimated_tokens=size + 100) as permit:
                await anyio.sleep(0.7)
                permit.record_usage(size)
                log.append((permit.started_at, size))

        async with anyio.create_task_group() as tg:
            for size in sizes:
                tg.start_soon(call, size)
        return log

    log = sorted(run_virtual(main))
    for t, _ in log:
        assert sum(n for s, n in log if s <= t < s + 60) <= 10_000
    elapsed = log[-1][0] - log[0][0]
    assert sum(sizes) / (elapsed / 60) > 0.9 * 10_000  # and the budget is actually used


def test_an_estimate_above_tpm_waits_for_an_empty_window_instead_of_forever() -> None:
    async def main(clock: Clock) -> list[float]:
        limiter = EndpointLimiter(LimitSettings(tpm=100), clock=clock)
        starts = []
        for _ in range(2):
            async with limiter.acquire(estimated_tokens=500) as permit:
                starts.append(permit.started_at)
        return starts

    assert run_virtual(main) == pytest.approx([0.0, 300.0])  # pacing 500 * 60/100 s


def test_negative_token_counts_are_rejected() -> None:
    limiter = EndpointLimiter(LimitSettings())
    with pytest.raises(ValueError):
        limiter.acquire(estimated_tokens=-1)


# ---- 429s: see test_limits_429.py --------------------------------------------------------------


# ---- cancellation ---------------------------------------------------------------------------


async def test_cancelling_a_waiter_takes_no_slot() -> None:
    limiter = EndpointLimiter(LimitSettings(concurrency=1))
    release = anyio.Event()

    async def holder() -> None:
        async with limiter.acquire():
            await release.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(holder)
        await anyio.sleep(0)
        with anyio.move_on_after(0.05) as scope:
            async with limiter.acquire():
                pytest.fail("admitted while the only slot was taken")
        assert scope.cancelled_caught
        assert (limiter.in_flight, limiter.waiting) == (1, 0)
        release.set()
    assert limiter.in_flight == 0
    with anyio.fail_after(1):
        async with limiter.acquire():
            assert limiter.in_flight == 1


def test_cancelling_a_waiter_takes_no_rate_slot_nor_tokens() -> None:
    async def main(clock: Clock) -> tuple[float, float]:
        limiter = EndpointLimiter(LimitSettings(rpm=6, tpm=1000), clock=clock)
        async with limiter.acquire(estimated_tokens=100):
            pass
        # The next start may happen at 10 s (rpm 6). Give up waiting at 5 s.
        with anyio.move_on_after(5):
            async with limiter.acquire(estimated_tokens=800):
                pytest.fail("admitted before the rate allowed")
        ledger = sum(c.tokens for c in limiter._pacing._ledger)
        async with limiter.acquire(estimated_tokens=800) as permit:
            return permit.started_at, ledger

    started, ledger = run_virtual(main)
    assert ledger == 100  # the cancelled waiter reserved nothing
    assert started == pytest.approx(10.0)  # and did not push the rate slot back


# ---- counters and registry ------------------------------------------------------------------


def test_snapshot_reports_the_counters_a_display_needs() -> None:
    async def main(clock: Clock) -> Any:
        limiter = EndpointLimiter(LimitSettings(concurrency=2), clock=clock)
        snapshots = []

        async def call() -> None:
            async with limiter.acquire():
                await anyio.sleep(1)

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(call)
            await anyio.sleep(0.5)
            limiter.on_rate_limited(3.0, limits=RateLimitHeaders(requests_limit=60, requests_remaining=0))
            snapshots.append(limiter.snapshot())
        return snapshots[0]

    snap = run_virtual(main)
    assert (snap.in_flight, snap.waiting, snap.concurrency, snap.max_concurrency) == (2, 3, 2, 2)
    assert snap.paused_until == pytest.approx(3.5)
    assert (snap.paused_for, snap.pause_reason) == (pytest.approx(3.0), "limit reached, Retry-After")
    assert (snap.rate_limited_count, snap.limit_reached_count) == (1, 1)
    assert snap.learned_rpm == snap.effective_rpm == pytest.approx(57.0)  # 0.95 of the limit the headers state


def test_registry_shares_one_limiter_per_endpoint() -> None:
    registry = LimiterRegistry()
    settings = LimitSettings(rpm=60)
    a = registry.get("openai", None, "sk-one", settings)
    assert registry.get("openai", None, "sk-one", LimitSettings(rpm=1, tpm=5000)) is a  # one budget ...
    assert a.settings == LimitSettings(concurrency=8, rpm=1, tpm=5000)  # ... under the strictest of each
    assert registry.get("openai", None, "sk-one", LimitSettings(concurrency=None, rpm=90)).settings == a.settings
    assert registry.get("openai", None, "sk-two", settings) is not a
    assert registry.get("anthropic", None, "sk-one", settings) is not a
    local = registry.get("openai", "http://127.0.0.1:8000/v1", None, settings)
    assert local is not a
    assert registry.get("openai", "http://127.0.0.1:8000/v1/", None, settings) is local
    # One server however it is spelled: a name that resolves to the address, the default port, slashes.
    assert registry.get("openai", "http://localhost:8000/v1", None, settings) is local
    assert registry.get("openai", "HTTP://LocalHost:8000//v1/", None, settings) is local
    assert registry.get("openai", "https://127.0.0.1/v1", None, settings) is registry.get(
        "openai", "https://127.0.0.1:443/v1", None, settings
    )
    assert registry.get("openai", "http://127.0.0.1:8001/v1", None, settings) is not local
    assert len(registry.limiters()) == 6


def test_registry_keeps_no_api_key_in_clear() -> None:
    secret = "sk-very-secret-key-0123456789"
    registry = LimiterRegistry()
    limiter = registry.get("openai", None, secret, LimitSettings())

    def strings(obj: Any, depth: int = 0) -> list[str]:
        if depth > 4:
            return []
        if isinstance(obj, str):
            return [obj]
        if isinstance(obj, dict):
            return [s for k, v in obj.items() for x in (k, v) for s in strings(x, depth + 1)]
        if isinstance(obj, list | tuple | set | deque):
            return [s for x in obj for s in strings(x, depth + 1)]
        if hasattr(obj, "__dict__"):
            return strings(vars(obj), depth + 1)
        return []

    found = strings(registry) + strings(limiter)
    assert not any(secret in s for s in found)
    assert key_id(secret) in found  # the endpoint is told apart by a hash prefix
    assert len(key_id(secret) or "") == 12
