"""The provider's prompt cache, recorded, priced and shown: ``pdbench eval`` against the loopback server
accounting for caching as OpenAI does (its threshold lowered to 128 tokens, so that the shared system message is
read from the cache). Every call's cost is derived here from its recorded tokens at gpt-4o-mini's listed prices,
and the share and saving the scorecard and ``pdbench report`` print from the calls table's sums."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, serve_to_the_cli

# gpt-4o-mini in configs/prices.yaml, dollars per million tokens.
INPUT, CACHED, OUTPUT = 0.15, 0.075, 0.60


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def server(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    llm_server.configure(prompt_cache=True, openai_cache_min=128)
    return serve_to_the_cli(monkeypatch, llm_server, timeout_s=20)


@pytest.mark.slow
def test_cached_tokens_are_recorded_priced_and_shown(server: FakeLLMServer, results: Path) -> None:
    code, out, err = pdbench("eval", "--model", "openai/gpt-4o-mini", "--opponents", "TFT,ALLD", "--rounds", "3",
                             "--replicates", "1", "--concurrency", "1", "--no-cache", "--results", results,
                             "--run-id", "cached")  # fmt: skip
    assert code == 0, err
    calls = sql_json(
        results, "select input_tokens, output_tokens, cached_input_tokens, cache_write_tokens, cost_usd from calls"
    )
    assert len(calls) == 6
    for c in calls:
        assert c["cache_write_tokens"] is None  # OpenAI reports no writes
        expected = ((c["input_tokens"] - c["cached_input_tokens"]) * INPUT + c["cached_input_tokens"] * CACHED
                    + c["output_tokens"] * OUTPUT) / 1e6  # fmt: skip
        assert c["cost_usd"] == pytest.approx(expected)
    assert calls[0]["cached_input_tokens"] == 0  # nothing was seen before the first request
    read = sum(c["cached_input_tokens"] for c in calls)
    total = sum(c["input_tokens"] for c in calls)
    assert read > 0 and read % 128 == 0
    saving = read * (INPUT - CACHED) / 1e6
    line = (
        f"Prompt cache openai/gpt-4o-mini: {read / total:.1%} of {total:,} input tokens read from the provider's "
        f"cache; saving ${saving:,.4f} against the input price"
    )
    assert line in flat(out)
    code, report, err = pdbench("report", "cached", "--results", results)
    assert code == 0 and line in flat(report), err


def test_a_run_whose_provider_said_nothing_of_its_cache_shows_nothing_new(
    llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, results: Path
) -> None:
    serve_to_the_cli(monkeypatch, llm_server, timeout_s=20)  # prompt_cache off: no prompt_tokens_details
    code, out, err = pdbench("eval", "--model", "openai/gpt-4o-mini", "--opponents", "TFT", "--rounds", "2",
                             "--replicates", "1", "--no-cache", "--results", results, "--run-id", "plain")  # fmt: skip
    assert code == 0, err
    assert "Prompt cache" not in out
    assert sql_json(results, "select count(cached_input_tokens) as n from calls") == [{"n": 0}]
