"""Structured replies on a server that cannot give them are refused before the run: one probe request per
(endpoint, model), against the loopback server refusing the schema (400), ignoring it (free text) or honouring it,
and against no server at all; ``--dry-run`` only says it would send it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.calls.retry import RetrySettings
from harness.config import ExperimentConfig, parse_experiment
from harness.config.engine_options import EngineOptions
from harness.engine.structured_probe import (
    PROBE_ATTEMPTS,
    PROBE_MAX_SECONDS,
    check_structured_replies,
    probe_retry,
    structured_probes,
)
from harness.errors import ConfigError
from tests.integration.test_engine_server import server  # noqa: F401  (the loopback server fixture)
from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, constrained, is_probe

pytestmark = pytest.mark.slow  # each plays (or refuses) a run through the CLI

MODELS = {"openai": "openai/test-model", "anthropic": "anthropic/claude-test"}


def structured_eval(results: Path, model: str, *extra: str) -> tuple[int, str, str]:
    return pdbench("eval", "--model", model, "--opponents", "TFT,ALLD", "--rounds", "2", "--replicates", "1",
                   "--answer-format", "structured", "--results", results, "--run-id", "st", *extra)  # fmt: skip


def refused_before_the_run(code: int, out: str, err: str, results: Path) -> str:
    """The error paragraph, after checking that it is one, with no traceback, and that no run was written."""
    assert code == 2 and "Traceback" not in out + err
    assert not list(results.glob("*.duckdb"))  # nothing was played, not even set up
    message = err.strip()
    assert message.startswith("error:") and "Nothing was played." in message
    return " ".join(message.split())  # the terminal wraps it


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_that_refuses_the_schema_is_refused_before_the_run(
    server: FakeLLMServer,  # noqa: F811
    results: Path,
    provider: str,
) -> None:
    server.configure(structured=False)
    message = refused_before_the_run(*structured_eval(results, MODELS[provider]), results)
    what = "response_format" if provider == "openai" else "tools"
    assert f"{MODELS[provider]} at {server.openai_base_url if provider == 'openai' else ''}" in message
    assert "refused a request for the structured reply" in message and "HTTP 400" in message
    assert f"does not support `{what}`" in message and "answer_format: json" in message
    assert server.count() == 1  # the probe, once: a refusal is not asked again


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_that_ignores_the_schema_is_refused_before_the_run(
    server: FakeLLMServer,  # noqa: F811
    results: Path,
    provider: str,
) -> None:
    server.responder = lambda p, r: "I choose C"  # takes the schema, answers free text
    message = refused_before_the_run(*structured_eval(results, MODELS[provider]), results)
    assert "did not follow it" in message and "'I choose C'" in message and "not JSON" in message
    assert server.count() == 1
    sent = server.requests[0]
    assert is_probe(sent.body) and sent.body["max_tokens"] == 256  # the player's own cap and schema
    if provider == "openai":
        assert sent.body["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"] == ["C", "D"]


def test_a_reply_outside_the_labels_is_refused_too(server: FakeLLMServer, results: Path) -> None:  # noqa: F811
    server.responder = lambda p, r: json.dumps({"action": "maybe"})
    message = refused_before_the_run(*structured_eval(results, MODELS["openai"]), results)
    assert "'maybe' is not one of C or D" in message


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_server_that_honours_the_schema_plays_with_the_probe_unrecorded(
    server: FakeLLMServer,  # noqa: F811
    results: Path,
    provider: str,
) -> None:
    server.responder = constrained(1)
    code, _, err = structured_eval(results, MODELS[provider])
    assert code == 0, err
    calls = sql_json(results, "select request_json, cached from calls")
    assert len(calls) == 4 and not any(c["cached"] for c in calls)  # 2 opponents × 2 rounds of moves, no probe
    assert not any(is_probe(json.loads(c["request_json"])) for c in calls)
    assert server.count() == 5 and is_probe(server.requests[0].body)  # the probe first, then the moves
    assert not any(is_probe(r.body) for r in server.requests[1:])
    code, _, err = structured_eval(results, MODELS[provider], "--overwrite")  # moves from the cache now
    assert code == 0, err
    assert server.count() == 6 and is_probe(server.requests[5].body)  # the probe is sent again: never cached


def test_a_server_that_cannot_be_reached_is_reported_as_such(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-key-1234")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # the discard port: nothing listens
    monkeypatch.setenv("PDBENCH_BACKOFF", "0.01")
    message = refused_before_the_run(*structured_eval(results, MODELS["openai"]), results)
    assert "could not be asked" in message and "connection error" in message and "3 tries" in message


def test_dry_run_says_it_would_send_the_probe_and_sends_nothing(
    server: FakeLLMServer,  # noqa: F811
    tmp_path: Path,
    results: Path,
) -> None:
    server.configure(structured=False)
    config = tmp_path / "probe.yaml"
    config.write_text("""
horizon: {type: fixed, n_rounds: 2}
experiment:
  conditions:
    - {agent_a: {model: openai/test-model, prompts: {answer_format: structured}}, agent_b: {policy: TFT}}
    - {agent_a: {model: openai/test-model, prompts: {answer_format: structured}}, agent_b: {policy: ALLD}}
""")
    code, out, err = pdbench("run", config, "--dry-run", "--results", results)
    assert code == 0, err
    text = " ".join(out.split())
    assert text.count("one request to check that it follows the structured reply's JSON schema (not sent now)") == 1
    assert server.count() == 0


def _config(*agents: dict[str, object]) -> ExperimentConfig:
    return parse_experiment(
        {"experiment": {"conditions": [{"agent_a": agent, "agent_b": {"policy": "TFT"}} for agent in agents]}}
    )


def test_one_probe_per_endpoint_and_model_and_none_for_the_providers_own_endpoints() -> None:
    structured = {"prompts": {"answer_format": "structured"}}
    served = "http://127.0.0.1:8080/v1"
    config = _config(
        {"model": "openai/a", "base_url": served, **structured},
        {"model": "openai/a", "base_url": served + "/", **structured},  # the same endpoint, written otherwise
        {"model": "openai/b", "base_url": served, **structured},  # another model on it
        {"model": "openai/a", "base_url": "http://127.0.0.1:8081/v1", **structured},  # another server
        {"model": "openai/a", "base_url": served},  # free text: nothing to check
        {"model": "openai/gpt-4o-mini", **structured},  # OpenAI's own endpoint
        {"model": "anthropic/claude-x", **structured},  # Anthropic's own
        {"model": "mock/tft", **structured},  # offline
    )
    probes = structured_probes(config, environ={})
    assert [(p.agent.model, p.base_url) for p in probes] == [
        ("openai/a", served),
        ("openai/b", served),
        ("openai/a", "http://127.0.0.1:8081/v1"),
    ]
    via_env = structured_probes(_config({"model": "openai/m", **structured}), environ={"OPENAI_BASE_URL": served})
    assert [p.base_url for p in via_env] == [served]
    own = structured_probes(  # the environment naming the provider's own endpoint
        _config({"model": "openai/m", **structured}), environ={"OPENAI_BASE_URL": "https://api.openai.com/v1/"}
    )
    assert own == []


def test_a_budget_of_nothing_sends_no_probe(server: FakeLLMServer) -> None:  # noqa: F811
    """``--max-cost 0`` promises no paid request: the run is served from the cache or not at all."""
    server.configure(structured=False)
    config = _config({"model": "openai/test-model", "prompts": {"answer_format": "structured"}})
    check_structured_replies(config, EngineOptions(max_cost=0.0))
    assert server.count() == 0
    with pytest.raises(Exception, match="refused a request for the structured reply"):
        check_structured_replies(config, EngineOptions())


def _fast_retries() -> EngineOptions:
    """The run's retry settings with waits of a few hundredths of a second, so the probe's retries show quickly."""
    return EngineOptions(retry=RetrySettings(backoff_initial=0.01, backoff_max=0.05))


def test_a_fault_that_passes_is_tried_again_under_the_call_paths_retry_policy(server: FakeLLMServer) -> None:  # noqa: F811
    """A 5xx and a timeout before the answer: the probe tries again (3 tries at most), then passes."""
    server.responder = constrained(1)
    server.configure(timeout_s=0.2)
    server.fail_next("openai", [503, "timeout"])
    config = _config({"model": "openai/test-model", "prompts": {"answer_format": "structured"}})
    engine = EngineOptions(retry=RetrySettings(backoff_initial=0.01, backoff_max=0.05, timeout=0.1))
    check_structured_replies(config, engine)
    assert server.count() == 3 and server.count(status=200) == 1


def test_a_fault_that_outlasts_the_probes_tries_stops_the_run_with_what_to_do(server: FakeLLMServer) -> None:  # noqa: F811
    server.fail_next("openai", [503, 503, 503, 503])
    config = _config({"model": "openai/test-model", "prompts": {"answer_format": "structured"}})
    with pytest.raises(ConfigError) as info:
        check_structured_replies(config, _fast_retries())
    assert server.count() == PROBE_ATTEMPTS  # three tries, not the run's six
    message = " ".join(str(info.value).split())
    assert "could not be asked" in message and "503" in message and "Check that the server is up" in message


def test_a_retry_after_longer_than_the_probe_may_wait_is_not_sat_out(server: FakeLLMServer) -> None:  # noqa: F811
    """A 429 asking for a wait past the probe's budget gives up at once, and the paragraph says why."""
    server.configure(retry_after_s=PROBE_MAX_SECONDS * 2)
    server.fail_next("openai", [429])
    config = _config({"model": "openai/test-model", "prompts": {"answer_format": "structured"}})
    with pytest.raises(ConfigError) as info:
        check_structured_replies(config, _fast_retries())
    assert server.count() == 1
    assert f"more than the {PROBE_MAX_SECONDS:g} s allowed" in " ".join(str(info.value).split())


def test_the_probes_bounds_never_exceed_the_runs_own() -> None:
    run = RetrySettings(max_attempts=2, max_seconds=5.0, backoff_max=1.0, timeout=7.0)
    assert probe_retry(run) == run
    generous = probe_retry(RetrySettings(max_attempts=50, max_seconds=3600.0, backoff_max=600.0))
    assert (generous.max_attempts, generous.max_seconds) == (PROBE_ATTEMPTS, PROBE_MAX_SECONDS)
    assert generous.backoff_max * PROBE_ATTEMPTS <= PROBE_MAX_SECONDS
