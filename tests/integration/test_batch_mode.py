"""Batch mode end to end: ``pdbench eval --batch`` through the official SDKs against the loopback server's batch
APIs (OpenAI files and batches, Anthropic Message Batches; :mod:`tests.support.batch_api`).

The games play in lock step (one batch a round, every game's request in it), nothing goes to the synchronous
endpoints, every answer is recorded at the batch tier and priced by hand at the batch prices, items that failed go
into a later batch, a batch refused as a whole fails its games, model-against-model games put both seats in one
batch, comprehension questions ride in batches too, and a run killed with SIGKILL while its batch is out resumes
without submitting that batch again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import ROOT, pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, serve_to_the_cli

# Batch prices in configs/prices.yaml, dollars per million tokens.
MINI_INPUT, MINI_OUTPUT = 0.075, 0.30  # openai/gpt-4o-mini
HAIKU_INPUT, HAIKU_OUTPUT = 0.50, 2.50  # anthropic/claude-haiku-4-5


@pytest.fixture
def server(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    llm_server.configure(batch_polls=1)
    monkeypatch.setenv("PDBENCH_BATCH_GATHER", "0.1")
    monkeypatch.setenv("PDBENCH_BATCH_POLL", "0")
    return serve_to_the_cli(monkeypatch, llm_server, timeout_s=20)


def synchronous(server: FakeLLMServer) -> list[str]:
    """Paths of requests sent outside the batch APIs."""
    return [r.path for r in server.requests if r.path.rstrip("/") in ("/v1/chat/completions", "/v1/messages")]


def eval_batch(results: Path, model: str, *extra: object, run_id: str = "b") -> tuple[int, str, str]:
    return pdbench("eval", "--model", model, "--batch", "--results", results, "--run-id", run_id, *extra)


@pytest.mark.slow
def test_an_eval_in_batch_mode_plays_one_batch_a_round_and_records_each_answer_at_batch_prices(
    server: FakeLLMServer, results: Path
) -> None:
    code, _out, err = eval_batch(results, "openai/gpt-4o-mini", "--opponents", "TFT,ALLD,GRIM", "--rounds", "3",
                                 "--replicates", "2")  # fmt: skip
    assert code == 0, err
    assert synchronous(server) == []
    assert [b.items for b in server.batches] == [6, 6, 6]  # 6 games in lock step: one batch a round
    assert server.batch_stats("openai").items_answered == 18
    assert sql_json(results, "select status from runs") == [{"status": "complete"}]
    calls = sql_json(results, "select outcome, service_tier, cached, input_tokens, output_tokens, cost_usd from calls")
    assert len(calls) == 18 and {(c["outcome"], c["service_tier"], c["cached"]) for c in calls} == {
        ("ok", "batch", False)
    }
    for c in calls:
        assert c["cost_usd"] == pytest.approx((c["input_tokens"] * MINI_INPUT + c["output_tokens"] * MINI_OUTPUT) / 1e6)
    # The same eval again is answered from the response cache: nothing more is submitted.
    code, _out, err = pdbench("eval", "--model", "openai/gpt-4o-mini", "--batch", "--opponents", "TFT,ALLD,GRIM",
                              "--rounds", "3", "--replicates", "2", "--results", results,
                              "--run-id", "again")  # fmt: skip
    assert code == 0, err
    assert len(server.batches) == 3


@pytest.mark.slow
def test_anthropic_batches_carry_the_comprehension_questions_and_warn_of_the_short_prompt_cache(
    server: FakeLLMServer, results: Path
) -> None:
    code, _out, err = eval_batch(results, "anthropic/claude-haiku-4-5", "--opponents", "TFT,ALLD", "--rounds", "2",
                                 "--replicates", "1", "--comprehension", "1")  # fmt: skip
    assert code == 0, err
    assert "cache_ttl: 1h" in err  # batch rounds come minutes apart: the 5-minute cache would not be read
    assert synchronous(server) == []
    calls = sql_json(results, "select purpose, outcome, service_tier, input_tokens, output_tokens, cost_usd from calls")
    assert {c["purpose"] for c in calls} == {"move", "comprehension"}
    # The server's stock reply answers no question ("unparseable"), and its re-asks ride in batches as well.
    assert {c["service_tier"] for c in calls} == {"batch"}
    assert {c["outcome"] for c in calls if c["purpose"] == "move"} == {"ok"}
    assert sum(b.items for b in server.batches) == len(calls)
    for c in calls:
        assert c["cost_usd"] == pytest.approx(
            (c["input_tokens"] * HAIKU_INPUT + c["output_tokens"] * HAIKU_OUTPUT) / 1e6
        )


@pytest.mark.slow
def test_items_that_failed_or_expired_are_asked_again_in_a_later_batch(server: FakeLLMServer, results: Path) -> None:
    server.fail_batch_items("openai", {0: "error", 2: "expired"})
    code, _out, err = eval_batch(results, "openai/gpt-4o-mini", "--opponents", "TFT,ALLD,GRIM", "--rounds", "2",
                                 "--replicates", "1")  # fmt: skip
    assert code == 0, err
    # Round 1 (3 items, 2 fail); those 2 again with the answered game's round 2; then the other games' round 2.
    assert [b.items for b in server.batches] == [3, 3, 2]
    assert sql_json(results, "select status from runs") == [{"status": "complete"}]
    failed = sql_json(results, "select round, attempt, error from calls where outcome = 'error' order by error")
    assert [(f["round"], f["attempt"]) for f in failed] == [(1, 1), (1, 1)]
    errors = sorted(f["error"] for f in failed)
    assert errors[0].startswith("HTTP 500: Scripted item failure") and "batch_expired" in errors[1]
    assert sql_json(results, "select count(*) as n from calls where outcome = 'ok'") == [{"n": 6}]


@pytest.mark.slow
def test_a_batch_refused_at_the_token_limit_is_sent_again_and_one_refused_for_good_fails_its_games(
    server: FakeLLMServer, results: Path
) -> None:
    server.next_batch_outcome("openai", "failed")  # OpenAI's enqueued-token limit: it passes
    code, _out, err = eval_batch(results, "openai/gpt-4o-mini", "--opponents", "TFT,ALLD", "--rounds", "2",
                                 "--replicates", "1")  # fmt: skip
    assert code == 0, err
    assert [b.items for b in server.batches] == [0, 2, 2]  # refused (the server then counts no items), again, round 2
    limited = sql_json(results, "select error from calls where outcome = 'rate_limited'")
    assert len(limited) == 2 and all("Enqueued token limit" in c["error"] for c in limited)
    server.next_batch_outcome("anthropic", "failed")  # Anthropic refuses the create itself (400): for good
    code, _out, err = eval_batch(results, "anthropic/claude-haiku-4-5", "--opponents", "TFT,ALLD", "--rounds", "2",
                                 "--replicates", "1", run_id="refused")  # fmt: skip
    assert code == 1, err  # every game failed: no scorecard to show
    games = sql_json(results, "select status, failure from games where run_id = 'refused'")
    assert {(g["status"], g["failure"]) for g in games} == {("failed", "permanent")}


@pytest.mark.slow
def test_both_seats_of_a_model_against_model_game_ride_in_one_batch(server: FakeLLMServer, results: Path) -> None:
    config = results.parent / "pair.yaml"
    config.write_text(
        "experiment:\n"
        "  replicates: 2\n"
        "  conditions:\n"
        "    - name: self_play\n"
        "      agent_a: {model: openai/gpt-4o-mini, service_tier: batch}\n"
        "      agent_b: {model: openai/gpt-4o-mini, service_tier: batch}\n"
        "horizon: {type: fixed, n_rounds: 2}\n"
    )
    code, _out, err = pdbench("run", config, "--results", results, "--run-id", "pair")
    assert code == 0, err
    assert [b.items for b in server.batches] == [4, 4]  # 2 games x 2 seats, a round each
    rows = sql_json(results, "select player, service_tier, count(*) as n from calls group by all order by player")
    assert rows == [{"player": "a", "service_tier": "batch", "n": 4}, {"player": "b", "service_tier": "batch", "n": 4}]


def test_batch_mode_refuses_no_cache_and_a_provider_without_batches(server: FakeLLMServer, results: Path) -> None:
    code, _out, err = eval_batch(results, "openai/gpt-4o-mini", "--rounds", "2", "--no-cache")
    assert code != 0 and "--no-cache" in err and "Traceback" not in err
    code, _out, err = eval_batch(results, "mock/tft", "--rounds", "2")
    assert code != 0 and "mock has none" in err and "Traceback" not in err
    code, _out, err = pdbench("eval", "--model", "openai/o4-mini", "--batch", "--service-tier", "flex", "--results",
                              results)  # fmt: skip
    assert code != 0 and "give one of them" in err
    assert server.requests == []


def test_the_dry_run_counts_the_batches_one_after_another(server: FakeLLMServer, results: Path) -> None:
    code, out, err = eval_batch(results, "openai/gpt-4o-mini", "--rounds", "10", "--comprehension", "1,5", "--dry-run")
    assert code == 0, err
    assert "batch (this run's tier)" in out
    assert "12 batches one after another" in out  # 10 rounds, and one more in each of the 2 question rounds
    assert server.requests == []


@pytest.mark.slow
def test_kill_9_while_a_batch_is_out_then_resume_collects_it_without_sending_it_again(
    server: FakeLLMServer, results: Path
) -> None:
    server.configure(batch_polls=6)  # each batch is out for 6 polls: 0.2 s, then half as long again each time
    env = {**os.environ, "PDBENCH_BATCH_POLL": "0.2"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "eval", "--model", "openai/gpt-4o-mini", "--batch", "--opponents",
         "TFT,ALLD", "--rounds", "3", "--replicates", "1", "--results", str(results), "--run-id", "k9"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (server.batches and server.batches[-1].retrieves >= 2) and time.monotonic() < deadline:
        time.sleep(0.01)
    out_at_kill = len(server.batches)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert out_at_kill >= 1 and server.batches[-1].status != "completed"  # killed while its batch was out
    code, _out, err = pdbench("resume", "k9", "--results", results)
    assert code == 0, err
    assert sql_json(results, "select status from runs") == [{"status": "complete"}]
    assert [b.items for b in server.batches] == [2, 2, 2]  # three rounds, three batches: none sent twice
    assert server.batch_stats("openai").items_answered == 6
    assert sql_json(results, "select count(*) as n from calls where outcome = 'ok' and service_tier = 'batch'") == [
        {"n": 6}
    ]
