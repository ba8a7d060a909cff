"""How hard the call path tries one request: the bounds, the waits and the loop every attempt runs in.

Only what the provider calls retryable (:class:`~harness.providers.base.Fault`) is tried again,
bounded in attempts and in total time. A 429 with a Retry-After is tried again after exactly that wait
plus a jitter of up to a tenth of it (at most ``MAX_JITTER_S``), so that the requests one refusal
answered do not all come back at once; any other failure after exponential backoff with jitter, never
sooner than a Retry-After the server sent. A wait the server asks for beyond the request's whole time
budget is not sat out: the request gives up at once (the failure stays a transient one, so a resume
replays it).

While a request waits to try again, its game lends its slot (:data:`LEND_SLOT`): a run plays only as
many games at once as its endpoints can serve, and a game sitting out a Retry-After serves none, so
another game plays meanwhile and a stray 429 costs its own request seconds, not the run its throughput.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential, wait_random

from harness.providers.base import RetryDecision
from harness.providers.tiers import ServiceTier

P = ParamSpec("P")
T = TypeVar("T")

FLEX_TIMEOUT_S = 900.0
"""The least per-attempt timeout of a flex request (OpenAI's advice: flex answers slowly, up to 15 minutes)."""

BATCH_TIMEOUT_S = 25 * 3600.0
"""The most one batch attempt waits: the providers' 24-hour window, and an hour for the results to be fetched."""

MAX_JITTER_S = 1.0
"""The most a Retry-After is lengthened by its jitter (a tenth of it, drawn at random)."""

LEND_SLOT: ContextVar[Callable[[], AbstractContextManager[object]] | None] = ContextVar("lend_slot", default=None)
"""Set by the scheduler in each game's task: entered for the time a request of that game waits to retry."""


class RetrySettings(BaseModel):
    """How hard to try one request before the game is marked failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(6, ge=1, le=100)
    max_seconds: float = Field(600.0, gt=0, description="total time for one request, waits included")
    timeout: float = Field(60.0, gt=0, description="per-attempt timeout in seconds")
    backoff_initial: float = Field(1.0, ge=0)
    backoff_max: float = Field(60.0, ge=0)

    def for_tier(self, tier: ServiceTier) -> RetrySettings:
        """The bounds for requests bought at ``tier``. Flex answers slowly: unless the user set them
        (``PDBENCH_TIMEOUT``, ``PDBENCH_RETRY_SECONDS``), an attempt may take :data:`FLEX_TIMEOUT_S` and a
        request twice that, so that one slow attempt leaves time to ask again. A batch item may take the
        batch's whole window (:data:`BATCH_TIMEOUT_S`), whatever was set for synchronous requests."""
        if tier is ServiceTier.BATCH:
            return self.model_copy(update={"timeout": BATCH_TIMEOUT_S, "max_seconds": 2 * BATCH_TIMEOUT_S})
        if tier is not ServiceTier.FLEX:
            return self
        given = self.model_fields_set
        timeout = self.timeout if "timeout" in given else max(self.timeout, FLEX_TIMEOUT_S)
        total = self.max_seconds if "max_seconds" in given else max(self.max_seconds, 2 * timeout)
        return self.model_copy(update={"timeout": timeout, "max_seconds": total})


class AttemptFailed(Exception):
    """One attempt failed: the provider's decision and the call path's verdict (``retry``: whether this
    request may try again, bounds aside). The attempt's record is with the request's others."""

    def __init__(self, decision: RetryDecision, reason: str, retry: bool) -> None:
        super().__init__(reason)
        self.decision = decision
        self.reason = reason
        self.retry = retry


def verdict(decision: RetryDecision, settings: RetrySettings) -> tuple[bool, str]:
    """Whether the request may try again after ``decision``, and the reason to record: a wait the
    server asks for beyond the request's whole budget is not sat out, and the reason says so."""
    wait = decision.retry_after
    if decision.retry and wait is not None and wait > settings.max_seconds:
        return False, (
            f"{decision.reason} (the server asks to wait {wait:g} s, "
            f"more than the {settings.max_seconds:g} s allowed for a request)"
        )
    return decision.retry, decision.reason


def may_wait(settings: RetrySettings, attempts: int, seconds: float) -> bool:
    """Whether a request that has made ``attempts`` attempts in ``seconds`` is still within its bounds,
    so that a retryable failure now is followed by a wait rather than by giving up."""
    return attempts < settings.max_attempts and seconds < settings.max_seconds


class RetryPolicy:
    """The attempts of one request. The first is a plain await: most requests are answered at once and never
    enter a retry loop. After a failure that may be retried, tenacity runs the rest within the bounds
    (:attr:`RetrySettings.max_attempts` attempts in all, :attr:`RetrySettings.max_seconds` from the first
    attempt's start), deciding on that first failure as on any. Made once per run and tier; holds no state of a
    request, so concurrent requests share it."""

    def __init__(
        self, settings: RetrySettings, sleep: Callable[[float], Awaitable[None]], on_retry: Callable[[], None]
    ) -> None:
        self._settings = settings
        self._sleep = sleep
        self._on_retry = on_retry
        self._jitter = random.Random()
        self._backoff = wait_exponential(multiplier=settings.backoff_initial, max=settings.backoff_max) + wait_random(
            0, settings.backoff_initial
        )
        self._retry = retry_if_exception(lambda e: isinstance(e, AttemptFailed) and e.retry)

    async def run(self, attempt: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        """``attempt``'s answer; a failed attempt raises :class:`AttemptFailed`, and the last failure is raised
        when it may not be retried or the bounds are spent. Other exceptions pass through at once."""
        started = time.monotonic()
        try:
            return await attempt(*args, **kwargs)
        except AttemptFailed as failed:
            if not failed.retry:
                raise
            made: list[AttemptFailed] = [failed]

        async def again() -> T:
            if made:  # the attempt already made: tenacity decides on it, then waits, as after any failure
                raise made.pop()
            return await attempt(*args, **kwargs)

        settings = self._settings

        def spent(state: RetryCallState) -> bool:
            return not may_wait(settings, state.attempt_number, time.monotonic() - started)

        retrying = AsyncRetrying(
            stop=spent,
            wait=self._wait,
            retry=self._retry,
            before_sleep=self._before_sleep,
            sleep=self._lend_and_sleep,
            reraise=True,
        )
        return await retrying(again)

    def _wait(self, state: RetryCallState) -> float:
        """A 429's Retry-After and its jitter; otherwise the backoff, never shorter than a Retry-After."""
        failed = state.outcome.exception() if state.outcome is not None else None
        decision = failed.decision if isinstance(failed, AttemptFailed) else None
        server_says = decision.retry_after if decision is not None else None
        if decision is not None and decision.rate_limited and server_says:  # a wait of 0 is no wait: back off
            return server_says + self._jitter.uniform(0.0, min(server_says / 10, MAX_JITTER_S))
        return max(self._backoff(state), server_says or 0.0)

    def _before_sleep(self, state: RetryCallState) -> None:
        self._on_retry()

    async def _lend_and_sleep(self, seconds: float) -> None:
        """The wait before the next attempt, its game's slot lent meanwhile (see :data:`LEND_SLOT`)."""
        lend = LEND_SLOT.get()
        with lend() if lend is not None else nullcontext():
            await self._sleep(seconds)
