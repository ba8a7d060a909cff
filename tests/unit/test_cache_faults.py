"""The shared cache under faults: stale claims of dead processes, a file corrupted in place mid-run,
and the ledger that records paid answers until the results file holds them."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from harness.calls.answers import ledger_json
from harness.calls.cache.cache import ResponseCache
from harness.calls.cache.claims import Claim
from harness.calls.cache.keys import cache_key
from harness.calls.cache.responses import CachedResponse
from harness.calls.path import CallPath, record_from_ledger
from harness.calls.pricing import DEFAULT_PRICES, PriceTable
from harness.calls.record import Answer
from harness.calls.request import Request, take_as_is
from harness.providers.base import Sample, SamplingParams
from tests.unit.test_calls import MESSAGES, TAG, EchoProvider, limiter


def claims_left(path: Path) -> int:
    """Claims in the cache file at ``path``, as another process sees them."""
    with closing(sqlite3.connect(path)) as conn:
        n: int = conn.execute("SELECT count(*) FROM claims").fetchone()[0]
    return n


def dead_pid() -> int:
    """The pid of a process that has exited."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


async def test_a_claim_of_a_process_that_died_is_taken_over_at_once(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as mine, ResponseCache(tmp_path / "c.sqlite") as other:
        assert await other.aclaim("k1", lease_s=600) is Claim.CLAIMED
        assert await mine.aclaim("k1", lease_s=600) is Claim.HELD  # a live owner: wait for its answer
        # The same claim made by a process of this machine that no longer runs (kill -9 mid-request).
        host, _, rest = other.owner.partition(":")
        ghost = f"{host}:{dead_pid()}:{rest.partition(':')[2]}"
        with closing(sqlite3.connect(tmp_path / "c.sqlite", isolation_level=None)) as conn:
            conn.execute("UPDATE claims SET owner = ? WHERE key = 'k1'", (ghost,))
            assert await mine.aclaim("k1", lease_s=600) is Claim.CLAIMED
            # A claim from another machine is never judged by pid: it lapses with its lease.
            conn.execute("UPDATE claims SET owner = ? WHERE key = 'k1'", (f"elsewhere:{dead_pid()}:x",))
            assert await mine.aclaim("k1", lease_s=600) is Claim.HELD


async def test_a_cache_corrupted_in_place_mid_run_is_set_aside_once(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    provider = EchoProvider()
    cache = ResponseCache(path)
    calls = CallPath(cache=cache, prices=PriceTable.load(DEFAULT_PRICES))
    await calls.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1)
    cache.close()
    with open(path, "r+b") as f:  # every page after the header's: the tables are unreadable
        f.seek(4096)
        f.write(os.urandom(path.stat().st_size - 4096))
    cache2 = ResponseCache(path)  # the header still reads: the damage shows only when used
    calls = CallPath(cache=cache2, prices=PriceTable.load(DEFAULT_PRICES))
    other = dataclasses.replace(TAG, sample=Sample("c", 1, "b"))
    result = await calls.request(provider, limiter(), MESSAGES, SamplingParams(), other, 1)
    assert result.text == "C" and provider.calls == 2
    assert len(list(tmp_path.glob("c.sqlite.corrupt-*[0-9]"))) == 1
    assert calls.cache is not None and calls.cache is not cache2
    key = cache_key("echo", "m", "http://localhost:1/v1/", MESSAGES, SamplingParams().as_dict(), other.sample.as_dict())
    assert await calls.cache.aget(key) is not None  # the answer is in the fresh cache
    calls.cache.close()


async def test_the_ledger_holds_a_paid_answer_until_the_results_file_has_it(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        calls = CallPath(cache=cache, prices=PriceTable.load(DEFAULT_PRICES), ledger_run="r#1#t")
        paid = await calls.request(EchoProvider(), limiter(), MESSAGES, SamplingParams(), TAG, 1)
        ((_, text),) = cache.ledger("r#1#t")
        assert record_from_ledger(text) == paid.records[0]
        assert ledger_json(record_from_ledger(text)) == text
        again = await calls.request(EchoProvider(), limiter(), MESSAGES, SamplingParams(), TAG, 1)
        assert again.cached and len(cache.ledger("r#1#t")) == 1  # an answer from the cache is not paid
        calls.forget_recorded(paid.records)  # the results file now holds it
        assert cache.ledger("r#1#t") == []
        assert cache.ledger("r#1#other-run") == []


async def test_the_answer_and_the_claim_are_asked_for_in_one_step(tmp_path: Path) -> None:
    """A stored answer comes back without a claim; a missing one comes back as this process's claim, which
    holds off another process until the answer is stored, and the stored answer is then read by both."""
    with ResponseCache(tmp_path / "c.sqlite") as mine, ResponseCache(tmp_path / "c.sqlite") as other:
        stored = CachedResponse(text="C", input_tokens=3, output_tokens=1, model="m", provider="p",
                                created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), raw=None)  # fmt: skip
        assert await mine.aanswer_or_claim("k1", lease_s=600) == (Claim.CLAIMED, None)
        assert await other.aanswer_or_claim("k1", lease_s=600) == (Claim.HELD, None)
        await mine.aput("k1", stored)
        claim, answer = await other.aanswer_or_claim("k1", lease_s=600)
        assert claim is Claim.ANSWERED and answer is not None
        assert (answer.text, answer.input_tokens, answer.output_tokens) == ("C", 3, 1)
        assert answer.created_at == stored.created_at
        assert claims_left(tmp_path / "c.sqlite") == 0  # answered: no claim left


async def test_an_answer_of_the_resumed_results_file_ends_the_claim_made_for_it(tmp_path: Path) -> None:
    """On resume, an answer the cache lost but the results file holds is taken from the file, and the claim
    made while looking it up in the cache is released at once, so no other process waits for it."""
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        provider = EchoProvider()
        path = CallPath(cache=cache, prices=PriceTable(DEFAULT_PRICES))
        req_json = Request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1, None, take_as_is).request_json
        path.answers.recorded = {(provider.name, provider.model, req_json): Answer("recorded answer")}
        result = await path.request(provider, limiter(), MESSAGES, SamplingParams(), TAG, 1)
        assert (result.text, result.cached, provider.calls) == ("recorded answer", True, 0)
        assert claims_left(tmp_path / "c.sqlite") == 0
