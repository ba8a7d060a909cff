"""Observation noise through a run: what each player saw is recorded per round (games of strategies a row a game,
model games a row a round), a model's prompt shows what it saw, and the metrics condition where they say: the
behaviour rates and the memory-one profile on the opponent's move as the player saw it, ``*_played`` on the
moves as played."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from harness.game.horizon import FixedHorizon
from harness.game.rules import PayoffMatrix
from harness.players.strategies import make_spec
from harness.players.strategies.play import play_seeded
from tests.support.cli import pdbench, sql_json

pytestmark = pytest.mark.slow  # one run of ~3 s, shared by the module

CONFIG = """
run: {run_id: seen, seed: 11}
horizon: {type: fixed, n_rounds: 40}
noise: {execution: 0.0, observation: 0.2}
experiment:
  replicates: 3
  conditions:
    - {name: tft, agent_a: {policy: TFT}, agent_b: {policy: TFT}}
    - {name: wsls, agent_a: {policy: WSLS}, agent_b: {policy: RAND}}
    - {name: model, agent_a: {model: mock/tft}, agent_b: {policy: TFT}}
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("seen") / "results"
    config = results.parent / "seen.yaml"
    config.write_text(CONFIG)
    code, _out, err = pdbench("run", config, "--results", results, "--no-cache")
    assert code == 0, err
    return results


def _rounds(results: Path, condition: str) -> dict[int, list[dict[str, object]]]:
    rows = sql_json(
        results,
        "SELECT r.*, g.seed, g.noise, g.observation_noise FROM rounds r JOIN games g USING (run_id, game_id) "
        f"WHERE g.condition = '{condition}' ORDER BY r.game_id, r.round",
    )
    games: dict[int, list[dict[str, object]]] = {}
    for row in rows:
        games.setdefault(int(row["game_id"]), []).append(row)  # type: ignore[call-overload]
    return games


def test_strategy_games_store_what_each_player_saw(results: Path) -> None:
    games = _rounds(results, "tft")
    assert len(games) == 3
    misperceived = 0
    for rows in games.values():
        seed = int(rows[0]["seed"])  # type: ignore[call-overload]
        assert (rows[0]["noise"], rows[0]["observation_noise"]) == (0.0, 0.2)
        # The same game played again from its seed, outside the run: the stored observations are its own.
        m = play_seeded(make_spec("TFT"), make_spec("TFT"), PayoffMatrix(), FixedHorizon(40), 0.0, seed, None, 0.2)
        assert "".join(str(r["action_a"]) for r in rows) == "".join(m.moves_a)
        assert "".join(str(r["observed_a"]) for r in rows) == "".join(m.observed_a)
        assert "".join(str(r["observed_b"]) for r in rows) == "".join(m.observed_b)
        # TFT answers what it saw: its move at t is the opponent's move of t - 1 as it saw it.
        for prev, row in itertools.pairwise(rows):
            assert (row["intended_a"], row["intended_b"]) == (prev["observed_a"], prev["observed_b"])
        misperceived += sum(r["observed_a"] != r["action_b"] or r["observed_b"] != r["action_a"] for r in rows)
    assert misperceived > 0


def test_a_model_is_prompted_with_what_it_saw(results: Path) -> None:
    games = _rounds(results, "model")
    misperceived = 0
    for rows in games.values():
        # mock/tft copies the opponent's last move shown in its prompt: the move as it saw it.
        for prev, row in itertools.pairwise(rows):
            assert row["intended_a"] == prev["observed_a"]
        misperceived += sum(r["observed_a"] != r["action_b"] for r in rows)
    assert misperceived > 0


def test_metrics_condition_on_what_the_player_saw_and_played_rates_on_what_was_played(results: Path) -> None:
    rows = sql_json(
        results,
        "SELECT condition, player, sum(provocations) AS provoked, avg(retaliation_rate) AS retaliation, "
        "avg(retaliation_rate_played) AS retaliation_played FROM player_metrics "
        "WHERE condition IN ('tft', 'model') GROUP BY ALL ORDER BY ALL",
    )
    for row in rows:
        if row["condition"] == "tft" or row["player"] == "b":  # TFT, and mock/tft
            assert row["retaliation"] == 1.0  # it answers every defection it saw ...
            assert row["retaliation_played"] < 1.0  # ... not every defection played
    memory = sql_json(
        results,
        "SELECT sum(c_cc) AS c_cc, sum(n_cc) AS n_cc, sum(c_cd) AS c_cd, sum(c_dc) AS c_dc, sum(n_dc) AS n_dc, "
        "sum(c_dd) AS c_dd, sum(n_cd) AS n_cd, sum(n_dd) AS n_dd "
        "FROM memory_one m JOIN games g USING (run_id, game_id) WHERE g.condition = 'tft'",
    )[0]
    # TFT's memory-one vector on the outcome as it saw it is exactly (1, 0, 1, 0), each outcome met.
    assert memory["c_cc"] == memory["n_cc"] > 0 and memory["c_dc"] == memory["n_dc"] > 0
    assert memory["c_cd"] == memory["c_dd"] == 0 and memory["n_cd"] > 0 and memory["n_dd"] > 0
