"""Every seat of every game is its own draw of the model (issue: a referee found two seats sharing one answer).

The sample identity of a request is (condition, replicate, seat) on top of provider, model, base URL,
messages and sampling parameters, never the run id: so two seats that see the same prompt get two
answers, a model facing nine opponents is asked round 1 nine times, and the same experiment run
again under another run id is answered from the cache without a request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.calls.cache.cache import ResponseCache
from harness.config import parse_experiment
from harness.config.engine_options import EngineOptions
from harness.engine.runner import run_experiment
from harness.store.catalog import Catalog
from tests.integration.test_engine_server import server  # noqa: F401  (the loopback server fixture)
from tests.support.cli import pdbench, sql_json
from tests.support.llm_server import FakeLLMServer, sequence


def self_play(model: str, rounds: int, replicates: int = 1, seed: int = 0) -> dict:
    agent = {"model": model}
    return {
        "run": {"seed": seed},
        "horizon": {"n_rounds": rounds},
        "experiment": {"replicates": replicates, "conditions": [{"name": "self", "agent_a": agent, "agent_b": agent}]},
    }


@pytest.mark.slow
def test_mock_self_play_at_one_half_disagrees_in_about_half_the_rounds(tmp_path: Path) -> None:
    """Two mock/random?p=0.5 players are independent coins: they disagree with probability 1/2 per round.
    Over 400 rounds the count is Binomial(400, 1/2): mean 200, sd 10; 160..240 is a 4-sd band. Before
    the fix both seats were handed one answer and never disagreed."""
    config = parse_experiment(self_play("mock/random?p=0.5", rounds=100, replicates=4))
    run_experiment(config, results_dir=tmp_path, run_id="coins", engine=EngineOptions(cache_path=None))
    with Catalog(tmp_path) as cat:
        ((n, disagree),) = cat.query(
            "SELECT count(*), count(*) FILTER (WHERE intended_a <> intended_b) FROM rounds WHERE run_id = 'coins'"
        )[1]
        # Each seat's own moves are fair coins too (4-sd band around 200 of 400).
        ((coop_a, coop_b),) = cat.query(
            "SELECT count(*) FILTER (WHERE intended_a = 'C'), count(*) FILTER (WHERE intended_b = 'C') FROM rounds"
        )[1]
    assert n == 400
    assert 160 <= disagree <= 240, disagree
    assert 160 <= coop_a <= 240 and 160 <= coop_b <= 240


def _twice(config: dict, tmp_path: Path) -> tuple[list[tuple], dict[str, list[tuple]]]:
    """Run ``config`` as run ``first``, then as ``second`` on the same cache: the second's (calls, cached) and
    both runs' moves."""
    experiment = parse_experiment(config)
    engine = EngineOptions(cache_path=tmp_path / "cache.sqlite")
    run_experiment(experiment, results_dir=tmp_path, run_id="first", engine=engine)
    run_experiment(experiment, results_dir=tmp_path, run_id="second", engine=engine)
    with Catalog(tmp_path) as cat:
        second = cat.query("SELECT count(*), count(*) FILTER (WHERE cached) FROM calls WHERE run_id = 'second'")[1]
        moves = {
            run: cat.query(
                f"SELECT string_agg(intended_a || intended_b, '' ORDER BY game_id, round) FROM rounds "
                f"WHERE run_id = '{run}'"
            )[1]
            for run in ("first", "second")
        }
    return second, moves


@pytest.mark.slow
def test_the_same_experiment_run_again_is_answered_from_the_cache(
    server: FakeLLMServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Another run id, same experiment: every answer comes from the cache, and the games are identical."""
    server.responder = sequence(["C", "D", "D", "C", "C"])
    second, moves = _twice(self_play("openai/test-model", rounds=20, replicates=2), tmp_path)
    assert second == [(80, 80)] and server.count(status=200) == 80
    assert moves["first"] == moves["second"]


def test_a_mock_model_is_computed_again_and_never_fills_the_shared_cache(tmp_path: Path) -> None:
    """Issue 19: mock answers are computed offline, free: they are neither cached nor looked up (a run of 100,000
    mock games filled the shared cache with 121 MB), and the same experiment again plays the same games."""
    second, moves = _twice(self_play("mock/random?p=0.5", rounds=20, replicates=2), tmp_path)
    assert second == [(80, 0)]
    assert moves["first"] == moves["second"]
    assert not (tmp_path / "cache.sqlite").exists()


@pytest.mark.slow
def test_self_play_against_a_server_sends_one_request_per_model_move(
    server: FakeLLMServer,  # noqa: F811
    tmp_path: Path,
    results: Path,
) -> None:
    """Round 1 of self-play shows both seats the same prompt; each seat must still be asked (2 rounds x 2 seats)."""
    config = tmp_path / "self.yaml"
    config.write_text(
        "run: {run_id: selfplay}\nhorizon: {n_rounds: 3}\nexperiment:\n  replicates: 2\n  conditions:\n"
        "    - {name: self, agent_a: {model: openai/test-model}, agent_b: {model: openai/test-model}}\n"
    )
    code, _, err = pdbench("run", config, "--results", results)
    assert code == 0, err
    assert server.count(provider="openai") == 3 * 2 * 2
    calls = sql_json(results, "select player, round, cached, request_json from calls where round = 1")
    assert len(calls) == 4 and not any(c["cached"] for c in calls)
    # The two seats' round-1 prompts are the same text; only their sample identity (and seed) tells them apart.
    firsts = [c for c in calls if '"replicate": 0' in c["request_json"]]
    assert len(firsts) == 2 and {c["player"] for c in firsts} == {"a", "b"}


@pytest.mark.slow
def test_eval_asks_round_one_separately_for_every_opponent(server: FakeLLMServer, results: Path) -> None:  # noqa: F811
    """A model's round-1 answer is not shared across opponents: each condition is its own draw."""
    opponents = "ALLC,ALLD,TFT,GRIM"
    code, _, err = pdbench("eval", "--model", "openai/test-model", "--opponents", opponents, "--rounds", "2",
                           "--replicates", "1", "--results", results, "--run-id", "panel")  # fmt: skip
    assert code == 0, err
    round_one = [r for r in server.requests if r.provider == "openai" and "round 1 of 2" in str(r.body["messages"])]
    assert len(round_one) == 4
    assert sql_json(results, "select count(*) as n from calls where round = 1 and not cached")[0]["n"] == 4


def test_identical_prompts_of_two_seats_are_two_cache_entries(
    server: FakeLLMServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The cache holds one answer per draw: a self-play run of r rounds stores 2 r answers, not r."""
    config = parse_experiment(self_play("openai/test-model", rounds=5))
    run_experiment(config, results_dir=tmp_path, run_id="s", engine=EngineOptions(cache_path=tmp_path / "c.sqlite"))
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert cache.stats().entries == 10
