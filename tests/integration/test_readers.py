"""What decided each move: structured replies (``answer_format: structured``) and the judge (``parse.judge``), end
to end through ``pdbench`` against the mock provider and the loopback server, as recorded in ``calls``
(``answer_format``, ``reader``, ``purpose = 'judge'``) and ``move_readers``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.store.catalog import Catalog
from tests.integration.test_engine_server import server  # noqa: F401  (the loopback server fixture)
from tests.support.cli import pdbench
from tests.support.llm_server import GARBAGE_REPLY, FakeLLMServer, constrained, is_probe

pytestmark = pytest.mark.slow  # each plays a run through the CLI (several seconds on a loaded machine)

EVAL = ("--opponents", "TFT,ALLD", "--rounds", "4", "--replicates", "1")


def reads(results: Path, *queries: str) -> list[list[dict[str, Any]]]:
    """Each query's rows, over one opening of the results folder (opening it costs more than these queries)."""
    with Catalog(results) as cat:
        return [cat.records(query) for query in queries]


def readers_query(run_id: str) -> str:
    return f"select reader, count(*) as n from move_readers where run_id = '{run_id}' group by all"


def counted(rows: list[dict[str, Any]]) -> dict[str, int]:
    """The rows of :func:`readers_query` as {reader: moves}."""
    return {r["reader"]: r["n"] for r in rows}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_structured_eval_reads_every_move_from_the_schema_field(
    server: FakeLLMServer,  # noqa: F811
    results: Path,
    provider: str,
) -> None:
    server.responder = constrained(1)  # the schema's second label: D
    code, out, err = pdbench(
        "eval", "--model", f"{provider}/test-model", *EVAL, "--answer-format", "structured", "--results", results,
        "--run-id", "st",
    )  # fmt: skip
    assert code == 0, err
    calls, moves = reads(
        results, "select answer_format, reader, outcome, action, request_json from calls", readers_query("st")
    )
    assert len(calls) == 8 and all(c["outcome"] == "ok" and c["action"] == "D" for c in calls)
    assert {(c["answer_format"], c["reader"]) for c in calls} == {("structured", "structured")}
    sent = json.loads(calls[0]["request_json"])["params"]["reply"]
    assert sent == {"labels": ["C", "D"], "reasoning": False}  # recorded per call, and part of its identity
    body = server.requests[0].body
    assert ("response_format" in body) if provider == "openai" else (body["tool_choice"]["type"] == "tool")
    assert counted(moves) == {"structured": 8}
    assert "structured 100%" in out  # the scorecard's line of readers


def test_a_structured_reply_that_breaks_its_schema_is_unreadable_and_asked_again(
    server: FakeLLMServer,  # noqa: F811
    results: Path,
) -> None:
    replies = iter(['{"action": "maybe"}', "I choose C"])  # round 1: two violations, then schema replies
    server.responder = lambda p, r: (not is_probe(r) and next(replies, None)) or constrained(0)(p, r)
    code, _, err = pdbench("eval", "--model", "openai/test-model", "--opponents", "TFT", "--rounds", "2",
                           "--replicates", "1", "--answer-format", "structured", "--results", results,
                           "--run-id", "v")  # fmt: skip
    assert code == 0, err
    calls, moves = reads(
        results, "select round, attempt, outcome, reader, error from calls order by round, attempt", readers_query("v")
    )
    assert [(c["round"], c["outcome"], c["reader"]) for c in calls] == [
        (1, "unparseable", None),
        (1, "unparseable", None),
        (1, "ok", "structured"),
        (2, "ok", "structured"),
    ]
    assert "'maybe' is not one of C or D" in calls[0]["error"] and "not JSON" in calls[1]["error"]
    assert counted(moves) == {"re-ask": 1, "structured": 1}


def _judged(tmp_path: Path, results: Path, run_id: str, judge: str, *, player: str = "mock/tft?unparseable=1") -> int:
    config = tmp_path / f"{run_id}.yaml"
    config.write_text(f"""
run: {{run_id: {run_id}, seed: 4}}
horizon: {{type: fixed, n_rounds: 3}}
experiment:
  replicates: 1
  conditions:
    - name: judged
      agent_a: {{model: "{player}", parse: {{judge: "{judge}", max_retries: 1}}}}
      agent_b: {{policy: ALLC}}
""")
    code, _, err = pdbench("run", config, "--results", results)
    assert code == 0, err
    return code


@pytest.mark.parametrize(
    ("judge", "reader", "move", "judgment"),
    [
        ("mock/defector", "judge", "D", "ok"),  # answers "second": the second option shown, D
        ("mock/cooperator", "judge", "C", "ok"),  # "first"
        ("mock/cooperator?confused=1", "fallback", "D", "ok"),  # "unclear": re-asked, then the fallback D
        ("mock/cooperator?unparseable=1", "fallback", "D", "unparseable"),  # neither of the three
    ],
)
def test_a_judge_reads_what_the_parser_refused_before_any_reask(
    tmp_path: Path, results: Path, judge: str, reader: str, move: str, judgment: str
) -> None:
    _judged(tmp_path, results, "j", judge)
    moves, rounds, judged, asks = reads(
        results,
        readers_query("j"),
        "select action_a from rounds",
        "select round, attempt, outcome, action, reader, request_json from calls where purpose = 'judge' "
        "order by round, attempt",
        "select count(*) as n from calls where purpose = 'move'",
    )
    assert counted(moves) == {reader: 3}
    assert {r["action_a"] for r in rounds} == {move}
    asked = 1 if reader == "judge" else 2  # one judgment per refused reply: the first answer, then the re-ask's
    assert len(judged) == 3 * asked and {j["outcome"] for j in judged} == {judgment}
    assert [j["attempt"] for j in judged[:asked]] == list(range(1, asked + 1))
    assert all((j["reader"] == "judge") == (reader == "judge") for j in judged)
    shown = json.loads(judged[0]["request_json"])["messages"][-1]["content"]
    assert '"C" (the first) and "D" (the second)' in shown and "unparseable" not in shown
    assert asks[0]["n"] == 3 * (1 if reader == "judge" else 2)  # the judge spared the re-ask, or did not


def _judge_responder(verdicts: dict[str, str]) -> Any:
    """The served player answers garbage of its own each round (so each judgment is a request of its own; the
    same reply judged twice is one request, answered once); the served judge (judge-model) answers ``verdicts``."""

    def respond(provider: str, request: dict[str, Any]) -> str:
        if request["model"] != "judge-model":
            return f"{GARBAGE_REPLY} ({len(json.dumps(request['messages']))})"
        return verdicts.get(provider, "first")

    return respond


@pytest.mark.parametrize(
    ("verdict", "reader", "move"),
    [
        ("First.", "judge", "C"),
        ("**second**", "judge", "D"),
        ("unclear", "fallback", "D"),
        ("C, I think", "fallback", "D"),
    ],
)
def test_a_served_judge_is_cached_and_costed_like_any_call(
    server: FakeLLMServer,  # noqa: F811
    tmp_path: Path,
    results: Path,
    verdict: str,
    reader: str,
    move: str,
) -> None:
    server.responder = _judge_responder({"openai": verdict})
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai/judge-model: {input: 100.0, output: 1000.0}\nopenai/*: {input: 1.0, output: 1.0}\n")
    for run_id in ("first", "again"):
        config = tmp_path / f"{run_id}.yaml"
        config.write_text(f"""
run: {{run_id: {run_id}, seed: 4}}
horizon: {{type: fixed, n_rounds: 2}}
experiment:
  replicates: 1
  conditions:
    - name: judged
      agent_a: {{model: openai/test-model, parse: {{judge: openai/judge-model, max_retries: 0}}}}
      agent_b: {{policy: ALLC}}
""")
        code, _, err = pdbench("run", config, "--results", results, "--prices", prices)
        assert code == 0, err
    first, again_moves, rounds, judged = reads(
        results,
        readers_query("first"),
        readers_query("again"),
        "select run_id, action_a from rounds",
        "select run_id, model, cached, cost_usd, input_tokens, output_tokens from calls where purpose = 'judge' "
        "order by run_id, round",
    )
    assert counted(first) == counted(again_moves) == {reader: 2}
    for run_id in ("first", "again"):
        assert {r["action_a"] for r in rounds if r["run_id"] == run_id} == {move}
    paid = [j for j in judged if j["run_id"] == "first"]
    again = [j for j in judged if j["run_id"] == "again"]
    assert len(paid) == len(again) == 2 and all(j["model"] == "judge-model" for j in judged)
    assert not any(j["cached"] for j in paid) and all(j["cached"] for j in again)  # the second run pays nothing
    for j in paid:  # the judge's own price, from its own tokens
        assert j["cost_usd"] == pytest.approx((j["input_tokens"] * 100.0 + j["output_tokens"] * 1000.0) / 1e6)
    assert all(j["cost_usd"] == 0 for j in again)
    judge_requests = [r for r in server.requests if r.body["model"] == "judge-model"]
    assert len(judge_requests) == 2 and judge_requests[0].body["temperature"] == 0.0


def test_a_judge_without_a_key_or_of_an_unknown_provider_stops_the_run_before_it_starts(
    tmp_path: Path, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for run_id, judge, said in (
        ("nokey", "anthropic/claude-judge", "ANTHROPIC_API_KEY"),
        ("unknown", "acme/judge", "unknown provider 'acme'"),
    ):
        config = tmp_path / f"{run_id}.yaml"
        config.write_text(f"""
run: {{run_id: {run_id}}}
experiment:
  conditions:
    - name: judged
      agent_a: {{model: mock/tft, parse: {{judge: {judge}}}}}
      agent_b: {{policy: ALLC}}
""")
        code, out, err = pdbench("run", config, "--results", results)
        assert code == 2 and said in err and "judge" in err and "Traceback" not in out + err
        assert not (results / f"{run_id}.duckdb").exists()
