"""Two faults of a real endpoint, through ``pdbench eval`` against the loopback server: a 429 whose
Retry-After is longer than anyone will wait (issue 9, point 7), and a 200 whose body is not the API's
JSON (point 8)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import harness.cli
import harness.cli.play
from harness.cli.progress import live_display
from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, serve_to_the_cli

OPPONENTS = "TFT,ALLD,GRIM,ALLC"  # four games, played side by side at --concurrency 4


@pytest.fixture
def server(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    llm_server.configure(latency_ms=20)
    return serve_to_the_cli(monkeypatch, llm_server, timeout_s=2)


def evaluate(
    results: Path, run_id: str, model: str = "openai/test-model", rounds: int = 6, exit_code: int = 0
) -> tuple[float, str]:
    """Run the four games; the seconds it took and what it printed on stderr (the live display)."""
    started = time.monotonic()
    code, _, err = pdbench("eval", "--model", model, "--opponents", OPPONENTS, "--rounds", str(rounds), "--replicates",
                           "1", "--concurrency", "4", "--results", results, "--run-id", run_id)  # fmt: skip
    assert code == exit_code, err
    return time.monotonic() - started, err


def games(results: Path) -> list[dict]:
    return sql_json(results, "select game_id, status, error, failure from games order by game_id")


def attempts(results: Path) -> list[dict]:
    query = "select game_id, round, attempt, outcome, error from calls order by game_id, round, attempt"
    return sql_json(results, query)


# ---- point 7: pauses on 429 --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_retry_after_longer_than_the_retry_budget_pauses_no_other_game(
    server: FakeLLMServer, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before the fix, the endpoint paused for min(Retry-After, retry budget) = 20 s here (600 s by
    # default), although the rejected request gave up at once.
    monkeypatch.setenv("PDBENCH_RETRY_SECONDS", "20")
    server.configure(retry_after_s=99999999)
    server.fail_next("openai", [429])

    # The failed game may pass later (a rate limit), so the run is interrupted and resume replays it.
    elapsed, shown = evaluate(results, "huge", exit_code=130)

    assert elapsed < 8, f"the run took {elapsed:.1f} s: the other games sat out a wait nobody sat out"
    played = games(results)
    failed = [g for g in played if g["status"] == "failed"]
    assert len(failed) == 1 and len(played) == 4
    assert "HTTP 429" in failed[0]["error"] and "more than the 20 s allowed for a request" in failed[0]["error"]
    assert failed[0]["failure"] == "retryable"
    assert [g["status"] for g in played if g is not failed[0]] == ["complete"] * 3
    limited = [c for c in attempts(results) if c["outcome"] == "rate_limited"]
    assert len(limited) == 1 == server.rate_limited_count  # the 429 is recorded and was not retried
    assert "retries 0 | 429s 1" in shown
    assert [c["game_id"] for c in attempts(results)].count(failed[0]["game_id"]) == limited[0]["round"]


@pytest.mark.slow
def test_a_lone_429_pauses_no_other_game_while_its_request_sits_out_the_retry_after(
    server: FakeLLMServer, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stray 429 (issue 19): before, the whole endpoint paused for the Retry-After (at most 60 s) and its
    # rate was cut for good. Now only the rejected request waits; the other games go on meanwhile.
    # The plain live display (stderr is no terminal here) prints every 0.2 s instead of every 5 s.
    monkeypatch.setattr(harness.cli.play, "_monitor", lambda m: live_display(m, harness.cli.err, plain_every=0.2))
    server.configure(retry_after_s=2)
    server.fail_next("openai", [429])

    elapsed, shown = evaluate(results, "stray", rounds=30)

    assert [g["status"] for g in games(results)] == ["complete"] * 4
    calls = attempts(results)
    limited = [c for c in calls if c["outcome"] == "rate_limited"]
    assert len(limited) == 1
    game, round_ = limited[0]["game_id"], limited[0]["round"]
    retried = [c for c in calls if (c["game_id"], c["round"]) == (game, round_)]
    assert [(c["attempt"], c["outcome"]) for c in retried] == [(1, "rate_limited"), (2, "ok")]
    assert "retries 1 | 429s 1" in shown  # the retry counted, in the live display's last line
    assert "paused" not in shown  # a lone 429 pauses nothing
    # From the server's log: when the 429 went out, when the rejected request came back, and what the
    # other games sent in between.
    log = server.requests
    rejected_at = next(r.time for r in log if r.status == 429)
    back_at = log[[r.status for r in log].index(429) + 1 :]
    others = [r.time - rejected_at for r in back_at]
    assert elapsed >= 2  # the rejected request sat out the whole Retry-After ...
    assert len([t for t in others if 0.0 < t < 1.8]) >= 20  # ... while the other games went on at once


# ---- point 8: a 200 that is not the API's JSON ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("model", ["openai/test-model", "anthropic/claude-test"])
def test_a_corrupt_or_html_200_is_retried_and_every_game_completes(
    server: FakeLLMServer, results: Path, model: str
) -> None:
    provider = model.split("/")[0]
    server.fail_next(provider, ["corrupt", "html", "corrupt"])

    _, shown = evaluate(results, "corrupt", model=model)

    assert [g["status"] for g in games(results)] == ["complete"] * 4
    failed = [c for c in attempts(results) if c["outcome"] != "ok"]
    assert len(failed) == 3 == sum(r.fault in ("corrupt", "html") for r in server.requests)
    assert all(c["outcome"] == "error" and "malformed answer: the body is not JSON" in c["error"] for c in failed)
    assert sum("(Expecting" in c["error"] for c in failed) == 2  # json.JSONDecodeError, from both SDKs
    assert sum("'<html><body>" in c["error"] for c in failed) == 1  # the page, returned by the SDKs as text
    calls = {(a["game_id"], a["round"], a["attempt"]): a["outcome"] for a in attempts(results)}
    assert all(calls.get((c["game_id"], c["round"], c["attempt"] + 1)) == "ok" for c in failed)  # asked again
    assert "retries 3 |" in shown
