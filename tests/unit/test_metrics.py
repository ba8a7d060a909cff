"""The metric views on hand-computed sequences, edge cases included."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_games


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
        "SELECT round, action, cooperation_rate FROM cooperation_over_time WHERE player = 'a' ORDER BY round"
    )
    assert [r["action"] for r in rows] == list("CCDDC")
    assert [r["cooperation_rate"] for r in rows] == pytest.approx([1, 1, 2 / 3, 0.5, 0.6])


def test_behaviour_profile(results: Path) -> None:
    cat = write_games(results, "profile", [("CCDDC", "CDDCD")])
    rows = {r["player"]: r for r in cat.records("SELECT * FROM behaviour_profile")}
    a, b = rows["a"], rows["b"]
    assert a["niceness"] == 1.0 and b["niceness"] == 0.0  # B defected first (round 2)
    assert a["troublemaking"] == 0.0 and b["troublemaking"] == 1.0
    assert a["emulation"] == 1.0  # A copied B's previous move in every round from 2 on
    assert a["provocability"] == 1.0 and b["provocability"] == 0.5
    # A retaliated in round 3 after B's D in 2; in round 4 (after its own D with B's D two back) A played D.
    # A's D in round 4 followed B's D in round 3: at round 5, A plays C -> 1 of 2 chances.
    assert a["forgiveness_after_retaliation"] == 0.5


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
