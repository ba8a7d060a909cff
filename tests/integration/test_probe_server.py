"""Counterfactual probes of a model behind a real provider's API (the loopback OpenAI-compatible server): the
factual requests are the source run's own, answered from the response cache (or the source's file without a
cache) and never sent; only the counterfactual requests reach the server, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, serve_to_the_cli

PROBES = 2 * 3  # two games of 4 rounds: rounds 2, 3 and 4 of each


@pytest.fixture
def server(llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> FakeLLMServer:
    return serve_to_the_cli(monkeypatch, llm_server, timeout_s=20)


def _probe(results: Path, run_id: str, *flags: str) -> str:
    code, out, err = pdbench("probe", "src", "--run-id", run_id, "--results", results, *flags)
    assert code == 0, err
    return out


@pytest.mark.slow
def test_only_the_counterfactual_requests_are_sent_and_each_once(
    server: FakeLLMServer, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = pdbench(
        "eval", "--model", "openai/test-model", "--opponents", "ALTERNATOR", "--rounds", "4", "--replicates", "2",
        "--run-id", "src", "--results", results,
    )  # fmt: skip
    assert code == 0, err
    played = len(server.requests)
    assert played == 2 * 4

    out = _probe(results, "p")
    assert f"{PROBES} counterfactual calls sent" in out and "0 factual sent" in out and "0 unmatched" in out
    assert len(server.requests) == played + PROBES  # the counterfactual requests alone
    calls = sql_json(
        results, "select purpose, cached, count(*) as n from calls where run_id = 'p' group by all order by 1"
    )
    assert calls == [
        {"purpose": "counterfactual", "cached": False, "n": PROBES},
        {"purpose": "factual", "cached": True, "n": PROBES},
    ]
    # The factual requests are the requests the source sent for the same round and seat, byte for byte.
    same = sql_json(
        results,
        "select count(*) as n from calls f join calls s on s.run_id = 'src' and s.purpose = 'move' "
        "and (s.game_id, s.round, s.player) = (f.game_id, f.round, f.player) "
        "and s.request_json::VARCHAR = f.request_json::VARCHAR where f.run_id = 'p' and f.purpose = 'factual'",
    )
    assert same == [{"n": PROBES}]
    # The loopback model always cooperates: no flip changes its move.
    shares = sql_json(results, "select flip, count(*) as n, count(*) filter (where changed) as c "
                      "from counterfactual_probes where run_id = 'p' group by all order by all")  # fmt: skip
    assert shares == [{"flip": "C->D", "n": 4, "c": 0}, {"flip": "D->C", "n": 2, "c": 0}]

    _probe(results, "again")  # the counterfactual answers are cached now too
    assert len(server.requests) == played + PROBES

    _probe(results, "uncached", "--no-cache")  # factual answers from the source run's file; counterfactual paid again
    assert len(server.requests) == played + 2 * PROBES

    code, out, err = pdbench("probe", "src", "--run-id", "broke", "--max-cost", "0", "--no-cache", "--results", results)
    assert code == 130 and "interrupted" in out and "0 counterfactual calls sent" in out, (out, err)
    assert len(server.requests) == played + 2 * PROBES  # the budget stopped every counterfactual request
    assert sql_json(results, "select status from runs where run_id = 'broke'") == [{"status": "interrupted"}]
    _probe(results, "free", "--max-cost", "0")  # with the cache every answer is known: nothing to pay, all done
    assert len(server.requests) == played + 2 * PROBES

    monkeypatch.delenv("OPENAI_API_KEY")
    code, _, err = pdbench("probe", "src", "--run-id", "nokey", "--results", results)
    assert code != 0 and "OPENAI_API_KEY" in err and "Traceback" not in err, err
    assert sql_json(results, "select count(*) as n from runs where run_id = 'nokey'") == [{"n": 0}]
