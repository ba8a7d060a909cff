"""``pdbench analyze`` as a user runs it: on a tournament and on an evolution run, its table read game by game
(checked against the ``matchups`` view), every figure with its bootstrap interval, the same seed giving the same
output, and bad input refused in one paragraph before anything runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.analysis.evolutionary import MeasuredTable, Population, Process, figures
from tests.support.cli import pdbench, sql_json

PLAYERS = ["ALLD", "TFT", "WSLS"]  # sorted: the analysis orders players by label


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("analyze")
    code, _, err = pdbench("tournament", "--players", ",".join(PLAYERS), "--rounds", "20", "--replicates", "6",
                           "--noise", "0.1", "--seed", "3", "--results", results, "--run-id", "t3")  # fmt: skip
    assert code == 0, err
    return results


def _analyze(results: Path, *args: object) -> dict[str, Any]:
    code, out, err = pdbench("analyze", "t3", "--results", results, "--format", "json", *args)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.mark.slow
def test_the_table_is_the_matchups_views_and_every_figure_follows_from_it(tournament: Path) -> None:
    d = _analyze(tournament, "--bootstrap", "200", "--population", "20", "--dynamics", "fermi", "--beta", "0.5")
    assert d["players"] == PLAYERS and d["bootstrap"] == 200 and "95% percentile intervals over 200" in d["interval"]
    matchups = sql_json(tournament, "select player, opponent, mean_payoff_per_round from matchups")
    view = {(r["player"], r["opponent"]): r["mean_payoff_per_round"] for r in matchups}
    table = np.array([[view[(a, b)] for b in PLAYERS] for a in PLAYERS])
    for cell in d["payoffs"]:
        assert cell["estimate"] == pytest.approx(view[(cell["player"], cell["opponent"])], abs=1e-12)
        assert cell["low"] <= cell["estimate"] <= cell["high"]
    f = figures(table, Population(Process.fermi, 0.5, 20), replicator=False)
    for cell in d["fixation"]:
        i, j = PLAYERS.index(cell["player"]), PLAYERS.index(cell["opponent"])
        assert cell["estimate"] == pytest.approx(f.rho[i, j], rel=1e-12)
        assert cell["invades"] == (f.rho[i, j] > 1 / 20) and 0 <= cell["invades_share"] <= 1
        assert cell["low"] <= cell["high"]
    assert sum(s["estimate"] for s in d["stationary"]) == pytest.approx(1.0)
    assert [s["estimate"] for s in d["stationary"]] == pytest.approx(f.stationary.tolist(), rel=1e-12)
    assert len(d["gradients"]) == 3 and all(len(g["estimate"]) == 19 for g in d["gradients"])
    assert any(r["support"] == ["ALLD"] for r in d["rest_points"])


@pytest.mark.slow
def test_the_same_seed_gives_the_same_intervals_and_another_seed_others(tournament: Path) -> None:
    first, again = (_analyze(tournament, "--bootstrap", "50", "--seed", "1") for _ in range(2))
    other = _analyze(tournament, "--bootstrap", "50", "--seed", "2")
    strip = lambda d: {k: v for k, v in d.items() if k != "cpu_seconds"}  # noqa: E731
    assert strip(first) == strip(again)
    assert first["stationary"] != other["stationary"]


@pytest.mark.slow
def test_the_table_and_csv_outputs(tournament: Path) -> None:
    code, out, err = pdbench("analyze", "t3", "--results", tournament, "--bootstrap", "20", "--width", "100")
    assert code == 0, err
    for heading in ("Long-run share", "Fixation of one invader", "Gradient of selection", "Replicator rest points"):
        assert heading in out
    assert "95% percentile intervals over 20 bootstrap draws" in " ".join(out.split())
    code, out, err = pdbench("analyze", "t3", "--results", tournament, "--bootstrap", "20", "--format", "csv")
    assert code == 0, err
    assert out.splitlines()[0] == "figure,player,opponent,k,estimate,low,high,share"
    assert sum(line.startswith("fixation,") for line in out.splitlines()) == 6


def test_a_bootstrap_draw_resamples_games_keeping_both_cells_of_a_game_together() -> None:
    rng = np.random.default_rng(0)
    values = rng.uniform(0, 4, 30)
    games = {(0, 0): np.column_stack([values, values]), (1, 1): np.ones((3, 2)),
             (0, 1): np.column_stack([values, 4 - values])}  # fmt: skip
    table = MeasuredTable(("A", "B"), games, "test")
    for _ in range(20):
        draw = table.resample(rng)
        assert draw[0, 1] + draw[1, 0] == pytest.approx(4.0)  # a_AB and a_BA from the same games
        assert draw[1, 1] == 1.0
        assert values.min() <= draw[0, 0] <= values.max()


@pytest.mark.slow
def test_an_evolution_of_deterministic_strategies_has_an_exact_table(results: Path) -> None:
    code, _, err = pdbench("evolve", "--players", "TFT,ALLD,WSLS", "--counts", "4,4,4", "--generations", "5",
                           "--results", results, "--run-id", "ev")  # fmt: skip
    assert code == 0, err
    code, out, err = pdbench("analyze", "ev", "--results", results, "--format", "json", "--bootstrap", "10")
    assert code == 0, err
    d = json.loads(out)
    assert "exact table" in d["origin"] and "single game" in d["interval"]
    tft_alld = next(c for c in d["payoffs"] if (c["player"], c["opponent"]) == ("TFT", "ALLD"))
    assert tft_alld["estimate"] == pytest.approx((0 + 199) / 200)  # S then P for 199 rounds of the default 200
    assert all(c["low"] == c["estimate"] == c["high"] for c in d["fixation"])


def _refused(*args: object) -> str:
    code, out, err = pdbench("analyze", *args)
    assert code != 0 and out == "", out
    assert "Traceback" not in err
    return " ".join(err.split())


@pytest.mark.slow
def test_bad_input_is_refused_in_one_paragraph_before_anything_runs(tournament: Path, results: Path) -> None:
    assert "smaller than the 3 players" in _refused("t3", "--results", tournament, "--population", "2")
    assert "at least one bootstrap draw" in _refused("t3", "--results", tournament, "--bootstrap", "0")
    assert "--beta does not apply to --dynamics moran" in _refused("t3", "--results", tournament, "--beta", "2")
    lowest = sql_json(tournament, "select min(payoff_total / rounds) as x from player_games")[0]["x"]
    assert lowest < 1  # so that a w above 1 / (1 - lowest) makes the fitness of that game's payoff negative
    assert "must be positive" in _refused("t3", "--results", tournament, "--selection", 1.01 / (1 - lowest))
    assert "'tournament'" not in _refused("t3", "--results", tournament, "--dynamics", "replicator")
    code, _, err = pdbench("plot", "t3", "--kind", "stationary", "--out", results / "s.png", "--results", tournament,
                           "--bootstrap", "0")  # fmt: skip
    assert code != 0 and "at least one bootstrap draw" in err and not (results / "s.png").exists()
    code, _, err = pdbench("tournament", "--players", "TFT,ALLD", "--no-self-play", "--rounds", "5",
                           "--results", results, "--run-id", "noself")  # fmt: skip
    assert code == 0, err
    message = _refused("noself", "--results", results)
    assert "has no payoff table" in message and "ALLD against ALLD" in message and "pdbench tournament" in message
    code, _, err = pdbench("evolve", "--players", "TFT,ALLD", "--counts", "3,3", "--generations", "3", "--noise",
                           "0.1", "--results", results, "--run-id", "noisy")  # fmt: skip
    assert code == 0, err
    assert "cannot be resampled" in _refused("noisy", "--results", results)


@pytest.mark.slow
def test_an_evolution_with_a_model_is_analysed_on_the_games_of_its_payoff_run(results: Path) -> None:
    code, _, err = pdbench("evolve", "--players", "TFT,ALLD,mock/tft", "--counts", "3,3,3", "--generations", "3",
                           "--replicates", "3", "--rounds", "10", "--results", results, "--run-id", "evm")  # fmt: skip
    assert code == 0, err
    code, out, err = pdbench("analyze", "evm", "--results", results, "--format", "json", "--bootstrap", "10")
    assert code == 0, err
    d = json.loads(out)
    assert d["players"] == ["TFT", "ALLD", "mock/tft"]  # the evolution's order
    assert "the games of run evm_payoffs" in d["origin"] and "18 complete games" in d["origin"]  # 6 pairs x 3
