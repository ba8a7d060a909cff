"""The metric views on hand-computed sequences, edge cases included."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config.presets.tournament import tournament_config
from harness.engine.runner import run_experiment
from harness.store.catalog import Catalog
from tests.conftest import write_games
from tests.support.logs import write_logs


def metrics(cat, game_id: int, player: str) -> dict:  # type: ignore[no-untyped-def]
    rows = cat.records("SELECT * FROM player_metrics WHERE game_id = ? AND player = ?", [game_id, player])
    assert len(rows) == 1
    return rows[0]


def test_player_metrics_on_a_hand_computed_game(results: Path) -> None:
    # round:  1   2   3   4   5
    # A:      C   C   D   D   C
    # B:      C   D   D   C   D
    # payoff: 3/3 0/5 1/1 5/0 0/5  -> A 9, B 14
    cat = write_games(results, "hand", [("CCDDC", "CDDCD")], k=2, threshold=0.25)
    a, b = metrics(cat, 0, "a"), metrics(cat, 0, "b")
    assert (a["player_name"], a["opponent_name"], b["player_name"]) == ("TFT", "ALLD", "ALLD")
    assert a["rounds"] == 5 and a["payoff_total"] == 9 and b["payoff_total"] == 14
    assert a["payoff_per_round"] == pytest.approx(1.8)
    assert a["cooperation_rate"] == pytest.approx(0.6) and b["cooperation_rate"] == pytest.approx(0.4)
    # A: B defected in rounds 2, 3 (and 5, which has no next round) -> A at 3, 4 plays D, D.
    assert a["retaliation_rate"] == 1.0 and a["forgiveness_rate"] == 0.0
    # B: A defected in rounds 3, 4 -> B at 4, 5 plays C, D.
    assert b["retaliation_rate"] == 0.5 and b["forgiveness_rate"] == 0.5
    assert a["exploitability_gap"] == 5 and b["exploitability_gap"] == -5
    # Windows of k=2: rounds 1-2 have 3 of 4 C (0.75); rounds 2-3 have 1 of 4 (0.25 <= 0.25).
    assert a["time_to_collapse"] == 2 and b["time_to_collapse"] == 2


def test_no_opponent_defection_gives_null_retaliation_and_forgiveness(results: Path) -> None:
    cat = write_games(results, "nice", [("CCCC", "CCCC")], k=2)
    a = metrics(cat, 0, "a")
    assert a["retaliation_rate"] is None and a["forgiveness_rate"] is None
    assert a["cooperation_rate"] == 1.0 and a["time_to_collapse"] is None


def test_a_game_shorter_than_k_never_collapses(results: Path) -> None:
    cat = write_games(results, "short", [("DDD", "DDD"), ("DDDDD", "DDDDD")], k=5)
    assert metrics(cat, 0, "a")["time_to_collapse"] is None
    assert metrics(cat, 1, "a")["time_to_collapse"] == 1


def test_collapse_uses_the_first_qualifying_window_and_the_threshold(results: Path) -> None:
    # joint C per round: 2 2 1 0 0 0 1 ; k=3, threshold 0.2 -> need <= 1.2 C in 3 rounds
    a, b = "CCCDDDC", "CCDDDDD"
    cat = write_games(results, "collapse", [(a, b)], k=3, threshold=0.2)
    # window 1-3: 5 C; 2-4: 3; 3-5: 1 (<= 1.2) -> round 3
    assert metrics(cat, 0, "a")["time_to_collapse"] == 3


def test_cooperation_over_time_is_cumulative(results: Path) -> None:
    cat = write_games(results, "cot", [("CCDDC", "CDDCD")])
    rows = cat.records(
        "SELECT round, action, cooperation_rate, cooperation_rate_played FROM cooperation_over_time "
        "WHERE player = 'a' ORDER BY round"
    )
    assert [r["action"] for r in rows] == list("CCDDC")
    assert [r["cooperation_rate"] for r in rows] == pytest.approx([1, 1, 2 / 3, 0.5, 0.6])
    assert [r["cooperation_rate_played"] for r in rows] == pytest.approx([1, 1, 2 / 3, 0.5, 0.6])


def test_metrics_span_runs(results: Path) -> None:
    write_games(results, "one", [("CC", "CC")]).close()
    cat = write_games(results, "two", [("DD", "DD")])
    rows = cat.records("SELECT run_id, AVG(cooperation_rate) AS c FROM player_metrics GROUP BY run_id ORDER BY run_id")
    assert [(r["run_id"], r["c"]) for r in rows] == [("one", 1.0), ("two", 0.0)]


def test_leaderboard_averages_per_game_rates_so_long_games_do_not_weigh_more(results: Path) -> None:
    # TFT (seat a): a 1-round game at 3 points/round and a 3-round game at 1 point/round.
    cat = write_games(results, "lengths", [("C", "C"), ("DDD", "DDD")])
    row = cat.records("SELECT * FROM tournament WHERE player = 'TFT'")[0]
    assert row["mean_payoff_per_round"] == pytest.approx(2.0)  # not 6 / 4
    assert row["mean_total"] == pytest.approx(3.0)
    assert row["cooperation_rate"] == pytest.approx(0.5)
    pm = cat.records("SELECT AVG(payoff_per_round) AS p FROM player_metrics WHERE player = 'a'")[0]
    assert pm["p"] == pytest.approx(row["mean_payoff_per_round"])


# --- behaviour on chosen moves, payoffs on played moves (see tests/support/logs.py for the letters) ---
def test_rates_read_the_choices_and_leave_fallback_rounds_out(results: Path) -> None:
    # round:     1  2  3  4
    # A chose:   C  (fallback D)  C  C     -> played C D C C
    # B played:  D  C  D  C
    cat = write_logs(results, "flags", [("CXCC", "DCDC")])
    a = metrics(cat, 0, "a")
    assert (a["rounds"], a["rounds_chosen"], a["fallback_rounds"]) == (4, 3, 1)
    # chosen: C, C, C in rounds 1, 3, 4 -> 1.0; played: 3 C of 4.
    assert a["cooperation_rate"] == 1.0 and a["cooperation_rate_played"] == 0.75
    # B defected in rounds 1 and 3. Round 2 (after the first) is A's fallback round: left out. In round 4
    # A chose C -> retaliation 0/1, forgiveness 1/1. Played: D in round 2, C in round 4 -> 1/2.
    assert (a["retaliation_rate"], a["forgiveness_rate"], a["provocations"]) == (0.0, 1.0, 1)
    assert (a["retaliation_rate_played"], a["forgiveness_rate_played"], a["provocations_played"]) == (0.5, 0.5, 2)
    # Payoffs stay on the played moves: S, P (A's D vs B's C is T = 5), S, R -> 0 + 5 + 0 + 3.
    assert a["payoff_total"] == 8 and a["exploitability_gap"] == (5 + 0 + 5 + 3) - 8


def test_noise_flips_are_not_counted_as_the_players_behaviour(results: Path) -> None:
    # A chose C D D; noise played its D in round 2 as C. B played D D C.
    cat = write_logs(results, "noise", [("CdD", "DDC")])
    a = metrics(cat, 0, "a")
    assert a["cooperation_rate"] == pytest.approx(1 / 3) and a["cooperation_rate_played"] == pytest.approx(2 / 3)
    # After B's D in rounds 1 and 2, A chose D both times; played C then D.
    assert a["retaliation_rate"] == 1.0 and a["retaliation_rate_played"] == 0.5
    assert a["payoff_total"] == 0 + 0 + 5  # played: C/D, C/D, D/C
    rows = cat.records(
        "SELECT intended, flagged, cooperation_rate, cooperation_rate_played FROM cooperation_over_time "
        "WHERE game_id = 0 AND player = 'a' ORDER BY round"
    )
    assert [r["intended"] for r in rows] == list("CDD") and not any(r["flagged"] for r in rows)
    assert [r["cooperation_rate"] for r in rows] == pytest.approx([1, 1 / 2, 1 / 3])
    assert [r["cooperation_rate_played"] for r in rows] == pytest.approx([1, 1, 2 / 3])


def test_cumulative_cooperation_waits_for_the_first_choice(results: Path) -> None:
    cat = write_logs(results, "cotflags", [("XCY", "CCC")])
    rows = cat.records(
        "SELECT cooperation_rate, cooperation_rate_played FROM cooperation_over_time WHERE player = 'a' ORDER BY round"
    )
    assert [r["cooperation_rate"] for r in rows] == [None, 1.0, 1.0]  # round 3 is a fallback: not counted
    assert [r["cooperation_rate_played"] for r in rows] == pytest.approx([0, 1 / 2, 2 / 3])


def test_a_player_whose_every_move_was_a_fallback_has_null_rates(results: Path) -> None:
    cat = write_logs(results, "allflags", [("XXY", "DDD")])
    a = metrics(cat, 0, "a")
    assert (a["rounds_chosen"], a["fallback_rounds"]) == (0, 3)
    assert a["cooperation_rate"] is None and a["retaliation_rate"] is None and a["forgiveness_rate"] is None
    assert a["provocations"] == 0
    # Played, it is an ordinary game: D, D, C against D, D, D.
    assert a["cooperation_rate_played"] == pytest.approx(1 / 3) and a["retaliation_rate_played"] == 0.5
    assert a["payoff_total"] == 1 + 1 + 0


@pytest.mark.parametrize("opponent", ["RAND", "ALLD"])
def test_tft_under_noise_retaliates_every_time_it_chooses(results: Path, opponent: str) -> None:
    config = tournament_config(["TFT", opponent], rounds=200, replicates=3, noise=0.1, self_play=False, seed=11)
    run_experiment(config, results_dir=results, run_id="noisy")
    with Catalog(results) as cat:
        rows = cat.records("SELECT * FROM player_metrics WHERE player_name = 'TFT'")
        flips = cat.query("SELECT count(*) FROM rounds WHERE action_a <> intended_a")[1][0][0]
    assert len(rows) == 3 and flips > 0
    for row in rows:
        assert row["retaliation_rate"] == 1.0 and row["forgiveness_rate"] == 0.0
        assert row["provocations"] > 0
        # About one played move in ten is the noise's, not TFT's.
        assert 0.8 < row["retaliation_rate_played"] < 1.0
