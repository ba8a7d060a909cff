"""The ``tournament`` view ranks as the Axelrod library does, on hand-worked tournaments.

Games are written move by move (or with payoffs set by hand), and every expected figure is worked out
in the comments, independently of the SQL: per repetition, a player's score is the mean over its
games against the others of each game's payoff per round; players are ranked by the median of those
over repetitions; self-play never counts; ties (within 1e-9) share a rank, standard competition style.
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import duckdb
import pytest
from rich.console import Console

from harness.cli.render import leaderboard_table
from harness.config import parse_experiment
from harness.config.plan import iter_games
from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.states import GameStatus, RunStatus
from harness.store.catalog import Catalog
from harness.store.writer import RunWriter
from tests.support.round_rows import unfold_rounds

Moves = tuple[str, str]


def write_tournament(
    results: Path,
    run_id: str,
    games: dict[tuple[str, str], list[Moves | None]],
    *,
    statuses: dict[tuple[str, str, int], GameStatus] | None = None,
    payoffs: dict[str, float] | None = None,
) -> None:
    """A run whose condition ``a_vs_b`` plays, in replicate r, the moves ``games[(a, b)][r]`` (played
    moves of seat a, seat b; ``None``: the game never started). ``statuses`` marks games other than
    complete; ``payoffs`` then overwrites every round's payoff of a player, in any seat, by name."""
    reps = {len(v) for v in games.values()}
    assert len(reps) == 1, "every pair plays the same number of replicates"
    config = parse_experiment(
        {
            "experiment": {
                "replicates": reps.pop(),
                "conditions": [
                    {"name": f"{a}_vs_{b}", "agent_a": {"policy": a}, "agent_b": {"policy": b}} for a, b in games
                ],
            }
        }
    )
    writer = RunWriter.create(results, run_id)
    writer.start_run(kind="tournament", config=config.resolved_dict(), seed=0, games_planned=0, collapse_k=10,
                     collapse_threshold=0.2)  # fmt: skip
    for plan in iter_games(config):
        moves = games[(plan.condition.player_a.name, plan.condition.player_b.name)][plan.replicate]
        if moves is None:
            continue
        match = Match(PayoffMatrix(), 0.0, random.Random(0))
        for x, y in zip(*moves, strict=True):
            match.record(x, y)  # type: ignore[arg-type]
        key = (plan.condition.player_a.name, plan.condition.player_b.name, plan.replicate)
        writer.add_game(
            plan, match, planned_rounds=len(moves[0]), status=(statuses or {}).get(key, GameStatus.COMPLETE)
        )
    writer.finish(RunStatus.COMPLETE)
    writer.close()
    if payoffs:
        with duckdb.connect(str(results / f"{run_id}.duckdb")) as con:
            unfold_rounds(con)
            for player, value in payoffs.items():
                con.execute("UPDATE round_rows SET payoff_a = ? WHERE game_id IN (SELECT game_id FROM games "
                            "WHERE player_a = ?)", [value, player])  # fmt: skip
                con.execute("UPDATE round_rows SET payoff_b = ? WHERE game_id IN (SELECT game_id FROM games "
                            "WHERE player_b = ?)", [value, player])  # fmt: skip


def board(results: Path, run_id: str) -> dict[str, dict]:
    with Catalog(results) as cat:
        rows = cat.records("SELECT * FROM tournament WHERE run_id = ? ORDER BY rank, player", [run_id])
    return {r["player"]: r for r in rows}


def test_median_ranks_self_play_is_left_out_and_median_ties_share_a_rank(results: Path) -> None:
    # Three players, 3 repetitions of 2-round games, self-play included in the run. Payoffs R=3 S=0 T=5 P=1.
    write_tournament(results, "hand", {
        ("TFT", "TFT"): [("CC", "CC")] * 3,       # 3 a turn each: would lift TFT if it counted
        ("TFT", "ALLD"): [("CD", "DD")] * 3,      # TFT 0+1 = 1 (0.5 a turn), ALLD 5+1 = 6 (3 a turn)
        ("TFT", "RAND"): [("CC", "CC"),           # rep 0: TFT 6 (3),   RAND 6 (3)    draw
                          ("CD", "DC"),           # rep 1: TFT 0+5 (2.5), RAND 5+0 (2.5) draw
                          ("CD", "DD")],          # rep 2: TFT 0+1 (0.5), RAND 5+1 (3)  RAND wins
        ("ALLD", "ALLD"): [("DD", "DD")] * 3,
        ("ALLD", "RAND"): [("DD", "CC"),          # rep 0: ALLD 10 (5), RAND 0 (0)     ALLD wins
                           ("DD", "DC"),          # rep 1: ALLD 1+5 (3), RAND 1+0 (0.5) ALLD wins
                           ("DD", "DD")],         # rep 2: ALLD 2 (1),  RAND 2 (1)     draw
        ("RAND", "RAND"): [("CC", "CC")] * 3,     # 3 a turn: would lift RAND if it counted
    })  # fmt: skip
    rows = board(results, "hand")
    # Per repetition, mean over the two opponents:
    #   ALLD: (3+5)/2 = 4,      (3+3)/2 = 3,      (3+1)/2 = 2      -> median 3,   mean 3
    #   TFT:  (0.5+3)/2 = 1.75, (0.5+2.5)/2 = 1.5, (0.5+0.5)/2 = 0.5 -> median 1.5, mean 1.25
    #   RAND: (3+0)/2 = 1.5,    (2.5+0.5)/2 = 1.5, (3+1)/2 = 2      -> median 1.5, mean 5/3
    # By median RAND and TFT tie for 2nd (by mean RAND would be ahead): ranks 1, 2, 2.
    assert {p: r["rank"] for p, r in rows.items()} == {"ALLD": 1, "RAND": 2, "TFT": 2}
    assert {p: r["median_score_per_turn"] for p, r in rows.items()} == pytest.approx(
        {"ALLD": 3.0, "RAND": 1.5, "TFT": 1.5}
    )
    assert {p: r["mean_score_per_turn"] for p, r in rows.items()} == pytest.approx(
        {"ALLD": 3.0, "RAND": 5 / 3, "TFT": 1.25}
    )
    # Games, wins, draws and losses against the others only (self-play games are not games here).
    assert {p: (r["games"], r["replicates"], r["wins"], r["draws"], r["losses"]) for p, r in rows.items()} == {
        "ALLD": (6, 3, 5, 1, 0),
        "TFT": (6, 3, 0, 2, 4),
        "RAND": (6, 3, 1, 3, 2),
    }
    # Cooperation against the others, the mean of each game's rate: TFT plays C in 1 of 2 rounds in five
    # games and 2 of 2 in one: 3.5 / 6; RAND 1, 0.5, 0 against each of TFT and ALLD: 3 / 6.
    assert {p: r["cooperation_rate"] for p, r in rows.items()} == pytest.approx({"ALLD": 0.0, "TFT": 3.5 / 6,
                                                                                 "RAND": 0.5})  # fmt: skip
    # Per-game figures over the same six games: TFT's totals are 1, 1, 1, 6, 5, 1.
    assert rows["TFT"]["mean_total"] == pytest.approx(15 / 6)
    assert rows["TFT"]["mean_payoff_per_round"] == pytest.approx(7.5 / 6)


def test_an_even_number_of_repetitions_takes_the_mean_of_the_middle_two(results: Path) -> None:
    # No self-play; 4 repetitions of ALLD against RAND, 2 rounds each. RAND plays CC, CC, CD, DD:
    # ALLD gets 5, 5, 3, 1 a turn -> median (3 + 5) / 2 = 4, mean 14 / 4 = 3.5;
    # RAND gets 0, 0, 0.5, 1      -> median (0 + 0.5) / 2 = 0.25, mean 1.5 / 4 = 0.375.
    write_tournament(results, "even", {("ALLD", "RAND"): [("DD", "CC"), ("DD", "CC"), ("DD", "CD"), ("DD", "DD")]})
    rows = board(results, "even")
    assert (rows["ALLD"]["median_score_per_turn"], rows["ALLD"]["mean_score_per_turn"]) == pytest.approx((4, 3.5))
    assert (rows["RAND"]["median_score_per_turn"], rows["RAND"]["mean_score_per_turn"]) == pytest.approx((0.25, 0.375))
    assert (rows["ALLD"]["rank"], rows["RAND"]["rank"]) == (1, 2)
    assert (rows["ALLD"]["wins"], rows["ALLD"]["draws"], rows["RAND"]["losses"]) == (3, 1, 3)


def test_only_complete_games_count(results: Path) -> None:
    # Two repetitions of 2-round games. In rep 1 TFT vs ALLD was interrupted after one round, and TFT vs ALLC
    # never started (a run stopped part-way).
    write_tournament(
        results,
        "cut",
        {
            ("TFT", "ALLD"): [("CD", "DD"), ("C", "D")],
            ("TFT", "ALLC"): [("CC", "CC"), None],
            ("ALLD", "ALLC"): [("DD", "CC"), ("DD", "CC")],
        },
        statuses={("TFT", "ALLD", 1): GameStatus.INTERRUPTED},
    )
    rows = board(results, "cut")
    # TFT: rep 0 only: (0.5 + 3) / 2 = 1.75; its interrupted game (0 points) is not a game.
    assert (rows["TFT"]["games"], rows["TFT"]["replicates"]) == (2, 1)
    assert rows["TFT"]["median_score_per_turn"] == pytest.approx(1.75)
    assert (rows["TFT"]["wins"], rows["TFT"]["draws"], rows["TFT"]["losses"]) == (0, 1, 1)
    # ALLD: rep 0 (3 + 5) / 2 = 4; rep 1 has only its complete game against ALLC: 5. Median 4.5.
    assert (rows["ALLD"]["games"], rows["ALLD"]["replicates"]) == (3, 2)
    assert rows["ALLD"]["median_score_per_turn"] == pytest.approx(4.5)
    assert [rows[p]["rank"] for p in ("ALLD", "TFT", "ALLC")] == [1, 2, 3]


def test_a_player_with_only_self_play_is_not_ranked(results: Path) -> None:
    write_tournament(results, "self", {("TFT", "TFT"): [("CC", "CC")], ("ALLD", "ALLC"): [("DD", "CC")]})
    rows = board(results, "self")
    assert set(rows) == {"ALLD", "ALLC"} and (rows["ALLD"]["rank"], rows["ALLC"]["rank"]) == (1, 2)
    with Catalog(results) as cat:  # its self-play stays visible in the matchups
        cell = cat.records("SELECT * FROM matchups WHERE player = 'TFT'")
    assert [(c["opponent"], c["mean_payoff_per_round"], c["games"]) for c in cell] == [("TFT", 3.0, 1)]


ROUND_ROBIN = {pair: [("C", "C")] for pair in [("ALLC", "ALLD"), ("ALLC", "TFT"), ("ALLC", "GRIM"),
                                               ("ALLD", "TFT"), ("ALLD", "GRIM"), ("TFT", "GRIM")]}  # fmt: skip


@pytest.mark.slow
def test_scores_within_the_tolerance_share_a_rank_and_chains_of_them_too(results: Path) -> None:
    # One round per game, each player's payoff set by hand in every game, so its score is that payoff.
    # "chain": ALLC 2, ALLD 2 - 0.6e-9, TFT 2 - 1.2e-9, GRIM 1. ALLC-TFT differ by 1.2e-9, but each neighbour by
    # 0.6e-9: the chain is one tie group -> 1, 1, 1, 4.
    write_tournament(results, "chain", ROUND_ROBIN,
                     payoffs={"ALLC": 2.0, "ALLD": 2.0 - 0.6e-9, "TFT": 2.0 - 1.2e-9, "GRIM": 1.0})  # fmt: skip
    # "split": ALLC 2, ALLD 2 - 0.5e-9, TFT 2 - 2e-9, GRIM 2 - 2.8e-9. ALLD-TFT differ by 1.5e-9 > 1e-9:
    # two groups -> 1, 1, 3, 3.
    write_tournament(results, "split", ROUND_ROBIN,
                     payoffs={"ALLC": 2.0, "ALLD": 2.0 - 0.5e-9, "TFT": 2.0 - 2e-9, "GRIM": 2.0 - 2.8e-9})  # fmt: skip
    chain, split = board(results, "chain"), board(results, "split")  # each run is ranked on its own
    assert {p: r["rank"] for p, r in chain.items()} == {"ALLC": 1, "ALLD": 1, "TFT": 1, "GRIM": 4}
    assert {p: r["rank"] for p, r in split.items()} == {"ALLC": 1, "ALLD": 1, "TFT": 3, "GRIM": 3}
    assert split["GRIM"]["median_score_per_turn"] == pytest.approx(2.0 - 2.8e-9, abs=1e-15)


def _rendered(rows: list[dict]) -> list[str]:
    console = Console(record=True, width=160, file=io.StringIO())
    console.print(leaderboard_table(rows))
    return [line for line in console.export_text().splitlines() if "│" in line]


def test_the_terminal_leaderboard_gives_tied_players_the_same_medal() -> None:
    row = {"median_score_per_turn": 2.0, "mean_score_per_turn": 2.0, "wins": 0, "draws": 0, "losses": 0,
           "cooperation_rate": 0.5}  # fmt: skip
    ranks = [("GRIM", 1), ("TFT", 1), ("ALLD", 3), ("ALLC", 4)]
    lines = _rendered([{**row, "player": p, "rank": r} for p, r in ranks])
    assert [line.split("│")[1].strip() for line in lines] == ["🥇 1", "🥇 1", "🥉 3", "4"]
    ranks = [("ALLD", 1), ("GRIM", 2), ("TFT", 2), ("ALLC", 4)]
    lines = _rendered([{**row, "player": p, "rank": r} for p, r in ranks])
    assert [line.split("│")[1].strip() for line in lines] == ["🥇 1", "🥈 2", "🥈 2", "4"]


def test_cooperation_is_on_chosen_moves_and_as_played_beside_it(tmp_path: Path) -> None:
    """ALLC chooses C in every round; under noise 0.1 some of its moves are played as D. Its leaderboard
    cooperation is that of its choices, exactly 1, and the played rate (below 1) is kept beside it."""
    from harness.config.presets.tournament import tournament_config
    from harness.engine.runner import run_experiment

    run_experiment(tournament_config(["ALLC", "ALLD"], rounds=200, noise=0.1, seed=3), results_dir=tmp_path,
                   run_id="noisy")  # fmt: skip
    with Catalog(tmp_path) as cat:
        rows = {r["player"]: r for r in cat.records("SELECT * FROM tournament WHERE run_id = 'noisy'")}
        matchup = cat.records("SELECT * FROM matchups WHERE player = 'ALLC' AND opponent = 'ALLD'")[0]
    assert rows["ALLC"]["cooperation_rate"] == 1.0 and rows["ALLD"]["cooperation_rate"] == 0.0
    assert 0.8 < rows["ALLC"]["cooperation_rate_played"] < 0.97
    assert 0.03 < rows["ALLD"]["cooperation_rate_played"] < 0.2
    assert matchup["cooperation_rate"] == 1.0 and matchup["cooperation_rate_played"] < 1.0
