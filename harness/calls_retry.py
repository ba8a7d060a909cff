"""How hard the call path tries one request: the bounds, the waits and the loop every attempt runs in.

Only what the provider calls retryable (:class:`~harness.providers.base.Fault`) is tried again,
bounded in attempts and in total time, with exponential backoff and jitter, and never sooner than
the server's Retry-After. A wait the server asks for beyond the request's whole time budget is not
sat out: the request gives up at once (the failure stays a transient one, so a resume replays it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict, Field
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
    wait_random,
)

from harness.providers.base import RetryDecision
from harness.records import CallRecord


class RetrySettings(BaseModel):
    """How hard to try one request before the game is marked failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(6, ge=1, le=100)
    max_seconds: float = Field(600.0, gt=0, description="total time for one request, waits included")
    timeout: float = Field(60.0, gt=0, description="per-attempt timeout in seconds")
    backoff_initial: float = Field(1.0, ge=0)
    backoff_max: float = Field(60.0, ge=0)


class AttemptFailed(Exception):
    """One attempt failed: the provider's decision, the call path's verdict (``retry``: whether this
    request may try again, bounds aside) and the attempt's record."""

    def __init__(self, decision: RetryDecision, reason: str, retry: bool, record: CallRecord) -> None:
        super().__init__(reason)
        self.decision = decision
        self.reason = reason
        self.retry = retry
        self.record = record


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
    """The tenacity loop of one request, built from strategies made once per run."""

    def __init__(
        self, settings: RetrySettings, sleep: Callable[[float], Awaitable[None]], on_retry: Callable[[], None]
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self._on_retry = on_retry
        self._stop = stop_after_attempt(settings.max_attempts) | stop_after_delay(settings.max_seconds)
        self._backoff = wait_exponential(multiplier=settings.backoff_initial, max=settings.backoff_max) + wait_random(
            0, settings.backoff_initial
        )
        self._retry = retry_if_exception(lambda e: isinstance(e, AttemptFailed) and e.retry)

    def _wait(self, state: RetryCallState) -> float:
        """The backoff, never shorter than the server's Retry-After."""
        failed = state.outcome.exception() if state.outcome is not None else None
        server_says = failed.decision.retry_after if isinstance(failed, AttemptFailed) else None
        return max(self._backoff(state), server_says or 0.0)

    def _before_sleep(self, state: RetryCallState) -> None:
        self._on_retry()

    def attempts(self) -> AsyncRetrying:
        """A fresh loop (tenacity keeps per-loop state, so concurrent requests cannot share one): every
        attempt runs inside it, failed ones raise :class:`AttemptFailed`, the last failure is re-raised."""
        return AsyncRetrying(
            stop=self._stop,
            wait=self._wait,
            retry=self._retry,
            before_sleep=self._before_sleep,
            sleep=self._sleep,
            reraise=True,
        )
