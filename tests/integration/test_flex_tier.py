"""``pdbench eval --service-tier flex`` against the loopback server, through the official openai SDK: every
request asks for flex, a share of them is answered OpenAI's 429 "resource unavailable" and retried, the run
completes, and each answered call is recorded at the flex tier and priced by hand at o4-mini's flex prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, serve_to_the_cli

# o4-mini's flex prices in configs/prices.yaml, dollars per million tokens (standard: 1.10 and 4.40).
FLEX_INPUT, FLEX_OUTPUT = 0.55, 2.20


@pytest.fixture
def server(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    llm_server.configure(flex_unavailable_rate=0.3, seed=7)
    return serve_to_the_cli(monkeypatch, llm_server, timeout_s=20)


@pytest.mark.slow
def test_a_flex_eval_is_sent_recorded_and_priced_at_flex_and_survives_resource_unavailable_429s(
    server: FakeLLMServer, results: Path
) -> None:
    code, _out, err = pdbench("eval", "--model", "openai/o4-mini", "--service-tier", "flex", "--opponents", "TFT,ALLD",
                             "--rounds", "4", "--replicates", "1", "--no-cache", "--results", results,
                             "--run-id", "flex")  # fmt: skip
    assert code == 0, err
    assert "service_tier" not in err  # o4-mini has a flex price: no warning
    assert {r.body.get("service_tier") for r in server.requests} == {"flex"}
    unavailable = [r for r in server.requests if r.fault == "unavailable"]
    assert unavailable and all(r.status == 429 for r in unavailable)
    assert sql_json(results, "select status from runs") == [{"status": "complete"}]
    calls = sql_json(results, "select outcome, error, service_tier, input_tokens, output_tokens, cost_usd from calls")
    answered = [c for c in calls if c["outcome"] == "ok"]
    refused = [c for c in calls if c["outcome"] == "rate_limited"]
    assert len(answered) == 8 and len(refused) == len(unavailable)  # every 429 recorded, and retried
    assert all("Resource unavailable" in c["error"] for c in refused)
    assert {c["service_tier"] for c in calls} == {"flex"}
    for c in answered:
        assert c["cost_usd"] == pytest.approx((c["input_tokens"] * FLEX_INPUT + c["output_tokens"] * FLEX_OUTPUT) / 1e6)
    assert all(c["cost_usd"] is None for c in refused)
