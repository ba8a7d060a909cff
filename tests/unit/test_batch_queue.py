"""Batch mode's queue (:mod:`harness.calls.batch`) through the call path, against an in-memory batch API whose
batches outlive the "process" (a CallPath and its cache object): one batch per gathering of requests, answers
recorded like any call (priced at batch prices, tier ``batch``), the batch stored before it is sent and picked up
again by a new process without being bought twice (also when its id was never stored), results stored once it
ends, an item that failed retried in a later batch, a batch refused as a whole, and a stop while it is out."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.calls.batch import BatchSettings
from harness.calls.cache.cache import ResponseCache
from harness.calls.limits import EndpointLimiter, LimitSettings
from harness.calls.path import CallFailed, CallPath, CallTag, RetrySettings, Stopped
from harness.calls.pricing import Price, PriceTable
from harness.providers.base import (
    CacheHints,
    Completion,
    Endpoint,
    Fault,
    Message,
    RetryDecision,
    Sample,
    SamplingParams,
    local_decision,
)
from harness.providers.batch import BatchState, BatchStatus, CannotTell, ItemOutcome
from harness.providers.tiers import ServiceTier
from harness.states import CallOutcome

FAST = RetrySettings(backoff_initial=0, backoff_max=0)
QUICK = BatchSettings(gather_s=0.02, poll_first_s=0.0, poll_max_s=0.0)
PRICES = PriceTable([("fake/m", Price(input=1.0, output=2.0, batch=Price(input=0.5, output=1.0)))])


class Killed(BaseException):
    """The process dies here (what kill -9 does to the call path, as far as the stored state goes)."""


@dataclass
class Server:
    """The provider's side: batches kept across processes, answered after ``polls`` status calls each."""

    polls: int = 1
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    statuses: int = 0
    fail_items: set[int] = field(default_factory=set)  # positions in the next batch that error
    refuse_next: bool = False
    create_fails: int = 0  # the next creates raise a 500 (the batch is made all the same when made_anyway)
    made_anyway: bool = False
    die_on_read: bool = False  # the "process" is killed as it reads its first result
    status_fails: int = 0  # the next status calls raise a 500 (the batch is still out there)
    cannot_tell: int = 0  # the next finds cannot say whether the batch exists
    limit_next: bool = False  # the next batch fails at the enqueued-token limit (a fault that passes)

    def answer(self, item: dict[str, Any]) -> str:
        return f"answer to {item['prompt']}"


class FakeApi:
    max_items = 1000

    def __init__(self, server: Server) -> None:
        self.server = server

    def item(self, custom_id: str, messages: list[Message], params: SamplingParams, cache: CacheHints | None) -> Any:
        return {"custom_id": custom_id, "prompt": messages[-1]["content"]}

    async def submit(self, items: list[Any], submission: str) -> str:
        s = self.server
        batch_id = f"b{len(s.batches) + 1}"
        failing, s.fail_items = s.fail_items, set()
        refused, s.refuse_next = s.refuse_next, False
        limited, s.limit_next = s.limit_next, False
        s.batches[batch_id] = {
            "limited": limited,
            "items": items,
            "submission": submission,
            "polls": 0,
            "fail": failing,
            "refused": refused,
        }
        if s.create_fails:
            s.create_fails -= 1
            if not s.made_anyway:
                del s.batches[batch_id]
            raise RuntimeError("HTTP 500 on create")
        return batch_id

    async def find(self, submission: str, created_after: float, items: int, known: frozenset[str]) -> str | None:
        if self.server.cannot_tell:
            self.server.cannot_tell -= 1
            raise CannotTell("the list could not be read (HTTP 500)")
        return next((b for b, v in self.server.batches.items() if v["submission"] == submission), None)

    async def status(self, batch_id: str) -> BatchStatus:
        s = self.server
        s.statuses += 1
        if s.status_fails:
            s.status_fails -= 1
            raise RuntimeError("HTTP 500 on retrieve")
        batch = s.batches[batch_id]
        batch["polls"] += 1
        n = len(batch["items"])
        if batch["refused"]:
            return BatchStatus(BatchState.FAILED, 0, n, "failed: line 1 is not valid")
        if batch["limited"]:
            return BatchStatus(BatchState.FAILED, 0, n, "failed: Enqueued token limit reached", Fault.RATE_LIMITED)
        state = BatchState.ENDED if batch["polls"] >= s.polls else BatchState.PENDING
        return BatchStatus(state, n if state is BatchState.ENDED else 0, n, state.value)

    async def results(self, batch_id: str) -> dict[str, str]:
        batch = self.server.batches[batch_id]
        out = {}
        for position, item in enumerate(batch["items"]):
            if position in batch["fail"]:
                out[item["custom_id"]] = json.dumps({"error": "server_error"})
            else:
                out[item["custom_id"]] = json.dumps({"text": self.server.answer(item)})
        return out

    def read(self, raw: str, params: SamplingParams) -> ItemOutcome:
        if self.server.die_on_read:
            raise Killed
        result = json.loads(raw)
        if "error" in result:
            return ItemOutcome(None, RetryDecision(Fault.TRANSIENT, f"the batch item failed ({result['error']})"))
        return ItemOutcome(Completion(text=result["text"], input_tokens=1000, output_tokens=100, model="m"))


class BatchProvider:
    name = "fake"
    model = "m"
    endpoint = Endpoint("fake", "http://127.0.0.1:1/v1")
    service_tier = ServiceTier.BATCH

    def __init__(self, server: Server) -> None:
        self.server = server

    def batch_api(self) -> FakeApi:
        return FakeApi(self.server)

    async def generate(self, *args: Any, **kwargs: Any) -> Completion:
        raise AssertionError("a batch request is never sent on its own")

    def should_retry(self, error: BaseException) -> RetryDecision:
        if isinstance(error, RuntimeError) and "500" in str(error):
            return RetryDecision(Fault.TRANSIENT, str(error))
        return local_decision(error)

    async def aclose(self) -> None:
        pass


def made_but_lost(server: Server, key: str, game: int, submission: str) -> None:
    """A batch the provider made of ``game``'s request, whose id the process that sent it never stored."""
    server.batches["b1"] = {
        "limited": False,
        "items": [{"custom_id": key, "prompt": prompt(game)[0]["content"]}],
        "submission": submission,
        "polls": 0,
        "fail": set(),
        "refused": False,
    }


def key_of(provider: BatchProvider, game: int) -> str:
    from harness.calls.request import Request, take_as_is

    limiter = EndpointLimiter(LimitSettings())
    return Request(provider, limiter, prompt(game), SamplingParams(), tag(game), 1, None, take_as_is).key


def tag(game: int) -> CallTag:
    return CallTag(game_id=game, round=1, player="a", sample=Sample("c", game, "a"))


def prompt(game: int) -> list[Message]:
    return [{"role": "user", "content": f"game {game}: C or D?"}]


async def no_wait(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


def new_path(cache: ResponseCache, stop: list[bool] | None = None) -> CallPath:
    flag = stop if stop is not None else [False]
    return CallPath(cache=cache, prices=PRICES, retry=FAST, batch=QUICK, should_stop=lambda: flag[0], sleep=no_wait)


async def ask_all(path: CallPath, provider: BatchProvider, games: range) -> dict[int, Any]:
    limiter = EndpointLimiter(LimitSettings())
    results: dict[int, Any] = {}

    async def one(game: int) -> None:
        results[game] = await path.request(provider, limiter, prompt(game), SamplingParams(), tag(game), 1)

    async with anyio.create_task_group() as tg:
        for game in games:
            tg.start_soon(one, game)
    return results


async def test_requests_gathered_together_go_as_one_batch_recorded_at_batch_prices(tmp_path: Path) -> None:
    server = Server(polls=2)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        path = new_path(cache)
        results = await ask_all(path, BatchProvider(server), range(3))
        assert len(server.batches) == 1 and len(server.batches["b1"]["items"]) == 3
        for game, result in results.items():
            assert result.text == f"answer to game {game}: C or D?"
            (record,) = result.records
            assert (record.service_tier, record.outcome, record.cached) == ("batch", CallOutcome.OK, False)
            # 1,000 input and 100 output tokens at the batch prices, $0.50 and $1.00 per million
            assert record.cost_usd == pytest.approx((1000 * 0.5 + 100 * 1.0) / 1e6)
        assert path.batches is not None
        counters = path.batches.counters
        assert (counters.submitted, counters.ended, counters.in_progress, counters.items) == (1, 1, 0, 3)
        assert cache.batch_item(key_of(BatchProvider(server), 0)) is None  # collected: nothing left stored
        again = await ask_all(path, BatchProvider(server), range(3))  # the same draws: from the cache, free
        assert all(r.cached for r in again.values()) and len(server.batches) == 1


async def test_a_new_process_picks_up_the_batch_that_was_out_and_never_buys_it_again(tmp_path: Path) -> None:
    server = Server(polls=10**6)  # never ends while the first process watches
    stop = [False]
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        path = new_path(cache, stop)
        with anyio.move_on_after(0.3):
            await ask_all(path, BatchProvider(server), range(4))
    assert len(server.batches) == 1  # submitted once, then the "process" died with it out
    server.polls = server.batches["b1"]["polls"] + 1  # it ends at the next poll
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        results = await ask_all(new_path(cache), BatchProvider(server), range(4))
    assert len(server.batches) == 1
    assert [results[g].text for g in range(4)] == [f"answer to game {g}: C or D?" for g in range(4)]
    assert all(r.records[0].service_tier == "batch" and not r.cached for r in results.values())


async def test_results_stored_when_the_batch_ended_are_read_without_asking_the_provider(tmp_path: Path) -> None:
    server = Server(polls=1, die_on_read=True)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        with pytest.raises(BaseExceptionGroup):  # the simulated kill, once the results are stored
            await ask_all(new_path(cache), BatchProvider(server), range(2))
        assert cache.batch_item(key_of(BatchProvider(server), 0)) is not None
    server.die_on_read = False
    statuses = server.statuses
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        results = await ask_all(new_path(cache), BatchProvider(server), range(2))
        assert cache.batch_item(key_of(BatchProvider(server), 1)) is None
    assert [results[g].text for g in range(2)] == [f"answer to game {g}: C or D?" for g in range(2)]
    assert server.statuses == statuses and len(server.batches) == 1  # not asked, not bought again
    assert all(not r.cached and r.records[0].service_tier == "batch" for r in results.values())


async def test_a_submission_whose_id_was_never_stored_is_found_at_the_provider(tmp_path: Path) -> None:
    """A process stored a submission, sent it, and died before storing the id."""
    from harness.calls.batch import endpoint_name

    server = Server(polls=1)
    provider = BatchProvider(server)
    key = key_of(provider, 7)
    made_but_lost(server, key, 7, "lost-submission")
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        cache.add_batch("lost-submission", endpoint_name(provider), [(key, key)])
        results = await ask_all(new_path(cache), provider, range(7, 8))
    assert results[7].text == "answer to game 7: C or D?" and len(results[7].records) == 1
    assert len(server.batches) == 1  # found, not submitted again


async def test_a_submission_never_created_is_forgotten_and_its_request_joins_a_new_batch(tmp_path: Path) -> None:
    from harness.calls.batch import endpoint_name

    server = Server(polls=1)
    provider = BatchProvider(server)
    key = key_of(provider, 3)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        cache.add_batch("never-sent", endpoint_name(provider), [(key, key)])
        results = await ask_all(new_path(cache), provider, range(3, 4))
    assert results[3].text == "answer to game 3: C or D?"
    assert len(server.batches) == 1
    assert [r.outcome for r in results[3].records] == [CallOutcome.OK]  # it joined a new batch at once


async def test_an_item_that_failed_is_asked_again_in_a_later_batch(tmp_path: Path) -> None:
    server = Server(polls=1, fail_items={1})
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        results = await ask_all(new_path(cache), BatchProvider(server), range(3))
    assert len(server.batches) == 2 and len(server.batches["b2"]["items"]) == 1
    failed = [r for r in results.values() if len(r.records) == 2]
    assert len(failed) == 1
    first, second = failed[0].records
    assert first.outcome is CallOutcome.ERROR and "server_error" in (first.error or "")
    assert (first.attempt, second.attempt, second.outcome) == (1, 2, CallOutcome.OK)


async def test_a_batch_refused_as_a_whole_fails_its_requests_without_retrying(tmp_path: Path) -> None:
    server = Server(polls=1, refuse_next=True)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        path = new_path(cache)
        with pytest.raises(CallFailed, match="refused the batch"):
            await path.request(
                BatchProvider(server), EndpointLimiter(LimitSettings()), prompt(0), SamplingParams(), tag(0), 1
            )
        assert path.batches is not None and path.batches.counters.failed == 1
    assert len(server.batches) == 1


async def test_a_create_whose_answer_was_lost_is_found_rather_than_sent_again(tmp_path: Path) -> None:
    server = Server(polls=1, create_fails=1, made_anyway=True)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        results = await ask_all(new_path(cache), BatchProvider(server), range(2))
    assert len(server.batches) == 1
    assert all(len(r.records) == 1 for r in results.values())


async def test_a_create_that_failed_is_retried_in_a_new_batch(tmp_path: Path) -> None:
    server = Server(polls=1, create_fails=1, made_anyway=False)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        results = await ask_all(new_path(cache), BatchProvider(server), range(2))
    assert len(server.batches) == 1
    assert all([r.outcome for r in res.records] == [CallOutcome.ERROR, CallOutcome.OK] for res in results.values())


async def test_a_stop_while_the_batch_is_out_leaves_it_stored_for_a_resume(tmp_path: Path) -> None:
    server = Server(polls=10**6)
    stop = [False]
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        path = new_path(cache, stop)

        async def stop_soon() -> None:
            await anyio.sleep(0.2)
            stop[0] = True

        async with anyio.create_task_group() as tg:
            tg.start_soon(stop_soon)
            with pytest.raises(Stopped, match="pdbench resume"):
                await path.request(
                    BatchProvider(server), EndpointLimiter(LimitSettings()), prompt(0), SamplingParams(), tag(0), 1
                )
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        server.polls = 0
        results = await ask_all(new_path(cache), BatchProvider(server), range(1))
    assert results[0].text == "answer to game 0: C or D?" and len(server.batches) == 1


def test_batch_waits_the_whole_window_whatever_the_synchronous_timeout() -> None:
    settings = RetrySettings.model_validate({"timeout": 30.0}).for_tier(ServiceTier.BATCH)
    assert settings.timeout == 25 * 3600 and settings.max_seconds == 50 * 3600


async def test_a_poll_that_fails_is_asked_again_and_the_batch_is_never_bought_twice(tmp_path: Path) -> None:
    server = Server(polls=1, status_fails=3)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        results = await ask_all(new_path(cache), BatchProvider(server), range(2))
    assert len(server.batches) == 1 and server.statuses == 4
    assert all(len(r.records) == 1 and r.records[0].outcome is CallOutcome.OK for r in results.values())


def test_a_cache_of_schema_2_opens_with_its_answers_and_gains_the_batch_tables(tmp_path: Path) -> None:
    import sqlite3

    from harness.calls.cache import file

    path = tmp_path / "cache.sqlite"
    conn = sqlite3.connect(path)
    v2 = file.SCHEMA.split("-- Provider batches")[0]  # the schema as version 2 wrote it
    conn.executescript(v2 + "PRAGMA user_version = 2;")
    conn.execute(
        "INSERT INTO responses (key, provider, model, text, input_tokens, output_tokens, raw_json, created_us) "
        "VALUES ('k', 'openai', 'gpt-4o-mini', 'C', 10, 1, NULL, 1)"
    )
    conn.commit()
    conn.close()
    with ResponseCache(path) as cache:
        assert cache.stats().entries == 1
        assert cache.batch_item("k") is None
        cache.add_batch("s", "openai - - m", [("k2", "k2")])
        found = cache.batch_item("k2")
        assert found is not None and (found.submission, found.batch_id, found.result) == ("s", None, None)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == file.SCHEMA_VERSION == 3


async def test_a_create_whose_fate_the_provider_cannot_tell_is_kept_and_found_later(tmp_path: Path) -> None:
    """The create's answer was lost and the list could not be read either: the submission stays stored, the
    request fails an attempt, and its retry finds the batch made by the first create: bought once."""
    server = Server(polls=1, create_fails=1, made_anyway=True, cannot_tell=1)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        results = await ask_all(new_path(cache), BatchProvider(server), range(2))
    assert len(server.batches) == 1
    for result in results.values():
        assert [r.outcome for r in result.records] == [CallOutcome.ERROR, CallOutcome.OK]
        assert "cannot" in (result.records[0].error or "").lower() or "could not" in (result.records[0].error or "")


async def test_a_resume_that_cannot_tell_asks_again_and_never_sends_the_batch_twice(tmp_path: Path) -> None:
    from harness.calls.batch import endpoint_name

    server = Server(polls=1, cannot_tell=1)
    provider = BatchProvider(server)
    key = key_of(provider, 5)
    made_but_lost(server, key, 5, "lost")
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        cache.add_batch("lost", endpoint_name(provider), [(key, key)])
        results = await ask_all(new_path(cache), provider, range(5, 6))
    assert len(server.batches) == 1
    assert [r.outcome for r in results[5].records] == [CallOutcome.ERROR, CallOutcome.OK]


async def test_a_store_that_fails_after_the_create_fails_the_batch_s_requests_and_they_find_it(tmp_path: Path) -> None:
    server = Server(polls=1)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        real = cache.batch_sent
        calls = [0]

        def fails_once(submission: str, batch_id: str) -> None:
            calls[0] += 1
            if calls[0] == 1:
                raise OSError("database is locked")
            real(submission, batch_id)

        cache.batch_sent = fails_once  # type: ignore[method-assign]
        results = await ask_all(new_path(cache), BatchProvider(server), range(3))
    assert [len(b["items"]) for b in server.batches.values()] == [3]  # no empty batch, none sent twice
    assert all([r.outcome for r in res.records] == [CallOutcome.ERROR, CallOutcome.OK] for res in results.values())


async def test_a_batch_refused_at_the_enqueued_token_limit_is_sent_again(tmp_path: Path) -> None:
    server = Server(polls=1, limit_next=True)
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        results = await ask_all(new_path(cache), BatchProvider(server), range(2))
    assert len(server.batches) == 2  # the refused one (nothing in it answered), then the same requests again
    for result in results.values():
        assert [r.outcome for r in result.records] == [CallOutcome.RATE_LIMITED, CallOutcome.OK]


def test_clearing_the_cache_keeps_the_batches_out(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        cache.add_batch("s", "e", [("k1", "k1"), ("k2", "k2")])
        cache.batch_sent("s", "b1")
        cache.clear()
        assert cache.batches_out() == 1 and cache.batch_ids() == frozenset({"b1"})
