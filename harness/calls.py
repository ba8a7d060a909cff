"""The path of one model call, in one place: cache -> limiter -> retry -> provider -> record.

* **cache**: an identical request (provider, model, base URL, messages, sampling parameters,
  sample identity: condition, replicate, seat) is answered from the shared response cache,
  recorded with ``cached = true`` and costs nothing. Answers are cached as soon as they arrive
  (committed before the call returns), before the round is recorded, so a crashed run that is
  resumed never pays twice for an answer. The messages are encoded to JSON once per request, for the record and the key.
* **limiter**: the endpoint's concurrency, requests/min and tokens/min limits (one limiter
  per provider, base URL and key), paused and narrowed on a 429.
* **retry**: tenacity, only for what the provider calls retryable (408, 409, 429, 5xx, 529,
  connection errors, timeouts), bounded in attempts and total time, exponential backoff with
  jitter, never shorter than the server's Retry-After. The first attempt is made outside
  tenacity (whose machinery cost more than the rest of a call); only a failed first attempt
  enters its loop, as that loop's own first attempt, so bounds and waits are unchanged.
* **record**: every attempt, failed ones included, becomes a ``calls`` row.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
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

from harness.cache import (
    CachedResponse,
    Claim,
    LedgerEntry,
    ResponseCache,
    cache_key_join,
    cache_key_parts,
    canonical_json,
    json_string,
    set_aside,
)
from harness.errors import CacheLost, DiskFull, StoreError
from harness.limits import EndpointLimiter
from harness.pricing import Price, PriceTable
from harness.providers.base import (
    FailureKind,
    Message,
    PromptFacts,
    Provider,
    RetryDecision,
    Sample,
    SamplingParams,
    estimate_tokens,
)
from harness.records import CallRecord
from harness.states import CallOutcome

log = logging.getLogger("pdbench.calls")


class RetrySettings(BaseModel):
    """How hard to try one request before the game is marked failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(6, ge=1, le=100)
    max_seconds: float = Field(600.0, gt=0, description="total time for one request, waits included")
    timeout: float = Field(60.0, gt=0, description="per-attempt timeout in seconds")
    backoff_initial: float = Field(1.0, ge=0)
    backoff_max: float = Field(60.0, ge=0)


@dataclass(slots=True)
class CallStats:
    """Counters the live display shows; updated by every call."""

    calls: int = 0
    cached: int = 0
    retries: int = 0
    rate_limited: int = 0
    errors: int = 0
    parse_failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class CallFailed(Exception):
    """A request could not be completed (not retryable, or retries exhausted). ``records`` holds
    the attempts made, which were paid for or at least sent, and must be recorded all the same."""

    def __init__(
        self, reason: str, records: list[CallRecord] | None = None, kind: FailureKind = FailureKind.PERMANENT
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.records = records or []
        self.kind = kind


class BudgetExhausted(CallFailed):
    """``--max-cost`` was reached: no new paid call may start."""


class Stopped(CallFailed):
    """The run was asked to stop (Ctrl-C): no new attempt is sent, no retry wait is sat out."""


@dataclass(frozen=True, slots=True)
class CallTag:
    """Where a call belongs (game, round, seat), which draw of the model it is (``sample``), what it is
    for (a move or a comprehension question) and in which order the prompt showed the options."""

    game_id: int
    round: int
    player: str
    sample: Sample
    purpose: str = "move"
    option_order: str | None = None


@dataclass(frozen=True, slots=True)
class CallResult:
    text: str
    records: list[CallRecord]
    cached: bool


class _Attempt(Exception):
    """Internal: a failed attempt carrying the provider's retry decision."""

    def __init__(self, decision: RetryDecision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


MAX_CACHE_RENEWALS = 3  # fresh caches one request tries before it goes on without the cache
CLAIM_MARGIN_S = 10.0
"""How long a claim on a request in flight outlives the request's own timeout (see CallPath._claim)."""

ANSWERED_IN_MEMORY = 100_000
"""Answers a cacheless run remembers (about 17 MB); an identical request older than that is paid again."""

_PLAIN_JSON = json.JSONEncoder(ensure_ascii=False).encode  # what json.dumps(x, ensure_ascii=False) writes


def encode_messages(messages: list[Message]) -> tuple[str, str]:
    """The messages as JSON twice, each string escaped once: as ``json.dumps(messages, ensure_ascii=False)``
    writes them (for ``request_json``) and canonically (:func:`~harness.cache.canonical_json`, for the
    cache key). Messages other than ``{"role": str, "content": str}`` take the general encoder."""
    plain: list[str] = []
    canonical: list[str] = []
    for message in messages:
        if type(message) is not dict or len(message) != 2 or next(iter(message)) != "role":
            break
        role, content = message["role"], message.get("content")
        if type(role) is not str or type(content) is not str:
            break
        r, c = json_string(role), json_string(content)
        plain.append(f'{{"role": {r}, "content": {c}}}')
        canonical.append(f'{{"content":{c},"role":{r}}}')
    else:
        return "[" + ", ".join(plain) + "]", "[" + ",".join(canonical) + "]"
    plain_json = _PLAIN_JSON(messages)  # a TypeError here, before any cache key, as always
    try:
        return plain_json, canonical_json(messages)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache key: messages and params must be plain JSON values ({exc})") from exc


def _now() -> datetime:
    """``created_at`` of a call: naive UTC, as the ``calls`` table stores it."""
    return datetime.now(UTC).replace(tzinfo=None)


class _Setup:
    """What the requests of one provider, parameters and sample identity share (built once, see CallPath)."""

    __slots__ = ("key_head", "key_tail", "name", "params", "provider", "request_tail")

    def __init__(self, provider: Provider, params: SamplingParams, sample: Sample) -> None:
        self.provider = provider  # both kept alive, so that their ids are not reused while this is remembered
        self.params = params
        self.name = f"{provider.name}/{provider.model}"
        # Record what was really sent: a provider may not accept some sampling parameters.
        unsupported = getattr(provider, "unsupported_params", frozenset())
        all_params = params.as_dict()
        sent = {k: v for k, v in all_params.items() if k not in unsupported}
        identity = sample.as_dict()
        # request_json is json.dumps({"messages": ..., "params": sent, "sample": ...}, ensure_ascii=False)
        self.request_tail = f', "params": {_PLAIN_JSON(sent)}, "sample": {_PLAIN_JSON(identity)}}}'
        self.key_head, self.key_tail = cache_key_parts(
            provider.name, provider.model, provider.endpoint.base_url, all_params, identity
        )


class _Request:
    """What every record of one request shares."""

    __slots__ = ("created_at", "game_id", "model", "option_order", "player", "provider", "purpose", "request_json",
                 "round")  # fmt: skip

    def __init__(self, tag: CallTag, provider: str, model: str, request_json: str) -> None:
        self.game_id = tag.game_id
        self.round = tag.round
        self.player = tag.player
        self.purpose = tag.purpose
        self.option_order = tag.option_order
        self.provider = provider
        self.model = model
        self.request_json = request_json
        self.created_at = _now()  # one timestamp for every record of the request, as before

    def record(self, attempt: int) -> CallRecord:
        return CallRecord(self.game_id, self.round, self.player, attempt, self.provider, self.model,
                          self.request_json, None, None, CallOutcome.OK, None, None, None, None, None, False,
                          self.created_at, self.purpose, self.option_order)  # fmt: skip


class CallPath:
    """Shared by every model call of a run."""

    def __init__(
        self,
        *,
        cache: ResponseCache | None,
        prices: PriceTable,
        retry: RetrySettings | None = None,
        max_cost: float | None = None,
        stats: CallStats | None = None,
        sleep: Callable[[float], Any] | None = None,
        should_stop: Callable[[], bool] | None = None,
        ledger_run: str | None = None,
        recorded: dict[tuple[str, str, str], str] | None = None,
        on_disk_full: Callable[[str], None] | None = None,
    ) -> None:
        """``ledger_run`` ("<absolute results file>#<run id>") has every paid answer written to the cache's
        ledger with its calls row; ``recorded`` answers requests (by provider, model and request JSON) from
        the run's own results file, for a resume whose cache lost them; ``on_disk_full`` stops the run."""
        self.cache = cache
        # Whether this run caches at all; ``cache`` itself is briefly None while a broken cache is replaced.
        self.uses_cache = cache is not None
        self.ledger_run = ledger_run
        self.recorded = recorded or {}
        self._on_disk_full = on_disk_full or (lambda reason: None)
        self._renewing = anyio.Lock()
        self.renewals = 0  # fresh caches started because the one in use vanished or broke
        self.prices = prices
        self.retry = retry or RetrySettings()
        self.max_cost = max_cost
        self.stats = stats or CallStats()
        self._should_stop = should_stop or (lambda: False)
        self._sleep = sleep or self._sleep_unless_stopped
        self._warned: set[str] = set()
        # Requests in flight; the event is made only when a second caller waits for the same key.
        self._in_flight: dict[str, anyio.Event | None] = {}
        # Answers kept in memory when there is no cache (--no-cache, or a cache that failed), so an
        # identical request within the run is not paid twice; bounded, oldest forgotten first.
        self._answered: OrderedDict[str, str] = OrderedDict()
        self._prices: dict[str, Price | None] = {}  # model name -> price: the table is matched once per model
        self._setups: dict[tuple[int, int, Sample], _Setup] = {}  # see _Setup

    async def _sleep_unless_stopped(self, seconds: float) -> None:
        """A retry wait that ends early when the run is asked to stop."""
        with anyio.move_on_after(seconds):
            while not self._should_stop():
                await anyio.sleep(min(0.1, seconds))

    def _warn_once(self, what: str, message: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            log.warning(message)

    def budget_left(self) -> bool:
        return self.max_cost is None or self.stats.cost_usd < self.max_cost

    def _setup(self, provider: Provider, params: SamplingParams, sample: Sample) -> _Setup:
        # By identity, not equality: SamplingParams(temperature=1) == SamplingParams(temperature=1.0),
        # but their JSON, and so their cache keys, differ. A player's parameters are one object.
        key = (id(provider), id(params), sample)
        setup = self._setups.get(key)
        if setup is None or setup.provider is not provider or setup.params is not params:
            setup = _Setup(provider, params, sample)
            if len(self._setups) >= 4096:
                self._setups.clear()
            self._setups[key] = setup
        return setup

    def _cost(self, name: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """``PriceTable.cost``, with the pattern match done once per model."""
        try:
            price = self._prices[name]
        except KeyError:
            price = self._prices[name] = self.prices.price(name)
        if price is None:
            return None
        return ((input_tokens or 0) * price.input + (output_tokens or 0) * price.output) / 1_000_000

    async def request(
        self,
        provider: Provider,
        limiter: EndpointLimiter,
        messages: list[Message],
        params: SamplingParams,
        tag: CallTag,
        first_attempt: int,
        facts: PromptFacts | None = None,
    ) -> CallResult:
        """One answer for ``messages``; raises CallFailed (records attached) or BudgetExhausted.

        ``facts`` go to the provider beside the messages, for stand-in models (see PromptFacts); they
        restate the messages, so they are neither sent to a real model nor part of the cache key.

        Always a checkpoint: it lets the other games run (and can be cancelled) even when the
        answer needs no waiting at all (a cache hit, a model that answers instantly).
        """
        if not self.uses_cache:
            await anyio.lowlevel.checkpoint()  # with a cache, looking the answer up is one
        # The messages are encoded once, for both the record and the cache key; the rest of both is
        # the same for every request of this provider, parameters and sample identity.
        plain, canonical = encode_messages(messages)
        setup = self._setup(provider, params, tag.sample)
        req = _Request(tag, provider.name, provider.model, f'{{"messages": {plain}{setup.request_tail}')
        key = cache_key_join(setup.key_head, canonical, setup.key_tail)
        name = setup.name
        # The same request of the same draw already in flight (a resumed game catching up with the
        # original, two runs of one experiment): wait for its answer instead of paying for it twice.
        # Requests of other draws (another seat, condition or replicate) never share an answer.
        in_flight = self._in_flight
        while key in in_flight:
            pending = in_flight[key]
            if pending is None:
                pending = in_flight[key] = anyio.Event()
            await pending.wait()
        in_flight[key] = None  # no await between the check and the claim
        try:
            if self.uses_cache and (hit := await self._cache_get(key)) is not None:
                return self._cached(req, first_attempt, hit.text)
            if (answered := self._answered.get(key)) is not None:
                return self._cached(req, first_attempt, answered)
            if self.recorded and (kept := self.recorded.get((req.provider, req.model, req.request_json))) is not None:
                return self._cached(req, first_attempt, kept)
            if not self.uses_cache:
                return await self._send(provider, limiter, messages, params, first_attempt, req, key, name, facts)
            if (theirs := await self._claim(key)) is not None:  # another process bought it meanwhile
                return self._cached(req, first_attempt, theirs.text)
            cache = self.cache
            try:
                return await self._send(provider, limiter, messages, params, first_attempt, req, key, name, facts)
            except BaseException:
                if cache is not None:
                    with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                        await anyio.to_thread.run_sync(cache.release, key)  # no answer: another process may send
                raise
        finally:
            if (waiting := in_flight.pop(key)) is not None:
                waiting.set()

    async def _claim(self, key: str) -> CachedResponse | None:
        """Claim the sending of ``key`` in the shared cache, so that another process asking the same waits for
        this answer rather than buying it too; or, while another process holds the claim, wait for its answer
        (polling the cache). Returns that process's answer, or None when this one is to send.

        A claim lasts the request's whole budget (limiter waits, attempts and retry waits) plus
        ``CLAIM_MARGIN_S``, and ends with the answer or the sender's failure; the claim of a process that died
        on this machine is taken over at once (see :meth:`ResponseCache.aclaim`), one of another machine
        lapses at the end of its lease."""
        lease = self.retry.max_seconds + self.retry.timeout + CLAIM_MARGIN_S
        delay = 0.01
        for _ in range(MAX_CACHE_RENEWALS + 1):
            cache = await self._current_cache()
            if cache is None:
                return None
            try:
                claim = await cache.aclaim(key, lease)
            except CacheLost as exc:
                await self._renew_cache(cache, exc)
                continue
            except StoreError as exc:
                self._warn_once("claim", f"requests in flight cannot be shared with other processes: {exc}")
                return None
            while claim is Claim.HELD:
                if self._should_stop():
                    raise Stopped("the run was stopped while another process was answering this request")
                await anyio.sleep(delay)
                delay = min(delay * 2, 0.25)
                try:
                    claim = await cache.aclaim(key, lease)
                except StoreError:
                    break  # the cache broke meanwhile: the outer loop renews it, or this process sends
            if claim is Claim.CLAIMED:
                return None
            if claim is Claim.ANSWERED:
                # Stored but unreadable here (a damaged row): send rather than wait for ever.
                return await self._cache_get(key)
        return None

    def _remember(self, key: str, text: str) -> None:
        self._answered[key] = text
        if len(self._answered) > ANSWERED_IN_MEMORY:
            self._answered.popitem(last=False)

    def _cached(self, req: _Request, attempt: int, text: str) -> CallResult:
        self.stats.calls += 1
        self.stats.cached += 1
        record = req.record(attempt)
        record.response_text = text
        record.duration_ms = 0.0
        record.input_tokens = record.output_tokens = 0
        record.cost_usd = 0.0
        record.cached = True
        return CallResult(text=text, records=[record], cached=True)

    async def _send(
        self,
        provider: Provider,
        limiter: EndpointLimiter,
        messages: list[Message],
        params: SamplingParams,
        first_attempt: int,
        req: _Request,
        key: str,
        name: str,
        facts: PromptFacts | None,
    ) -> CallResult:
        records: list[CallRecord] = []
        attempt_no = first_attempt
        estimate = estimate_tokens(messages) + params.max_tokens
        timeout = self.retry.timeout
        # A provider that says it keeps to the timeout itself (``enforces_timeout``: the mock without a
        # latency, which never waits) needs no deadline of ours; the others get a hard one, a second
        # after their own timeout (an SDK's timeout bounds each read, not the whole request).
        deadline = None if getattr(provider, "enforces_timeout", False) else timeout + 1.0

        def may_send() -> None:
            if self._should_stop():
                raise Stopped("the run was stopped before this request was sent", records)
            if not self.budget_left():
                raise BudgetExhausted(f"the cost limit of ${self.max_cost:g} was reached", records)

        async def one_attempt() -> str:
            nonlocal attempt_no
            may_send()
            record = req.record(attempt_no)
            try:
                async with limiter.acquire(estimate) as permit:
                    may_send()  # again: the wait for a slot may have outlasted the budget or the run
                    started = time.perf_counter()
                    attempt_no += 1
                    self.stats.calls += 1
                    try:
                        if deadline is None:
                            completion = await provider.generate(messages, params, timeout, facts)
                        else:
                            with anyio.fail_after(deadline):
                                completion = await provider.generate(messages, params, timeout, facts)
                    except BaseException as exc:
                        if isinstance(exc, anyio.get_cancelled_exc_class()):
                            raise
                        decision = provider.should_retry(exc)
                        if decision.retry_after is not None and decision.retry_after > self.retry.max_seconds:
                            too_long = (
                                f"{decision.reason} (the server asks to wait {decision.retry_after:g} s, "
                                f"more than the {self.retry.max_seconds:g} s allowed for a request)"
                            )
                            decision = replace(decision, retry=False, reason=too_long,
                                               transient=decision.retry)  # fmt: skip
                        if decision.rate_limited:
                            # The endpoint pauses only for a wait this request sits out (see harness.limits).
                            tries, spent = attempt_no - first_attempt, time.monotonic() - started_at
                            retry = self.retry
                            waits = decision.retry and tries < retry.max_attempts and spent < retry.max_seconds
                            limiter.on_rate_limited(decision.retry_after, permit=permit, waits=waits)
                        raise _Attempt(decision) from exc
                    tokens = (completion.input_tokens or 0) + (completion.output_tokens or 0)
                    permit.record_usage(tokens or estimate)
                    limiter.on_success()
            except _Attempt as failed:
                d = failed.decision
                self.stats.errors += 1
                self.stats.rate_limited += d.rate_limited
                record.outcome = (
                    CallOutcome.RATE_LIMITED
                    if d.rate_limited
                    else CallOutcome.TIMEOUT
                    if d.reason == "timeout"
                    else CallOutcome.ERROR
                )
                record.error = d.reason
                record.duration_ms = (time.perf_counter() - started) * 1000
                records.append(record)
                raise
            cost = self._cost(name, completion.input_tokens, completion.output_tokens)
            self.stats.input_tokens += completion.input_tokens or 0
            self.stats.output_tokens += completion.output_tokens or 0
            self.stats.cost_usd += cost or 0.0
            record.response_text = completion.text
            record.duration_ms = (time.perf_counter() - started) * 1000
            record.input_tokens = completion.input_tokens
            record.output_tokens = completion.output_tokens
            record.cost_usd = cost
            records.append(record)
            if not self.uses_cache:
                self._remember(key, completion.text)
            else:
                await self._cache_put(key, CachedResponse(
                    text=completion.text, input_tokens=completion.input_tokens,
                    output_tokens=completion.output_tokens, model=completion.model, provider=provider.name,
                    created_at=datetime.now(UTC), raw=None,
                ), record)  # fmt: skip
            return completion.text

        # The first attempt is made directly: most requests need no other, and tenacity's machinery
        # costs more than the rest of the call path. A failed first attempt is handed to tenacity as
        # its own first attempt (replayed, not sent again), so bounds, waits and records are those of
        # one tenacity loop around every attempt.
        started_at = time.monotonic()
        try:
            return CallResult(text=await one_attempt(), records=records, cached=False)
        except _Attempt as first:
            first_failure: _Attempt | None = first

        backoff = wait_exponential(multiplier=self.retry.backoff_initial, max=self.retry.backoff_max) + wait_random(
            0, self.retry.backoff_initial
        )

        def before(state: RetryCallState) -> None:
            if state.attempt_number == 1:
                state.start_time = started_at  # max_seconds counts from the first attempt's start

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            server_says = exc.decision.retry_after if isinstance(exc, _Attempt) else None
            return max(backoff(state), server_says or 0.0)

        def before_sleep(state: RetryCallState) -> None:
            self.stats.retries += 1

        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(self.retry.max_attempts) | stop_after_delay(self.retry.max_seconds),
                wait=wait,
                retry=retry_if_exception(lambda e: isinstance(e, _Attempt) and e.decision.retry),
                before=before,
                before_sleep=before_sleep,
                sleep=self._sleep,
                reraise=True,
            ):
                with attempt:
                    if first_failure is not None:
                        replayed, first_failure = first_failure, None
                        raise replayed
                    text = await one_attempt()
        except _Attempt as failed:
            d = failed.decision
            why = f"{d.reason} (gave up after {attempt_no - first_attempt} attempts)" if d.retry else d.reason
            raise CallFailed(f"{name}: {why}", records, kind=d.failure) from None
        return CallResult(text=text, records=records, cached=False)

    async def _cache_get(self, key: str) -> CachedResponse | None:
        """A cache that cannot be read is a miss (with one warning), never a failed run; a cache that
        vanished or broke is replaced by a fresh one (see :meth:`_renew_cache`)."""
        for _ in range(MAX_CACHE_RENEWALS + 1):
            cache = await self._current_cache()
            if cache is None:
                return None
            try:
                return await cache.aget(key)
            except CacheLost as exc:
                await self._renew_cache(cache, exc)
            except StoreError as exc:
                if self.cache is cache:
                    self._warn_once("get", f"the response cache could not be read, so answers are requested "
                                           f"again: {exc}")  # fmt: skip
                    return None
        return None

    async def _cache_put(self, key: str, response: CachedResponse, record: CallRecord) -> None:
        """Store a paid answer, with its ledger entry (the calls row it belongs in) in the same transaction.

        A cache that vanished or broke is replaced by a fresh one and the answer written there; a full disk
        stops the run (the answer is kept in memory for this run); any other failure loses nothing recorded
        (the call is still in ``calls``), only the caching."""
        ledger = LedgerEntry(self.ledger_run, ledger_json(record), call_id(record)) if self.ledger_run else None
        for _ in range(MAX_CACHE_RENEWALS + 1):
            cache = await self._current_cache()
            if cache is None:
                break
            try:
                await cache.aput(key, response, ledger)
                return
            except CacheLost as exc:
                await self._renew_cache(cache, exc)
            except DiskFull as exc:
                self._remember(key, response.text)
                self._on_disk_full(str(exc))
                return
            except StoreError as exc:
                if self.cache is cache:
                    self._warn_once("put", "the response cache could not be written; answers are recorded but "
                                           f"not cached: {exc}")  # fmt: skip
                    break
        self._remember(key, response.text)

    async def _current_cache(self) -> ResponseCache | None:
        """The cache in use, once any renewal under way has finished (None: the run goes without one)."""
        if self._renewing.locked():
            async with self._renewing:
                pass
        return self.cache

    def forget_recorded(self, records: list[CallRecord]) -> None:
        """The results file now holds ``records``: drop their ledger entries, so the ledger holds only the
        paid calls not yet written (blocking; the writer calls it from its thread after each batch)."""
        cache = self.cache
        ids = [call_id(r) for r in records if not r.cached and r.response_text is not None]
        if cache is None or self.ledger_run is None or not ids:
            return
        try:
            cache.forget_ledger(self.ledger_run, ids)
        except StoreError as exc:  # harmless: a resume skips entries the results file already holds
            self._warn_once("ledger", f"the cache's ledger could not be trimmed: {exc}")

    async def _renew_cache(self, broken: ResponseCache, exc: CacheLost) -> None:
        """The cache file vanished, was replaced or broke mid-run: say so at once and go on with a fresh
        cache at the same path (a corrupt file is moved aside first). Answers already recorded stay in the
        run's results file, and a resume takes them from there. If no fresh cache can be made, the run goes
        on without one (a full disk stops it)."""
        async with self._renewing:
            if self.cache is not broken:
                return  # another call renewed it already
            self.cache = None  # calls meanwhile go without a cache rather than to the broken one
            try:
                fresh = await anyio.to_thread.run_sync(_fresh_cache, broken.path, exc.vanished)
            except DiskFull as full:
                self._on_disk_full(str(full))
                return
            except StoreError as failed:
                log.warning("%s No fresh cache could be made (%s); the run goes on without one.", exc, failed)
                return
            self.cache = fresh
            self.renewals += 1
        log.warning("%s PDBench goes on with a fresh cache at %s; answers recorded so far are kept in the run's "
                    "results file, and `pdbench resume` takes them from there.", exc, broken.path)  # fmt: skip


def _fresh_cache(path: Path, vanished: bool) -> ResponseCache:
    """A new cache at ``path``: a file still there (corrupt, not vanished) is moved aside first."""
    if not vanished and path.exists():
        set_aside(path)
    return ResponseCache.open_or_renew(path)


def call_id(record: CallRecord) -> str:
    """A call's identity within its run: game, round, seat, purpose and attempt."""
    return f"{record.game_id}:{record.round}:{record.player}:{record.purpose}:{record.attempt}"


def ledger_json(record: CallRecord) -> str:
    """A calls row as the ledger keeps it (see :class:`~harness.cache.LedgerEntry`)."""
    row = {name: getattr(record, name) for name in CallRecord.__slots__}  # type: ignore[attr-defined]
    row["created_at"] = record.created_at.isoformat()
    return json.dumps(row)


def record_from_ledger(text: str) -> CallRecord:
    """The calls row of a ledger entry."""
    row = json.loads(text)
    row["created_at"] = datetime.fromisoformat(row["created_at"])
    row["outcome"] = CallOutcome(row["outcome"])
    return CallRecord(**row)
