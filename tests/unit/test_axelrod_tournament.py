"""PDBench's tournament leaderboard ranks as the Axelrod library ranks.

``tests/fixtures/axelrod_tournament.json`` was written by
``tests/axelrod_reference/generate_tournament_fixture.py`` with axelrod 4.14.0 (200 turns, default
payoffs, self-interactions played): the 17 strategies both libraries have, 100 repetitions
("shared"); the 15 deterministic ones of them ("deterministic"); and ALLC, TFT, GRIM, ALLD, where TFT
and GRIM tie ("ties"). PDBench plays the same tournaments (``tournament_config`` + ``run_experiment``)
and its ``tournament`` and ``matchups`` views are compared with what axelrod.ResultSet said.

Without GTFT and RAND every number is deterministic and must match exactly: scores, order, ties,
wins. With them, the two libraries draw from different random streams, so:

* A matchup cell (mean score per turn of row against column over repetitions) whose standard
  deviation over axelrod's repetitions is 0 is deterministic (e.g. any two deterministic players,
  GTFT against a player that never defects first) and must match exactly. Any other cell must lie
  within Z standard errors of the difference of two independent means: Z * sqrt(2) * sd / sqrt(R).
* A player's median over R repetitions has a standard error se, estimated from its R normalised
  scores in the fixture by McKean & Schrader's order-statistic estimator (x_(R-c+1) - x_(c)) / (2 z),
  z = 1.96, c = round((R+1)/2 - z sqrt(R/4)): it reads the spread of the scores around the median,
  so it holds for the skewed and two-humped scores of players whose game against RAND goes one way
  or the other (HMAJ, SMAJ), where the normal formula sqrt(pi/2) sd / sqrt(R) is too small.
  PDBench's median is an independent draw of the same quantity, so the gap between two players'
  medians in PDBench differs from the fixture's by an error of standard deviation
  sqrt(2 (se_i^2 + se_j^2)). Where the fixture's gap is more than Z of those, PDBench must order the
  pair as axelrod does (a false failure has probability about 3e-5 per pair at Z = 4, if the error
  is normal); closer pairs are not ordered, but every player's median must lie within Z sqrt(2) se
  of axelrod's, and its mean within Z sqrt(2) sd / sqrt(R).

Z = 4 was checked against PDBench seeds 0-39 (not only the one used here): no clear pair was ever
out of order, the largest median deviation was 3.6 of its standard errors, the largest mean
deviation 3.0 and (seeds 0-19) the largest matchup deviation 3.3: as many as a normal error gives
in that many draws.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from harness.config.presets.tournament import tournament_config
from harness.engine.runner import run_experiment
from harness.game.rules import PayoffMatrix
from harness.players.strategies import STRATEGIES
from harness.players.strategies.titfortat import default_generosity
from harness.store.catalog import open_run

# The tournaments are played once per module (`played`, about 7 s): its tests stay on one worker, to play them once.
pytestmark = pytest.mark.xdist_group("axelrod-tournament")

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "axelrod_tournament.json").read_text())
SHARED = ["ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "ALT", "RAND", "TTFT", "HTFT", "BULLY",
          "GRADUAL", "SMAJ", "HMAJ", "PROBER"]  # fmt: skip
Z = 4.0
EXACT = 1e-12  # the same sums in another order: a few ulps at most
SEED = 2025  # PDBench's own seed; axelrod's streams are not PDBench's, whatever the seed


def ranked(name: str) -> list[dict[str, Any]]:
    return FIXTURE["tournaments"][name]["ranked"]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, dict], dict[tuple[str, str], float]]]:
    """Each fixture tournament played by PDBench: its leaderboard by player and its matchup cells."""
    out = {}
    folder = tmp_path_factory.mktemp("axelrod")
    for name, t in FIXTURE["tournaments"].items():
        config = tournament_config(t["players"], rounds=FIXTURE["turns"], replicates=t["repetitions"], seed=SEED)
        assert run_experiment(config, results_dir=folder, run_id=name).status == "complete"
        with open_run(folder, name) as cat:
            board = {r["player"]: r for r in cat.records("SELECT * FROM tournament WHERE run_id = ?", [name])}
            cells = {(r["player"], r["opponent"]): r["mean_payoff_per_round"]
                     for r in cat.records("SELECT * FROM matchups WHERE run_id = ?", [name])}  # fmt: skip
        out[name] = (board, cells)
    return out


def median_se(scores: list[float], z: float = 1.959963984540054) -> float:
    """McKean-Schrader standard error of the median of ``scores``."""
    x, n = sorted(scores), len(scores)
    c = round((n + 1) / 2 - z * math.sqrt(n / 4))
    return (x[n - c] - x[c - 1]) / (2 * z)


def competition_ranks(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Standard competition ranks of axelrod's ranked list, neighbours within 1e-9 sharing a rank."""
    ranks: dict[str, int] = {}
    for i, row in enumerate(rows):
        tied = i > 0 and rows[i - 1]["median_score_per_turn"] - row["median_score_per_turn"] <= 1e-9
        ranks[row["player"]] = ranks[rows[i - 1]["player"]] if tied else i + 1
    return ranks


# Strategies with an Axelrod twin added after this fixture was made, each matched with axelrod by a fixture of its own.
CHECKED_APART = {"EXTORT2": "axelrod_zd_extort2.json (tests/unit/strategies/test_zerodeterminant.py)"}


def test_the_fixture_is_the_17_shared_strategies_playing_with_the_same_parameters() -> None:
    assert sorted(FIXTURE["strategies"]) == sorted(SHARED)
    assert FIXTURE["strategies"] == {
        n: cls.axelrod_name for n, cls in STRATEGIES.items() if cls.axelrod_name and n not in CHECKED_APART
    }
    assert FIXTURE["stochastic"] == [n for n in SHARED if STRATEGIES[n].stochastic] == ["GTFT", "RAND"]
    assert FIXTURE["axelrod_version"] == "4.14.0"
    game = PayoffMatrix()
    assert FIXTURE["game"] == {"R": game.R, "S": game.S, "T": game.T, "P": game.P}
    # GTFT's generosity for this game and RAND's p, exactly as axelrod played them.
    assert default_generosity(game) == FIXTURE["parameters"]["GTFT"]["p"] == 1 / 3 + 2**-54  # 1 - 2/3, an ulp over 1/3
    assert STRATEGIES["RAND"].Params().p == FIXTURE["parameters"]["RAND"]["p"] == 0.5  # type: ignore[attr-defined]
    assert FIXTURE["tournaments"]["shared"]["players"] == SHARED
    assert FIXTURE["tournaments"]["deterministic"]["players"] == [n for n in SHARED if n not in ("GTFT", "RAND")]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["deterministic", "ties"])
def test_a_deterministic_tournament_matches_axelrod_number_for_number(name: str, played: dict) -> None:
    board, _ = played[name]
    rows, reps = ranked(name), FIXTURE["tournaments"][name]["repetitions"]
    assert set(board) == {r["player"] for r in rows}
    assert {p: r["rank"] for p, r in board.items()} == competition_ranks(rows)
    for r in rows:
        mine = board[r["player"]]
        assert mine["median_score_per_turn"] == pytest.approx(r["median_score_per_turn"], abs=EXACT), r["player"]
        assert mine["mean_score_per_turn"] == pytest.approx(r["mean_score_per_turn"], abs=EXACT), r["player"]
        assert mine["wins"] == r["wins"], r["player"]
        assert (mine["games"], mine["replicates"]) == ((len(rows) - 1) * reps, reps)


@pytest.mark.slow
def test_tied_players_share_the_rank_axelrod_orders_them_by_entry(played: dict) -> None:
    # ALLD 2.3467 > TFT = GRIM 2.3317 > ALLC 2.0: axelrod lists TFT before GRIM (entered first); PDBench ranks
    # both 2nd and no one 3rd.
    assert [r["player"] for r in ranked("ties")] == ["ALLD", "TFT", "GRIM", "ALLC"]
    board, _ = played["ties"]
    assert [board[p]["rank"] for p in ("ALLD", "TFT", "GRIM", "ALLC")] == [1, 2, 2, 4]


def test_the_shared_tournament_matchups_match_axelrod(played: dict) -> None:
    _, cells = played["shared"]
    t = FIXTURE["tournaments"]["shared"]
    names, reps = t["players"], t["repetitions"]
    exact = 0
    for i, row in enumerate(names):
        for j, col in enumerate(names):
            expected, sd = t["payoff_matrix"][i][j], t["payoff_stddevs"][i][j]
            if not STRATEGIES[row].stochastic and not STRATEGIES[col].stochastic:
                assert sd <= EXACT, (row, col)  # the fixture agrees these are deterministic
            if sd <= EXACT:  # numpy's std of equal values may be a few ulps, not 0
                exact += 1
                assert cells[(row, col)] == pytest.approx(expected, abs=EXACT), (row, col)
            else:
                sample_sd = sd * math.sqrt(reps / (reps - 1))  # numpy's std is the population one
                tolerance = Z * math.sqrt(2) * sample_sd / math.sqrt(reps)
                assert abs(cells[(row, col)] - expected) <= tolerance, (row, col, cells[(row, col)], expected)
    # Random are RAND's 33 cells and 12 of GTFT's (against ALLD, ALT, BULLY, HMAJ, PROBER, STFT, both ways).
    assert exact == 17 * 17 - 45


@pytest.mark.slow
def test_the_shared_tournament_ranks_in_axelrod_order_where_the_order_is_clear(played: dict) -> None:
    board, _ = played["shared"]
    rows, reps = ranked("shared"), FIXTURE["tournaments"]["shared"]["repetitions"]
    sd = {r["player"]: statistics.stdev(r["normalised_scores"]) for r in rows}
    se = {r["player"]: median_se(r["normalised_scores"]) for r in rows}
    for r in rows:
        p = r["player"]
        assert abs(board[p]["median_score_per_turn"] - r["median_score_per_turn"]) <= Z * math.sqrt(2) * se[p], p
        mean_tolerance = Z * math.sqrt(2) * sd[p] / math.sqrt(reps)
        assert abs(board[p]["mean_score_per_turn"] - r["mean_score_per_turn"]) <= mean_tolerance, p
        assert (board[p]["games"], board[p]["replicates"]) == (16 * reps, reps)
        if len(set(r["wins_per_repetition"])) == 1:  # the same wins in each of axelrod's repetitions
            assert board[p]["wins"] == r["wins"], p

    steady = [r["player"] for r in rows if len(set(r["wins_per_repetition"])) == 1]
    assert steady == ["GRADUAL", "TFT", "GTFT", "GRIM", "TF2T", "HTFT", "TTFT", "ALLC", "ALLD"]

    def clear(a: dict[str, Any], b: dict[str, Any]) -> bool:
        margin = Z * math.sqrt(2 * (se[a["player"]] ** 2 + se[b["player"]] ** 2))
        return a["median_score_per_turn"] - b["median_score_per_turn"] > margin

    pairs = [(a, b) for i, a in enumerate(rows) for b in rows[i + 1 :] if clear(a, b)]
    for a, b in pairs:
        assert board[a["player"]]["rank"] < board[b["player"]]["rank"], (a["player"], b["player"])
    neighbours = list(itertools.pairwise(rows))
    # With this fixture (100 repetitions), 12 of the 16 adjacent pairs and 132 of the 136 pairs are clear; the
    # close ones are GTFT-SMAJ, SMAJ-GRIM, HMAJ-ALT and ALLD-RAND.
    assert len(pairs) == 132 and sum(clear(a, b) for a, b in neighbours) == 12
    close = [(a["player"], b["player"]) for a, b in neighbours if not clear(a, b)]
    assert close == [("GTFT", "SMAJ"), ("SMAJ", "GRIM"), ("HMAJ", "ALT"), ("ALLD", "RAND")]
