"""A real model, SmolLM2-135M-Instruct served by llama.cpp on loopback (tests/support/llama_server.py), plays
through the CLI as a user's OpenAI-compatible server would.

What only a real model can show: that its constrained output (``answer_format: structured``, llama.cpp turning the
JSON schema into a grammar) is read in every round of a game, and that every round of a free-text game is decided
by exactly one reader and recorded as such. These tests skip where llama-server or the weights are missing, saying
how to set them up (tests/realmodel/setup.sh; too long a build for CI's budget).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import llama_server
from tests.support.cli import pdbench, sql_json

pytestmark = [
    pytest.mark.slow,
    pytest.mark.realmodel,
    pytest.mark.xdist_group("realmodel"),  # one server at a time: it takes both cores
    pytest.mark.skipif(llama_server.missing() is not None, reason=str(llama_server.missing())),
]

MODEL = f"openai/{llama_server.MODEL_NAME}"


@pytest.fixture(scope="module")
def server() -> Iterator[llama_server.LlamaServer]:
    with llama_server.LlamaServer() as running:
        yield running


@pytest.fixture
def local_model(server: llama_server.LlamaServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-llama-server-needs-none")
    return MODEL


def test_structured_answers_of_a_real_model_are_read_in_every_round(local_model: str, results: Path) -> None:
    """Issue 21, point 1: a 20-round game with ``--answer-format structured`` has 0 unreadable answers."""
    code, _, err = pdbench("eval", "--model", local_model, "--opponents", "TFT", "--rounds", "20", "--replicates", "1",
                           "--answer-format", "structured", "--temperature", "0",
                           "--results", results, "--run-id", "real")  # fmt: skip
    assert code == 0, err
    calls = sql_json(results, "SELECT outcome, reader, answer_format, action FROM calls WHERE purpose = 'move'")
    assert len(calls) == 20, calls  # one request per round: nothing re-asked
    assert all(c["outcome"] == "ok" and c["reader"] == "structured" for c in calls), calls
    assert all(c["answer_format"] == "structured" and c["action"] in ("C", "D") for c in calls)
    (parsing,) = sql_json(results, "SELECT * FROM model_parsing")
    assert (parsing["unreadable"], parsing["fallback_rounds"], parsing["structured_rounds"]) == (0, 0, 20)


def test_every_round_of_a_free_text_game_is_decided_by_one_reader(local_model: str, results: Path) -> None:
    """Free text, the model its own judge: whatever a 135M model writes, each round's move is recorded with the one
    reader that decided it (parser, judge, re-ask or fallback), and the counts add up to the rounds played."""
    config = results / "free.yaml"
    config.write_text(
        "run: {seed: 3}\nhorizon: {type: fixed, n_rounds: 10}\nexperiment:\n  replicates: 1\n  conditions:\n"
        "    - name: free_vs_ALLD\n"
        f"      agent_a: {{model: {local_model}, temperature: 0.7, parse: {{judge: {local_model}, max_retries: 1}}}}\n"
        "      agent_b: {policy: ALLD}\n"
    )
    code, _, err = pdbench("run", config, "--results", results, "--run-id", "free")
    assert code == 0, err
    readers = sql_json(results, "SELECT reader, count(*) AS n FROM move_readers GROUP BY reader")
    assert sum(r["n"] for r in readers) == 10, readers
    assert {r["reader"] for r in readers} <= {"parser", "judge", "re-ask", "fallback"}
    (parsing,) = sql_json(results, "SELECT * FROM model_parsing")
    counted = sum(parsing[k] for k in ("parser_rounds", "judge_rounds", "reask_rounds", "fallback_rounds"))
    assert counted == parsing["rounds"] == 10
    judged = sql_json(results, "SELECT count(*) AS n FROM calls WHERE purpose = 'judge'")[0]["n"]
    assert parsing["judge_rounds"] <= judged  # a judged round is a judge call that named a move
