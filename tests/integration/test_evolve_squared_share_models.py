"""``pdbench evolve --dynamics squared_share`` with a language model served by the loopback server: each phase's
model matches are one recorded run (``<run id>_phase<k>``) whose requests carry the model's settings and state the
stop probability, never the length; the same command under another run id replays the same population from the
response cache without a request; the same run id started again after it stopped continues it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.store.evolution_writer import read_evolution
from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, serve_to_the_cli
from tests.support.model_settings import PAYNE_SETTINGS as SETTINGS


def reasoned(provider: str, request: dict[str, object]) -> str:
    """A reply with reasoning and the move alone on the last line: C in odd-length prompts, D in even ones (a
    function of the request only, so the same request gets the same reply)."""
    messages = request.get("messages")
    return "Thinking it over.\n" + ("C" if len(str(messages)) % 2 else "D")


@pytest.mark.slow
def test_model_matches_are_played_each_phase_and_replayed_from_the_cache(
    llm_server: FakeLLMServer, results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_to_the_cli(monkeypatch, llm_server)
    llm_server.configure(responder=reasoned)
    file = tmp_path / "models.yaml"
    file.write_text(SETTINGS)
    args = ["evolve", "--players", "TFT,ALLD,openai/test-model", "--counts", "2,2,2", "--dynamics", "squared_share",
            "--stop-prob", "0.5", "--max-rounds", "4", "--generations", "1", "--seed", "5",
            "--model-settings", file, "--results", results]  # fmt: skip
    code, _, err = pdbench(*args, "--run-id", "one")
    assert code == 0, err
    sent = [r.body for r in llm_server.requests if r.provider == "openai"]
    games = sql_json(results, "SELECT run_id, rounds_played, player_a, player_b FROM games ORDER BY run_id")
    assert {g["run_id"] for g in games} <= {"one_phase0", "one_phase1"} and games
    seats = sum((g["player_a"] == "openai/test-model") + (g["player_b"] == "openai/test-model") for g in games)
    # one request a model move (no re-ask), each recorded with its phase run
    moves = sum(g["rounds_played"] * ((g["player_a"] == "openai/test-model") + (g["player_b"] == "openai/test-model"))
                for g in games)  # fmt: skip
    [calls] = sql_json(results, "SELECT count(*) AS n, count(DISTINCT run_id) AS runs FROM calls")
    assert len(sent) == moves == calls["n"] and calls["runs"] == len({g["run_id"] for g in games})
    assert seats >= 1 and all((b["temperature"], b["max_tokens"]) == (0.7, 1000) for b in sent)
    system = [b["messages"][0]["content"] for b in sent]
    assert all("stops after any given round is 50%" in text and "The match lasts" not in text for text in system)
    llm_server.reset()
    code, _, err = pdbench(*args, "--run-id", "two")
    assert code == 0, err
    assert [r for r in llm_server.requests if r.provider == "openai"] == []  # all from the response cache
    _, one = read_evolution(results, "one")
    _, two = read_evolution(results, "two")
    assert one.population.tolist() == two.population.tolist()
    scores = "SELECT generation, player, points, rounds FROM phase_scores WHERE run_id = '{}' ORDER BY 1, 2"
    assert sql_json(results, scores.format("one")) == sql_json(results, scores.format("two"))


@pytest.mark.slow
def test_the_same_command_continues_a_run_that_stopped_and_refuses_a_complete_one(results: Path) -> None:
    from tests.unit.evolution.test_squared_share_models import StopAfter, play

    assert play(results, "ev", stop=StopAfter(3)).status == "interrupted"  # stopped in phase 0's run
    args = ["evolve", "--players", "TFT,ALLD,mock/random", "--counts", "2,2,2", "--dynamics", "squared_share",
            "--stop-prob", "0.5", "--max-rounds", "4", "--generations", "1", "--seed", "11",
            "--results", results, "--run-id", "ev"]  # fmt: skip
    code, _, err = pdbench(*args)
    assert code == 0, err
    assert "stopped before its end: playing it again" in " ".join(err.split())
    [run] = sql_json(results, "SELECT status FROM runs WHERE run_id = 'ev'")
    assert run["status"] == "complete"
    code, _, err = pdbench(*args)
    assert code != 0 and "already exists" in err  # a complete run is not played again without --overwrite


@pytest.mark.slow
def test_max_cost_is_the_whole_evolutions_budget_not_each_phase_runs(
    llm_server: FakeLLMServer, results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_to_the_cli(monkeypatch, llm_server)
    # Everyone cooperates, so every strategy scores alike and the model keeps its agents into phase 1.
    llm_server.configure(responder=lambda provider, request: "Thinking it over.\nC")
    settings, prices = tmp_path / "models.yaml", tmp_path / "prices.yaml"
    settings.write_text(SETTINGS)
    prices.write_text("openai/*: {input: 1000.0, output: 1000.0}\n")
    args = ["evolve", "--players", "TFT,ALLC,openai/test-model", "--counts", "2,2,2", "--dynamics", "squared_share",
            "--stop-prob", "0.5", "--max-rounds", "4", "--generations", "1", "--seed", "5", "--no-cache",
            "--model-settings", settings, "--prices", prices, "--results", results]  # fmt: skip
    code, _, err = pdbench(*args, "--run-id", "free")
    assert code == 0, err
    cost = (
        "SELECT run_id, sum(cost_usd) AS usd, max(cost_usd) AS most FROM calls WHERE run_id LIKE '{}_phase%' GROUP BY 1"
    )
    free = {r["run_id"]: r for r in sql_json(results, cost.format("free"))}
    phase0, phase1 = free["free_phase0"]["usd"], free["free_phase1"]["usd"]
    # Enough for phase 0 and half of phase 1. A budget given to each phase run whole would let phase 1 finish too
    # (it costs less than this), so the evolution would end complete.
    cap = phase0 + phase1 / 2
    assert phase1 < cap

    code, _, err = pdbench(*args, "--run-id", "capped", "--max-cost", f"{cap:.6f}")

    assert code != 0 and "Traceback" not in err, err
    assert f"the evolution's budget, --max-cost {float(f'{cap:.6f}'):g}, is spent" in " ".join(err.split()), err
    assert "again with a higher --max-cost" in " ".join(err.split())
    runs = {
        r["run_id"]: r for r in sql_json(results, "SELECT run_id, status, error FROM runs WHERE run_id LIKE 'capped%'")
    }
    assert runs["capped_phase0"]["status"] == "complete"
    assert runs["capped_phase1"]["status"] == "interrupted" and "cost limit" in runs["capped_phase1"]["error"]
    assert runs["capped"]["status"] != "complete"
    spent = sum(r["usd"] for r in sql_json(results, cost.format("capped")))
    most = max(r["most"] for r in free.values())
    assert phase0 < spent <= cap + 8 * most  # at most the calls already in flight when the limit was reached
