"""The path of one model call, in one place: known answer -> one sender -> retry loop -> attempt -> record.

:meth:`CallPath.request` builds one :class:`~harness.calls.request.Request` (the provider and its limiter,
the messages, parameters and facts, the caller's reader, where the call belongs and its first attempt's
number) and hands it from step to step, each a method with one job:

* **known answer** (:mod:`harness.calls.answers`): an identical request (provider, model, base URL,
  messages, sampling parameters, sample identity) already answered, in the shared response cache,
  in memory or in the results file being resumed, is answered from there (``cached = true``, free);
  an offline provider's answers (the mock's) are computed again instead, never cached;
* **one sender**: the same request in flight in this process is awaited, not sent twice; across
  processes, the shared cache's claim does the same;
* **retry loop** (:mod:`harness.calls.retry`): the first attempt is a plain await; after a failure that may
  be retried, more attempts, bounded in attempts and total time, waits never shorter than the server's
  Retry-After;
* **attempt**: under the endpoint's limiter (concurrency, requests/min, tokens/min; paused and
  narrowed on a 429), with a deadline, the provider's failure classified by the provider;
* **record** (:class:`~harness.calls.request.Request`): every attempt, failed ones included, becomes
  a ``calls`` row whose outcome is decided in one place, from the provider's fault or, for an
  answer, from the caller's reading of it (``read``).

Keys (:mod:`harness.providers.keys`): a request whose messages hold a key is refused before any of these steps
(:class:`~harness.calls.request.KeyInPrompt`), and an answer that quotes a key is scrubbed before it is
read, recorded or cached, so that the cache and the results file hold the same text.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

import anyio
import anyio.lowlevel

from harness.calls.answers import KnownAnswers, record_from_ledger
from harness.calls.batch import Batches, BatchItemFailed, BatchSettings, BatchStopped
from harness.calls.cache.cache import ResponseCache
from harness.calls.limits import EndpointLimiter, LimiterClosed
from harness.calls.pricing import PriceTable
from harness.calls.record import Answer, CallRecord
from harness.calls.request import (
    BudgetExhausted,
    CallFailed,
    CallResult,
    CallStats,
    CallTag,
    Reading,
    Request,
    Stopped,
    refusal_reason,
    refused,
    take_as_is,
)
from harness.calls.retry import AttemptFailed, RetryPolicy, RetrySettings, may_wait, verdict
from harness.providers.base import (
    CacheHints,
    Completion,
    Message,
    PromptFacts,
    Provider,
    SamplingParams,
    estimate_tokens,
)
from harness.providers.keys import remember_environment_keys, scrub
from harness.providers.tiers import CacheTtl, ServiceTier
from harness.util.plural import plural

__all__ = [
    "BudgetExhausted",
    "CallFailed",
    "CallPath",
    "CallResult",
    "CallStats",
    "CallTag",
    "Reading",
    "RetrySettings",
    "Stopped",
    "record_from_ledger",
]

T = TypeVar("T")

CLAIM_MARGIN_S = 10.0
"""How long a claim on a request in flight outlives the request's own budget (see KnownAnswers.claim)."""


@dataclass(slots=True)
class _Exchange:
    """What the attempts of one request share: their records so far and the next attempt's number."""

    first_attempt: int
    next_attempt: int
    started: float = field(default_factory=time.monotonic)
    records: list[CallRecord] = field(default_factory=list)

    @property
    def made(self) -> int:
        """Attempts made so far."""
        return self.next_attempt - self.first_attempt


def offline(provider: Provider) -> bool:
    """Whether ``provider`` computes its answers here (the mock): free and the same every time, they are
    neither looked up nor kept (cache, memory, ledger). Every other provider's answers are paid for."""
    return bool(getattr(provider, "offline", False))


class CallPath:
    """Shared by every model call of a run."""

    def __init__(
        self,
        *,
        cache: ResponseCache | None,
        prices: PriceTable,
        retry: RetrySettings | None = None,
        max_cost: float | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        should_stop: Callable[[], bool] | None = None,
        ledger_run: str | None = None,
        recorded: dict[tuple[str, str, str], Answer] | None = None,
        on_disk_full: Callable[[str], None] | None = None,
        key_variables: Iterable[str] = (),
        batch: BatchSettings | None = None,
    ) -> None:
        """``ledger_run`` ("<absolute results file>#<run id>") has every paid answer written to the cache's
        ledger with its calls row; ``recorded`` answers requests (by provider, model and request JSON) from
        the run's own results file, for a resume whose cache lost them; ``on_disk_full`` stops the run.
        ``key_variables`` (the ``api_key_env`` of the run's players) hold keys too: with the environment's
        provider keys, no request may carry them and nothing stored may hold them (see the module docstring).
        ``batch``: when requests bought at ``service_tier: batch`` are submitted and polled (they need the cache,
        where their batches are stored)."""
        remember_environment_keys(key_variables)
        self._should_stop = should_stop or (lambda: False)
        self.answers = KnownAnswers(
            cache,
            ledger_run=ledger_run,
            recorded=recorded or {},
            on_disk_full=on_disk_full or (lambda reason: None),
            should_stop=self._should_stop,
        )
        self.prices = prices
        self.retry = retry or RetrySettings()
        self.max_cost = max_cost
        self.stats = CallStats()
        self._sleep = sleep or self._sleep_unless_stopped
        self.batches = (
            None if cache is None else Batches(cache, batch or BatchSettings(), self._should_stop, self._sleep)
        )
        self._policies: dict[ServiceTier | None, tuple[RetrySettings, RetryPolicy]] = {}
        # Requests in flight; the event is made only when a second caller waits for the same key.
        self._in_flight: dict[str, anyio.Event | None] = {}

    @property
    def cache(self) -> ResponseCache | None:
        """The response cache in use (None: no cache, or none could be renewed after it broke)."""
        return self.answers.cache

    def forget_recorded(self, records: list[CallRecord]) -> None:
        """The results file now holds ``records``: their ledger entries go (see KnownAnswers.forget_recorded)."""
        self.answers.forget_recorded(records)

    async def _sleep_unless_stopped(self, seconds: float) -> None:
        """A retry wait that ends early when the run is asked to stop."""
        with anyio.move_on_after(seconds):
            while not self._should_stop():
                await anyio.sleep(min(0.1, seconds))

    def _count_retry(self) -> None:
        self.stats.retries += 1

    def _bounds(self, req: Request[Any]) -> tuple[RetrySettings, RetryPolicy]:
        """The retry bounds of the request's tier (:meth:`RetrySettings.for_tier`: flex waits longer) and the
        loop built from them, made once per tier."""
        tier = req.tier
        if tier not in self._policies:
            settings = self.retry.for_tier(tier) if tier is not None else self.retry
            self._policies[tier] = settings, RetryPolicy(settings, self._sleep, self._count_retry)
        return self._policies[tier]

    @overload
    async def request(
        self,
        provider: Provider,
        limiter: EndpointLimiter,
        messages: list[Message],
        params: SamplingParams,
        tag: CallTag,
        first_attempt: int,
        facts: PromptFacts | None = None,
        *,
        cache: CacheHints | None = None,
    ) -> CallResult[str]: ...

    @overload
    async def request(
        self,
        provider: Provider,
        limiter: EndpointLimiter,
        messages: list[Message],
        params: SamplingParams,
        tag: CallTag,
        first_attempt: int,
        facts: PromptFacts | None = None,
        *,
        read: Callable[[str], Reading[T]],
        cache: CacheHints | None = None,
    ) -> CallResult[T]: ...

    async def request(
        self,
        provider: Provider,
        limiter: EndpointLimiter,
        messages: list[Message],
        params: SamplingParams,
        tag: CallTag,
        first_attempt: int,
        facts: PromptFacts | None = None,
        *,
        read: Callable[[str], Reading[Any]] = take_as_is,
        cache: CacheHints | None = None,
    ) -> CallResult[Any]:
        """One answer for ``messages``, read by ``read``; raises CallFailed (records attached), BudgetExhausted
        or Stopped. ``first_attempt`` numbers the first record (a re-ask continues the round's numbering).

        ``facts`` go to the provider beside the messages, for stand-in models (see PromptFacts); they
        restate the messages, so they are neither sent to a real model nor part of the cache key; nor is
        ``cache``, which tells the provider where the prompt's reusable prefixes end (see CacheHints).

        Always a checkpoint: it lets the other games run (and can be cancelled) even when the
        answer needs no waiting at all (a cache hit, a model that answers instantly).
        """
        req = Request(provider, limiter, messages, params, tag, first_attempt, facts, read, cache)
        if offline(provider):  # computed here, free and the same every time: nothing to look up or keep
            await anyio.lowlevel.checkpoint()
            return await self._send(req)
        if not self.answers.uses_cache:
            await anyio.lowlevel.checkpoint()  # with a cache, looking the answer up is one
        async with self._one_sender(req.key):
            if self.answers.uses_cache:
                return await self._send_claimed(req)
            if (known := self.answers.find(req)) is not None:
                return self._from_known(req, known)
            return await self._send(req)

    @asynccontextmanager
    async def _one_sender(self, key: str) -> AsyncIterator[None]:
        """Hold the request ``key`` in flight: the same request of the same draw already in flight (a resumed
        game catching up with the original, two runs of one experiment) is waited for, not paid twice.
        Requests of other draws (another seat, condition or replicate) never share an answer."""
        in_flight = self._in_flight
        while key in in_flight:
            pending = in_flight[key]
            if pending is None:
                pending = in_flight[key] = anyio.Event()
            await pending.wait()
        in_flight[key] = None  # no await between the check and the claim
        try:
            yield
        finally:
            if (waiting := in_flight.pop(key)) is not None:
                waiting.set()

    def _from_known(self, req: Request[T], known: Answer) -> CallResult[T]:
        """The result of a request answered without sending it: free, and recorded as cached (a refusal as
        a refusal)."""
        self.stats.calls += 1
        self.stats.cached += 1
        text = known.text
        reading = self._read(req, text, known.refusal)
        record = req.record(
            req.first_attempt,
            text=text,
            reading=reading,
            duration_ms=0.0,
            input_tokens=0,
            output_tokens=0,
            cost_usd=0.0,
            cached=True,
            refusal=known.refusal,
        )
        return CallResult(text=text, reading=reading, records=[record], cached=True)

    def _read(self, req: Request[T], text: str, refusal: str | None = None) -> Reading[T]:
        """The caller's reading of an answer; of a withheld one (``refusal``), no move (see ``refused``)."""
        if refusal is not None:
            return refused(req.read, refusal)
        reading = req.read(text)
        if reading.unreadable is not None:  # a move's failure, or an answer to another question (comprehension)
            if req.tag.purpose == "move":
                self.stats.parse_failures += 1
            else:
                self.stats.unreadable_other += 1
        return reading

    async def _send_claimed(self, req: Request[T]) -> CallResult[T]:
        """Answer the request from the shared cache, or send it while holding the cache's claim on it, so that
        another process asking the same waits for this answer; or take that process's answer, when it held
        the claim first."""
        bounds = self._bounds(req)[0]
        lease = bounds.max_seconds + bounds.timeout + CLAIM_MARGIN_S
        if (known := await self.answers.claim(req, lease)) is not None:
            return self._from_known(req, known)
        try:
            return await self._send(req)
        except BaseException:
            await self.answers.release(req.key)  # no answer: another process may send
            raise

    async def _send(self, req: Request[T]) -> CallResult[T]:
        """Every attempt of the request, in one retry loop; the last failure becomes a CallFailed that
        carries every attempt's record and says what kind of failure it was."""
        exchange = _Exchange(req.first_attempt, req.first_attempt)
        try:
            return await self._bounds(req)[1].run(self._attempt, req, exchange)
        except AttemptFailed as failed:
            why = (
                f"{failed.reason} (gave up after {plural(exchange.made, 'attempt')})" if failed.retry else failed.reason
            )
            raise CallFailed(f"{req.name}: {why}", exchange.records, kind=failed.decision.fault.failure) from None

    def _may_send(self, records: list[CallRecord]) -> None:
        if self._should_stop():
            raise Stopped("the run was stopped before this request was sent", records)
        if self.max_cost is not None and self.stats.cost_usd >= self.max_cost:
            raise BudgetExhausted(f"the cost limit of ${self.max_cost:g} was reached", records)

    async def _attempt(self, req: Request[T], exchange: _Exchange) -> CallResult[T]:
        """One attempt under the endpoint's limiter: the answer, recorded and kept, or an AttemptFailed."""
        self._may_send(exchange.records)
        if req.tier is ServiceTier.BATCH:
            number, completion, started = await self._in_batch(req, exchange)
            result = await self._answered(req, exchange, number, completion, started)
            assert self.batches is not None
            await self.batches.collected(req.key)  # the answer is stored: its batch item is done with
            return result
        try:
            number, completion, started = await self._under_limiter(req, exchange)
        except LimiterClosed:
            raise Stopped("the run was stopped before this request was sent", exchange.records) from None
        return await self._answered(req, exchange, number, completion, started)

    async def _in_batch(self, req: Request[Any], exchange: _Exchange) -> tuple[int, Completion, float]:
        """The answer from the request's provider batch (see :mod:`harness.calls.batch`), outside the endpoint's
        limiter (a batch is one submission, however many requests it holds); an item without an answer is a
        failed attempt, as a synchronous one would be."""
        if self.batches is None:
            raise CallFailed(
                f"{req.name}: service_tier: batch needs the response cache, where batches are stored until they "
                "are collected; run without --no-cache",
                exchange.records,
            )
        number = exchange.next_attempt
        exchange.next_attempt += 1
        self.stats.calls += 1
        started = time.perf_counter()
        try:
            with anyio.fail_after(self._bounds(req)[0].timeout + 1.0):
                completion = await self.batches.answer(
                    req.provider,
                    req.key,
                    lambda api: api.item(req.key, req.messages, req.params, req.cache),
                    req.params,
                )
        except BatchStopped as exc:
            raise Stopped(str(exc), exchange.records) from None
        except Exception as exc:
            raise self._failed(req, exchange, exc, number, started) from exc
        return number, completion, started

    async def _under_limiter(self, req: Request[Any], exchange: _Exchange) -> tuple[int, Completion, float]:
        """Send the request once the limiter admits it, and tell the limiter how it went: the attempt's
        number, the answer and when it was sent; or an AttemptFailed."""
        limiter = req.limiter
        estimate = estimate_tokens(req.messages) + req.params.max_tokens
        async with limiter.acquire(estimate) as permit:
            self._may_send(exchange.records)  # again: the wait for a slot may have outlasted the budget or the run
            number = exchange.next_attempt
            exchange.next_attempt += 1
            self.stats.calls += 1
            started = time.perf_counter()
            try:
                completion = await self._generate(req)
            except Exception as exc:
                failed = self._failed(req, exchange, exc, number, started)
                decision = failed.decision
                if decision.rate_limited and not decision.no_capacity:
                    # Only the pattern of refusals pauses the endpoint (see harness.calls.limits.adaptation); a
                    # tier without capacity (flex's "resource unavailable") says nothing of the endpoint's rate.
                    spent = time.monotonic() - exchange.started
                    waits = failed.retry and may_wait(self._bounds(req)[0], exchange.made, spent)
                    limiter.on_rate_limited(decision.retry_after, permit=permit, waits=waits, limits=decision.limits)
                raise failed from exc
            tokens = (completion.input_tokens or 0) + (completion.output_tokens or 0)
            permit.record_usage(tokens or estimate)
            limiter.on_success(permit)
        return number, completion, started

    async def _generate(self, req: Request[Any]) -> Completion:
        """The provider's answer within a hard deadline, a second after the provider's own timeout (an
        SDK's timeout bounds each read, not the whole request); the timeout is the request's tier's."""
        timeout = self._bounds(req)[0].timeout
        with anyio.fail_after(timeout + 1.0):
            return await req.provider.generate(req.messages, req.params, timeout, req.facts, cache=req.cache)

    def _failed(
        self, req: Request[Any], exchange: _Exchange, exc: Exception, number: int, started: float
    ) -> AttemptFailed:
        """A failed attempt, its record kept with the request's others: the provider's decision (a batch item's
        own) and the call path's verdict."""
        decision = exc.decision if isinstance(exc, BatchItemFailed) else req.provider.should_retry(exc)
        retry, reason = verdict(decision, self._bounds(req)[0])
        self.stats.rate_limited += decision.rate_limited
        duration_ms = (time.perf_counter() - started) * 1000
        exchange.records.append(req.record(number, fault=decision.fault, error=reason, duration_ms=duration_ms))
        return AttemptFailed(decision, reason, retry)

    async def _answered(
        self, req: Request[T], exchange: _Exchange, number: int, completion: Completion, started: float
    ) -> CallResult[T]:
        """An answer: read, priced, recorded, and kept (cache or memory) before the call returns. An answer
        the provider withheld is one too (it was paid for, and asking again draws the same): recorded as
        ``refused``, and kept as a refusal."""
        duration_ms = (time.perf_counter() - started) * 1000
        if (text := scrub(completion.text)) != completion.text:  # an answer quoting a key is kept without it
            completion = dataclasses.replace(completion, text=text)
        refusal = refusal_reason(completion.refusal) if completion.refusal is not None else None
        reading = self._read(req, completion.text, refusal)
        ttl = req.cache.ttl if req.cache is not None else CacheTtl.FIVE_MINUTES
        cost = self._count(req.name, completion, req.tier or ServiceTier.STANDARD, ttl)
        record = req.record(
            number,
            text=completion.text,
            reading=reading,
            duration_ms=duration_ms,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            cost_usd=cost,
            refusal=refusal,
            cached_input_tokens=completion.cached_input_tokens,
            cache_write_tokens=completion.cache_write_tokens,
        )
        exchange.records.append(record)
        if not offline(req.provider):
            await self.answers.keep(req, completion, record, refusal)
        return CallResult(text=completion.text, reading=reading, records=exchange.records, cached=False)

    def _count(self, model: str, completion: Completion, tier: ServiceTier, ttl: CacheTtl) -> float | None:
        """A paid answer's cost at its tier's prices (None: unknown), added to the counters with its tokens and,
        when the provider reported its prompt cache, the tokens read from it and the dollars that saved."""
        c = completion
        cached, written = c.cached_input_tokens, c.cache_write_tokens
        cost = self.prices.cost(
            model,
            c.input_tokens,
            c.output_tokens,
            cached_input_tokens=cached,
            cache_write_tokens=written,
            tier=tier,
            ttl=ttl,
        )
        stats = self.stats
        stats.input_tokens += c.input_tokens or 0
        stats.output_tokens += c.output_tokens or 0
        stats.cost_usd += cost or 0.0
        if cached is not None or written is not None:
            stats.cache_reported = True
            stats.cached_input_tokens += cached or 0
            full = self.prices.cost(model, c.input_tokens, c.output_tokens, tier=tier)  # every input token as input
            stats.cache_saved_usd += full - cost if full is not None and cost is not None else 0.0
        return cost
