"""``--payoff-matrix`` on eval, tournament and evolve: the game played is the one asked for (scores worked out
by hand), it is recorded in the run's stored config as a config file's payoff_matrix would be, and a game that
is not a prisoner's dilemma is warned of as the config warns. ``evolve --payoffs`` (the estimation mode, now
``--payoff-mode``) still works with a warning, and given payoffs says to use ``--payoff-matrix``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import pdbench, sql_json

# T=7, R=4, P=1, S=-2: all four distinct, so a payoff read in the wrong cell shows.
MATRIX = "7,4,1,-2"
STORED = {"C": {"C": [4.0, 4.0], "D": [-2.0, 7.0]}, "D": {"C": [7.0, -2.0], "D": [1.0, 1.0]}}
NOT_A_DILEMMA = "T > R > P > S does not hold (T=1, R=2, P=3, S=4)"


def stored_config(results: Path) -> dict[str, object]:
    (row,) = sql_json(results, "select config_json from runs")
    config = row["config_json"]
    return json.loads(config) if isinstance(config, str) else config  # type: ignore[no-any-return]


def scores(results: Path) -> dict[tuple[str, str], tuple[float, float]]:
    rows = sql_json(results, "select player_a, player_b, score_a, score_b from games")
    return {(r["player_a"], r["player_b"]): (r["score_a"], r["score_b"]) for r in rows}


@pytest.mark.slow  # about 3 s: a model's eval through the engine
def test_eval_plays_and_records_the_matrix(results: Path) -> None:
    code, _out, err = pdbench(
        "eval", "--model", "mock/tft", "--opponents", "ALLD,TFT", "--rounds", "4", "--replicates", "1",
        "--payoff-matrix", MATRIX, "--results", results,
    )  # fmt: skip
    assert code == 0, err
    assert "warning" not in err
    assert stored_config(results)["game"] == {"payoff_matrix": STORED}
    # TFT's moves C,D,D,D against ALLD's D,D,D,D: S + 3P = -2 + 3 = 1 for the model, T + 3P = 10 for ALLD;
    # against TFT, four mutual cooperations: 4R = 16 each.
    assert scores(results) == {("mock/tft", "ALLD"): (1.0, 10.0), ("mock/tft", "TFT"): (16.0, 16.0)}


def test_tournament_plays_a_preset_and_records_it(results: Path) -> None:
    code, _out, err = pdbench(
        "tournament", "--players", "ALLC,ALLD,TFT", "--rounds", "3", "--no-self-play", "--payoff-matrix", "trust",
        "--results", results,
    )  # fmt: skip
    assert code == 0, err
    assert stored_config(results)["game"] == {
        "payoff_matrix": {"C": {"C": [2.0, 2.0], "D": [-1.0, 3.0]}, "D": {"C": [3.0, -1.0], "D": [0.0, 0.0]}}
    }
    # The Evolution of Trust's coins (R=2, S=-1, T=3, P=0) over 3 rounds: ALLC is cheated 3 times (3S, 3T),
    # cooperates with TFT throughout (3R each); TFT is cheated once, then both defect (S + 2P, T + 2P).
    assert scores(results) == {("ALLC", "ALLD"): (-3.0, 9.0), ("ALLC", "TFT"): (6.0, 6.0), ("ALLD", "TFT"): (3.0, -1.0)}


def test_evolve_plays_and_records_the_matrix(results: Path) -> None:
    code, _out, err = pdbench(
        "evolve", "--players", "ALLC,ALLD", "--counts", "1,1", "--generations", "1", "--rounds", "2",
        "--payoff-matrix", MATRIX, "--dynamics", "trust", "--run-id", "ev", "--results", results,
    )  # fmt: skip
    assert code == 0, err
    assert stored_config(results)["payoff_matrix"] == STORED
    table = sql_json(results, "select player, opponent, payoff from payoff_table order by player, opponent")
    # One 2-round match per pair: ALLC-ALLC 2R, ALLC-ALLD 2S, ALLD-ALLC 2T, ALLD-ALLD 2P.
    assert [(r["player"], r["opponent"], r["payoff"]) for r in table] == [
        ("ALLC", "ALLC", 8.0), ("ALLC", "ALLD", -4.0), ("ALLD", "ALLC", 14.0), ("ALLD", "ALLD", 2.0),
    ]  # fmt: skip


@pytest.mark.slow  # three commands, about 2 s
def test_a_game_that_is_not_a_dilemma_is_warned_of_on_each_command(results: Path) -> None:
    runs = [
        ("eval", "--model", "mock/tft", "--opponents", "ALLD", "--rounds", "2", "--replicates", "1", "--dry-run"),
        ("tournament", "--players", "ALLC,ALLD", "--rounds", "2"),
        ("evolve", "--players", "ALLC,ALLD", "--counts", "1,1", "--generations", "1", "--rounds", "2"),
    ]
    for args in runs:
        code, _out, err = pdbench(*args, "--payoff-matrix", "1,2,3,4", "--results", results)
        assert code == 0, err
        text = " ".join(err.split())
        assert f"payoff_matrix: {NOT_A_DILEMMA}" in text, (args, err)
        assert "2R > T + S does not hold (2R=4, T+S=5)" in text


def test_evolve_payoffs_is_the_old_name_of_payoff_mode(results: Path) -> None:
    base = ("evolve", "--players", "ALLC,ALLD", "--counts", "1,1", "--generations", "1", "--rounds", "2")
    code, _out, err = pdbench(*base, "--payoffs", "estimated", "--replicates", "2", "--results", results)
    assert code == 0, err
    assert "warning: --payoffs is now --payoff-mode: read as --payoff-mode estimated" in " ".join(err.split())
    assert stored_config(results)["payoff_mode"] == "estimated"
    for given in ("2,-1,3,0", "trust"):
        code, _out, err = pdbench(*base, "--payoffs", given, "--results", results)
        assert code == 2
        assert f"--payoffs {given}: that is the game's payoffs, which are --payoff-matrix T,R,P,S" in " ".join(
            err.split()
        )
    code, _out, err = pdbench(*base, "--payoffs", "exact", "--payoff-mode", "exact", "--results", results)
    assert code == 2 and "--payoffs is the old name of --payoff-mode" in err


def test_a_suite_fixes_the_payoffs(results: Path) -> None:
    code, _out, err = pdbench(
        "eval", "--suite", "akata2023", "--model", "mock/tft", "--payoff-matrix", "trust", "--results", results
    )
    assert code == 2
    assert "--payoff-matrix" in err and "Traceback" not in err
