"""The call path: what is recorded and cached is exactly what the plain encoders write, every attempt
runs in one retry loop with its bounds and waits, an attempt's outcome follows from the provider's
fault or the caller's reading, and a provider's own deadline is trusted."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import astuple
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.calls.cache.cache import ResponseCache
from harness.calls.cache.keys import cache_key
from harness.calls.limits import EndpointLimiter, LimitSettings
from harness.calls.path import CallFailed, CallPath, CallTag, Reading, RetrySettings, Stopped, record_from_ledger
from harness.calls.pricing import DEFAULT_PRICES, Price, PriceTable
from harness.calls.record import CallRecord
from harness.calls.retry import LEND_SLOT
from harness.providers.base import (
    Completion,
    Endpoint,
    FailureKind,
    Fault,
    Message,
    RetryDecision,
    Sample,
    SamplingParams,
)
from harness.providers.tiers import ServiceTier
from harness.store.live import _call_row

TAG = CallTag(game_id=3, round=7, player="a", sample=Sample(condition="vs_TFT", replicate=2, seat="a"))
MESSAGES: list[Message] = [
    {"role": "system", "content": "You play.\nReply C or D."},
    {"role": "user", "content": 'Round 7: "you" chose C\t(3 points).'},
]

_CHARS = 'abc C D "\\\n\t\r\x00\x1f\x7f é€😀 \u2028{}[]:,'


def random_messages(rng: random.Random) -> list[Any]:
    """Messages of every shape the encoders must agree on, the usual one most often."""
    messages: list[Any] = []
    for _ in range(rng.randint(0, 4)):
        content = "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 40)))
        role = rng.choice(["system", "user", "assistant", "rôle"])
        shape = rng.random()
        if shape < 0.8:
            messages.append({"role": role, "content": content})
        elif shape < 0.9:
            messages.append({"content": content, "role": role})  # the other key order
        else:
            messages.append({"role": role, "content": content, "name": "n"})
    return messages


class EchoProvider:
    """Answers at once, counts what it was asked, and fails on demand."""

    name = "echo"
    unsupported_params = frozenset({"top_p"})
    service_tier = ServiceTier.STANDARD

    def __init__(self, failures: list[BaseException] | None = None, model: str = "m") -> None:
        self.model = model
        self.endpoint = Endpoint(provider="echo", base_url="http://localhost:1/v1/", key_id=None)
        self.failures = list(failures or [])
        self.calls = 0

    async def generate(
        self,
        messages: list[Message],
        params: SamplingParams,
        timeout: float,
        facts: object = None,
        *,
        cache: object = None,
    ) -> Completion:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return Completion(text="C", input_tokens=10, output_tokens=1, model=self.model)

    def should_retry(self, error: BaseException) -> RetryDecision:
        if isinstance(error, ConnectionError):
            return RetryDecision(Fault.TRANSIENT, "connection lost", retry_after=0.5)
        if isinstance(error, TimeoutError):
            return RetryDecision(Fault.TIMEOUT, "timeout")
        return RetryDecision(Fault.REJECTED, f"{type(error).__name__}: {error}")

    async def aclose(self) -> None:
        return None


def limiter() -> EndpointLimiter:
    return EndpointLimiter(LimitSettings(concurrency=4))


def path(**kwargs: Any) -> CallPath:
    return CallPath(cache=None, prices=PriceTable.load(DEFAULT_PRICES), **kwargs)


async def test_the_record_and_the_cache_key_are_those_of_the_plain_encoders(tmp_path: Path) -> None:
    provider = EchoProvider()
    params = SamplingParams(temperature=0.5, max_tokens=20, top_p=0.9, seed=4)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        calls = CallPath(cache=cache, prices=PriceTable.load(DEFAULT_PRICES))
        result = await calls.request(provider, limiter(), MESSAGES, params, TAG, 1)
        (record,) = result.records
        sent = {k: v for k, v in params.as_dict().items() if k != "top_p"}
        assert record.request_json == json.dumps(
            {"messages": MESSAGES, "params": sent, "sample": TAG.sample.as_dict()}, ensure_ascii=False
        )
        key = cache_key("echo", "m", "http://localhost:1/v1/", MESSAGES, params.as_dict(), TAG.sample.as_dict())
        stored = await cache.aget(key)
        assert stored is not None and stored.text == "C"
        assert (record.game_id, record.round, record.player, record.attempt) == (3, 7, "a", 1)
        assert (record.outcome, record.cached, record.input_tokens, record.output_tokens) == ("ok", False, 10, 1)
        again = await calls.request(provider, limiter(), MESSAGES, params, TAG, 1)
        assert again.cached and provider.calls == 1
        assert again.records[0].request_json == record.request_json


async def test_messages_that_are_not_json_are_refused_before_anything_is_sent() -> None:
    provider = EchoProvider()
    calls = path()
    with pytest.raises(TypeError):
        await calls.request(provider, limiter(), [{"role": "user", "content": object()}], SamplingParams(), TAG, 1)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="plain JSON"):
        await calls.request(provider, limiter(), [{"role": "user", "content": float("nan")}], SamplingParams(), TAG, 1)  # type: ignore[dict-item]
    assert provider.calls == 0


def read_c(text: str) -> Reading[str | None]:
    """A reader that takes only the answer "C" as a move."""
    return Reading(text, action="C") if text == "C" else Reading(None, unreadable=f"no move in {text!r}")


def read_nothing(text: str) -> Reading[None]:
    return Reading(None, unreadable="nothing could be read")


async def test_an_answer_is_recorded_as_the_caller_read_it(tmp_path: Path) -> None:
    """The outcome, the move and the error of an answered attempt come from the caller's reading, paid,
    cached or from the ledger alike; an unreadable answer counts as a parse failure."""
    provider = EchoProvider()
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        calls = CallPath(cache=cache, prices=PriceTable.load(DEFAULT_PRICES), ledger_run="r#1#t")
        paid = await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1, read=read_nothing)
        (record,) = paid.records
        assert paid.reading.value is None
        assert (record.outcome, record.action, record.error, record.response_text) == (
            "unparseable",
            None,
            "nothing could be read",
            "C",
        )
        ((_, ledger),) = cache.ledger("r#1#t")
        assert record_from_ledger(ledger) == record  # a resume restores the row as it was read
        again = await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 2, read=read_c)
        (cached,) = again.records
        assert again.cached and again.reading.value == "C"
        assert (cached.outcome, cached.action, cached.error, cached.attempt) == ("ok", "C", None, 2)
        assert calls.stats.parse_failures == 1 and provider.calls == 1


async def test_a_failed_attempt_takes_its_outcome_from_the_fault_not_the_reader() -> None:
    async def sleep(seconds: float) -> None:
        return None

    provider = Limited([RateLimited(0.0), TimeoutError(), ConnectionError()])
    calls = path(retry=RetrySettings(backoff_initial=0.0, backoff_max=0.0), sleep=sleep)
    result = await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1, read=read_c)
    assert [(r.outcome, r.action) for r in result.records] == [
        ("rate_limited", None),
        ("timeout", None),
        ("error", None),
        ("ok", "C"),
    ]
    assert result.records[0].error == "HTTP 429" and calls.stats.parse_failures == 0


async def test_equal_parameters_with_different_json_are_different_requests() -> None:
    """SamplingParams(temperature=1) == SamplingParams(temperature=1.0), but 1 and 1.0 are different
    JSON, so different requests (as they always were): nothing is shared between them by equality."""
    provider = EchoProvider()
    calls = path()
    one = await calls.request(provider, limiter(), MESSAGES, SamplingParams(temperature=1), TAG, 1)
    other = await calls.request(provider, limiter(), MESSAGES, SamplingParams(temperature=1.0), TAG, 1)
    assert '"temperature": 1,' in one.records[0].request_json
    assert '"temperature": 1.0,' in other.records[0].request_json
    assert not other.cached and provider.calls == 2


async def test_the_cost_is_the_price_tables() -> None:
    prices = PriceTable([("echo/*", Price(input=2.5, output=10.0))])
    calls = CallPath(cache=None, prices=prices)
    result = await calls.request(EchoProvider(), limiter(), MESSAGES, SamplingParams(), TAG, 1)
    assert result.records[0].cost_usd == prices.cost("echo/m", 10, 1)
    assert calls.stats.cost_usd == prices.cost("echo/m", 10, 1)


async def test_identical_requests_in_flight_are_sent_once() -> None:
    provider = EchoProvider()
    calls = path()
    results = []

    async def ask() -> None:
        results.append(await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1))

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(ask)
    assert provider.calls == 1
    assert sorted(r.cached for r in results) == [False, True, True, True, True]


async def test_a_request_is_a_checkpoint_even_when_nothing_waits() -> None:
    """A zero-latency model and no cache: other tasks still run between requests."""
    provider = EchoProvider()
    calls = path()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        for i in range(20):
            await calls.request(provider, limiter(), [{"role": "user", "content": str(i)}], SamplingParams(), TAG, 1)
        tg.cancel_scope.cancel()
    assert ticks >= 19


# ---- retries: the first attempt a plain await, then one loop with its bounds and waits -------


async def test_a_retryable_failure_is_retried_with_its_waits_and_records() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    provider = EchoProvider([ConnectionError("reset"), TimeoutError()])
    calls = path(retry=RetrySettings(backoff_initial=0.0, backoff_max=0.0), sleep=sleep)
    result = await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 4)
    assert [r.attempt for r in result.records] == [4, 5, 6]
    assert [r.outcome for r in result.records] == ["error", "timeout", "ok"]
    assert [r.error for r in result.records] == ["connection lost", "timeout", None]
    assert waits == [0.5, 0.0]  # never shorter than the server's Retry-After
    assert (calls.stats.calls, calls.stats.retries) == (3, 2)
    assert len({r.created_at for r in result.records}) == 1  # every attempt carries the request's time


async def test_the_backoff_doubles_from_the_first_failure_up_to_its_cap_plus_a_jitter_of_up_to_the_first() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    provider = EchoProvider([TimeoutError()] * 4)  # a timeout names no Retry-After
    calls = path(retry=RetrySettings(backoff_initial=1.0, backoff_max=3.0), sleep=sleep)
    await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1)
    assert len(waits) == 4
    for wait, backoff in zip(waits, (1.0, 2.0, 3.0, 3.0), strict=True):  # 1, 2, 4 -> 3 (the cap), 8 -> 3
        assert backoff <= wait <= backoff + 1.0


async def test_retries_stop_after_max_attempts_counting_the_first() -> None:
    async def sleep(seconds: float) -> None:
        return None

    provider = EchoProvider([ConnectionError()] * 10)
    calls = path(retry=RetrySettings(max_attempts=3), sleep=sleep)
    with pytest.raises(CallFailed) as failed:
        await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1)
    assert provider.calls == 3
    assert failed.value.reason == "echo/m: connection lost (gave up after 3 attempts)"
    assert [r.attempt for r in failed.value.records] == [1, 2, 3]


async def test_max_seconds_counts_from_the_first_attempt() -> None:
    """A first attempt that took longer than max_seconds is not retried: the loop's clock starts before it."""

    class Slow(EchoProvider):
        async def generate(
            self,
            messages: list[Message],
            params: SamplingParams,
            timeout: float,
            facts: object = None,
            *,
            cache: object = None,
        ) -> Completion:
            await anyio.sleep(0.15)
            return await super().generate(messages, params, timeout, facts)

    async def sleep(seconds: float) -> None:
        return None

    provider = Slow([TimeoutError()] * 5)
    calls = path(retry=RetrySettings(max_seconds=0.1, backoff_initial=0.0), sleep=sleep)
    with pytest.raises(CallFailed, match="gave up after 1 attempt\\)"):
        await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1)
    assert provider.calls == 1


class RateLimited(Exception):
    """A 429 whose Retry-After is ``args[0]`` seconds."""


class Limited(EchoProvider):
    """EchoProvider whose RateLimited failures are 429s with the Retry-After they carry."""

    def should_retry(self, error: BaseException) -> RetryDecision:
        if isinstance(error, RateLimited):
            wait = error.args[0]
            return RetryDecision(Fault.RATE_LIMITED, "HTTP 429", retry_after=wait)
        return super().should_retry(error)


async def test_a_429_is_retried_after_its_retry_after_and_a_jitter_with_the_slot_lent_and_nothing_paused() -> None:
    now = [0.0]
    lent: list[float] = []

    async def sleep(seconds: float) -> None:
        now[0] += seconds  # the limiter's clock; nothing really waits

    @contextmanager
    def lend() -> Iterator[None]:
        lent.append(now[0])
        yield

    def fresh() -> EndpointLimiter:
        return EndpointLimiter(LimitSettings(concurrency=4), clock=lambda: now[0])

    # Two attempts allowed: the first 429 is sat out (5 s and up to a tenth more, the game's slot lent
    # meanwhile); the second, on the last attempt, is not: its request gives up. A stray 429 pauses nothing.
    provider = Limited([RateLimited(5.0), RateLimited(7.0)])
    calls = path(retry=RetrySettings(max_attempts=2, backoff_initial=0.0, backoff_max=0.0), sleep=sleep)
    limiter = fresh()
    token = LEND_SLOT.set(lend)
    try:
        with pytest.raises(CallFailed, match="gave up after 2 attempts"):
            await calls.request(provider, limiter, MESSAGES, SamplingParams(), TAG, 1)
    finally:
        LEND_SLOT.reset(token)
    assert 5.0 <= now[0] <= 5.5 and lent == [0.0]
    assert limiter.paused_until is None and limiter.rate_limited_count == 2 and limiter.learned_rpm is None

    # A long Retry-After is sat out exactly, lengthened by at most a second.
    provider = Limited([RateLimited(30.0)])
    calls = path(sleep=sleep)
    start = now[0]
    await calls.request(provider, fresh(), MESSAGES, SamplingParams(), TAG, 1)
    assert 30.0 <= now[0] - start <= 31.0

    # A wait beyond the retry budget is never sat out: no retry, and no pause.
    provider = Limited([RateLimited(99999999.0)])
    calls = path(retry=RetrySettings(max_seconds=600), sleep=sleep)
    limiter = fresh()
    with pytest.raises(CallFailed, match="more than the 600 s allowed"):
        await calls.request(provider, limiter, MESSAGES, SamplingParams(), TAG, 1)
    assert provider.calls == 1 and limiter.paused_until is None and limiter.rate_limited_count == 1
    assert calls.stats.retries == 0 and calls.stats.rate_limited == 1


async def test_a_429_asking_for_no_wait_is_retried_after_the_backoff_not_at_once() -> None:
    now = [0.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds

    provider = Limited([RateLimited(0.0)])
    calls = path(retry=RetrySettings(backoff_initial=0.5, backoff_max=10.0), sleep=sleep)
    await calls.request(provider, EndpointLimiter(LimitSettings(), clock=lambda: now[0]), MESSAGES, SamplingParams(),
                        TAG, 1)  # fmt: skip
    assert now[0] >= 0.5


async def test_a_request_waiting_in_a_closed_limiter_is_stopped_unsent() -> None:
    provider = EchoProvider()
    limiter = EndpointLimiter(LimitSettings(concurrency=1))
    limiter.close()
    with pytest.raises(Stopped):
        await path().request(provider, limiter, MESSAGES, SamplingParams(), TAG, 1)
    assert provider.calls == 0


async def test_a_failure_that_is_not_retryable_fails_at_once() -> None:
    provider = EchoProvider([ValueError("bad request")])
    calls = path()
    with pytest.raises(CallFailed) as failed:
        await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1)
    assert failed.value.reason == "echo/m: ValueError: bad request"
    assert [r.outcome for r in failed.value.records] == ["error"]
    assert calls.stats.retries == 0


async def test_a_provider_without_its_own_deadline_gets_one() -> None:
    class Hangs(EchoProvider):
        async def generate(
            self,
            messages: list[Message],
            params: SamplingParams,
            timeout: float,
            facts: object = None,
            *,
            cache: object = None,
        ) -> Completion:
            await anyio.sleep(30)
            raise AssertionError("not reached")

    provider = Hangs()
    calls = path(retry=RetrySettings(timeout=0.05, max_attempts=1))
    with anyio.fail_after(5), pytest.raises(CallFailed, match="timeout"):
        await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1)


def test_a_calls_row_is_the_records_fields_in_order() -> None:
    record = CallRecord(1, 2, "b", 3, "mock", "mock/x", "{}", "C", "C", "ok", None, 1.5, 4, 1, None, True)
    assert _call_row(record) == astuple(record)


async def test_without_a_cache_answers_are_remembered_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """--no-cache: an identical request is answered from memory, and memory stays bounded."""
    import harness.calls.answers as answers_module

    monkeypatch.setattr(answers_module, "ANSWERED_IN_MEMORY", 3)
    provider = EchoProvider()
    calls = path()
    params = SamplingParams(temperature=0.0)
    first = await calls.request(provider, limiter(), MESSAGES, params, TAG, 1)
    again = await calls.request(provider, limiter(), MESSAGES, params, TAG, 1)
    assert not first.cached and again.cached and provider.calls == 1
    for i in range(5):  # five other requests push the first one out
        other = [{"role": "user", "content": f"round {i}"}]
        await calls.request(provider, limiter(), other, params, TAG, 1)
    paid_again = await calls.request(provider, limiter(), MESSAGES, params, TAG, 1)
    assert not paid_again.cached and provider.calls == 7


class Overloaded(EchoProvider):
    """A server that is down and asks for a wait longer than any request's budget."""

    def should_retry(self, error: BaseException) -> RetryDecision:
        return RetryDecision(Fault.TRANSIENT, "HTTP 503: down", retry_after=99_999_999)


class Refused(EchoProvider):
    def should_retry(self, error: BaseException) -> RetryDecision:
        if str(error) == "401":
            return RetryDecision(Fault.AUTHENTICATION, "HTTP 401: bad key")
        return RetryDecision(Fault.REJECTED, "HTTP 400: bad request")


@pytest.mark.parametrize(
    ("provider", "kind"),
    [
        (Overloaded([ConnectionError("down")]), FailureKind.RETRYABLE),  # not retried, yet it may pass
        (EchoProvider([ConnectionError("x")] * 6), FailureKind.RETRYABLE),  # retries ran out
        (Refused([RuntimeError("401")]), FailureKind.AUTHENTICATION),
        (Refused([RuntimeError("400")]), FailureKind.PERMANENT),
    ],
)
async def test_a_failed_request_says_what_kind_of_failure_it_was(provider: EchoProvider, kind: FailureKind) -> None:
    calls = path(retry=RetrySettings(max_attempts=6, backoff_initial=0, backoff_max=0), sleep=_no_sleep)
    with pytest.raises(CallFailed) as failed:
        await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1)
    assert failed.value.kind is kind


async def _no_sleep(seconds: float) -> None:
    return None


class CachingProvider(EchoProvider):
    """Answers as Anthropic's provider reports a prompt-cache read and write: all of them among the input."""

    async def generate(
        self,
        messages: list[Message],
        params: SamplingParams,
        timeout: float,
        facts: object = None,
        *,
        cache: object = None,
    ) -> Completion:
        self.calls += 1
        return Completion(
            text="C", input_tokens=4200, output_tokens=50, model=self.model, cached_input_tokens=3000,
            cache_write_tokens=1000,
        )  # fmt: skip


async def test_prompt_cache_tokens_are_recorded_priced_and_counted_and_a_response_cache_hit_has_none(
    tmp_path: Path,
) -> None:
    # echo/*: input 3, cached 0.30, write 3.75, output 15 $/Mtok (claude-sonnet-4's):
    # 200 * 3 + 3000 * 0.3 + 1000 * 3.75 + 50 * 15 = 6000 micro-dollars; uncached 4200 * 3 + 750 = 13350.
    prices = PriceTable([("echo/*", Price(input=3, output=15, cached_input=0.3, cache_write=3.75))])
    layout_tag = CallTag(game_id=1, round=1, player="a", sample=TAG.sample, prompt_layout="v2")
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        calls = CallPath(cache=cache, prices=prices, ledger_run="r#1#t")
        paid = (await calls.request(CachingProvider(), limiter(), MESSAGES, SamplingParams(), layout_tag, 1)).records
        hit = (await calls.request(CachingProvider(), limiter(), MESSAGES, SamplingParams(), layout_tag, 1)).records
        ledger = [record_from_ledger(text) for _key, text in cache.ledger("r#1#t")]
    record = paid[0]
    assert (record.input_tokens, record.cached_input_tokens, record.cache_write_tokens) == (4200, 3000, 1000)
    assert record.cost_usd == pytest.approx(6000e-6) and record.prompt_layout == "v2"
    assert ledger == [record]  # the ledger restores the new fields too
    assert calls.stats.cache_reported and calls.stats.cached_input_tokens == 3000
    assert calls.stats.cache_saved_usd == pytest.approx(7350e-6)
    # A response-cache hit was not sent: free, and no read of the provider's cache.
    assert hit[0].cached and hit[0].cost_usd == 0.0 and hit[0].input_tokens == 0
    assert hit[0].cached_input_tokens is None and hit[0].cache_write_tokens is None
    assert calls.stats.cached_input_tokens == 3000 and calls.stats.cache_saved_usd == pytest.approx(7350e-6)


async def test_a_provider_silent_on_its_cache_leaves_the_counters_without_cache_figures() -> None:
    calls = path()
    record = (await calls.request(EchoProvider(), limiter(), MESSAGES, SamplingParams(), TAG, 1)).records[0]
    assert record.cached_input_tokens is None and record.cache_write_tokens is None and record.prompt_layout is None
    assert not calls.stats.cache_reported and calls.stats.cached_input_tokens == 0
