"""Replies without the answer in them, through ``pdbench eval`` against the loopback server (issue 19,
point 7): a 200 with no ``choices``, ``choices: []`` or null content is a damaged answer, retried and
never cached; a content filter's refusal is recorded as a refusal, not as the model's empty answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, serve_to_the_cli

ARGS = ("--opponents", "TFT,ALLD", "--rounds", "3", "--replicates", "1", "--concurrency", "2")


@pytest.fixture
def server(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    # No fault here is a timeout, and the tests count calls exactly: a per-attempt timeout as short as 2 s was once
    # reached by a plain answer on a loaded machine, and its retry was one call too many.
    return serve_to_the_cli(monkeypatch, llm_server, timeout_s=20)


def evaluate(results: Path, run_id: str, model: str) -> tuple[int, str]:
    code, _, err = pdbench("eval", "--model", model, *ARGS, "--results", results, "--run-id", run_id)
    return code, err


@pytest.mark.slow
def test_answerless_replies_are_retried_never_cached_and_resume_plays_them_once_the_server_recovers(
    server: FakeLLMServer, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before the fix: every answerless reply was the model's empty answer, cached for good; the run ended
    # `complete` with every move a fallback, and a rerun after the server recovered took them from the cache.
    monkeypatch.setenv("PDBENCH_MAX_ATTEMPTS", "2")
    model, provider = "openai/test-model", "openai"
    server.fail_next(provider, ["no_choices", "empty_choices", "null_content"] * 20)  # an outage of broken replies

    code, err = evaluate(results, "broken", model)

    assert code == 130 and "Traceback" not in err and "pdbench resume broken" in err, err
    assert sql_json(results, "select status from runs") == [{"status": "interrupted"}]
    games = sql_json(results, "select status, failure from games")
    assert games == [{"status": "failed", "failure": "retryable"}] * 2
    calls = sql_json(results, "select outcome, error, cached from calls")
    assert len(calls) == 4 and {c["outcome"] for c in calls} == {"error"}  # two attempts per game, no answer
    assert all(c["error"].startswith("malformed answer: the answer") and " no " in c["error"] for c in calls), calls
    assert sql_json(results, "select count(*) as n from rounds") == [{"n": 0}]  # no fallback move was played

    server.reset()  # the server recovers: what comes now is the model's, not the cache's
    code, _, err = pdbench("resume", "broken", "--results", results)

    assert code == 0, err
    assert sql_json(results, "select status from games") == [{"status": "complete"}] * 2
    played = sql_json(results, "select outcome, cached from calls")
    assert len(played) == 6 and {(c["outcome"], c["cached"]) for c in played} == {("ok", False)}
    assert server.count(provider=provider, status=200) == 6  # 2 games x 3 rounds, each asked of the model
    assert sql_json(results, "select sum(fallback_rounds) as n from model_parsing") == [{"n": 0}]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "why"), [("openai/test-model", "content_filter"), ("anthropic/claude-t", "refusal")])
def test_a_content_filter_refusal_is_recorded_as_a_refusal_and_cached_as_one(
    server: FakeLLMServer, results: Path, model: str, why: str
) -> None:
    provider = model.split("/")[0]
    server.fail_next(provider, ["null_content", "refusal"])  # a damaged reply, asked again: then a refusal

    code, err = evaluate(results, "first", model)

    assert code == 0, err
    query = "select game_id, round, attempt, outcome, error, action, cached from calls where run_id = '{}' order by all"
    calls = sql_json(results, query.format("first"))
    refused = [c for c in calls if c["outcome"] == "refused"]
    assert len(refused) == 1 and refused[0]["action"] is None and not refused[0]["cached"]
    assert refused[0]["error"] == f"the provider refused to answer ({why})"
    outcomes = {(c["game_id"], c["round"], c["attempt"]): c["outcome"] for c in calls}
    after = [outcomes.get((c["game_id"], c["round"], c["attempt"] + 1)) for c in calls if c["outcome"] != "ok"]
    assert after == ["ok", "ok"] or after == ["refused", "ok"]  # the damaged reply retried, the refusal re-asked
    damaged = [c for c in calls if c["outcome"] == "error"]
    assert len(damaged) == 1 and damaged[0]["error"].startswith("malformed answer: the answer")
    assert {c["outcome"] for c in calls} == {"ok", "refused", "error"}  # not `unparseable`: no parse failure
    paid = server.count()

    # The same experiment again: every answer from the cache, the refusal still a refusal.
    code, err = evaluate(results, "again", model)

    assert code == 0, err
    assert server.count() == paid
    again = sql_json(results, query.format("again"))
    answers = [(c["game_id"], c["round"], c["outcome"], c["error"]) for c in calls if c["outcome"] != "error"]
    assert [(c["game_id"], c["round"], c["outcome"], c["error"]) for c in again] == answers  # the damaged one: never
    assert all(c["cached"] for c in again)
