"""The payoff table of a population, played through the engine: cells worked out by hand, deterministic
pairs played once, random pairs afresh per generation or estimated once, and scores that leave self-play out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.evolution import EvolutionSettings, PayoffSource, Score, evolve
from harness.evolution.payoffs import Payoffs
from harness.evolution.selection import scores
from harness.game.horizon import GeometricHorizon
from harness.game.seeds import derive_seed
from harness.players.strategies.play import play_seeded

# 200 rounds, T=5, R=3, P=1, S=0, row against column, worked out by hand:
# TFT-TFT and everything among the nice ones: 200 x 3 = 600. TFT against ALLD: 0 then 199 x 1 = 199, and
# ALLD 5 + 199 = 204. GRIM against ALLD likewise. ALLD-ALLD 200; ALLC-ALLD 0 / 1000.
HAND = {
    ("TFT", "TFT"): 600, ("TFT", "ALLD"): 199, ("TFT", "ALLC"): 600, ("TFT", "GRIM"): 600,
    ("ALLD", "TFT"): 204, ("ALLD", "ALLD"): 200, ("ALLD", "ALLC"): 1000, ("ALLD", "GRIM"): 204,
    ("ALLC", "TFT"): 600, ("ALLC", "ALLD"): 0, ("ALLC", "ALLC"): 600, ("ALLC", "GRIM"): 600,
    ("GRIM", "TFT"): 600, ("GRIM", "ALLD"): 199, ("GRIM", "ALLC"): 600, ("GRIM", "GRIM"): 600,
}  # fmt: skip
FOUR = ["TFT", "ALLD", "ALLC", "GRIM"]


def test_deterministic_pairs_give_the_hand_worked_table_played_once() -> None:
    s = EvolutionSettings(players=FOUR, counts=[1, 1, 1, 1], generations=5)
    table = evolve(s).payoffs
    assert table.source == PayoffSource.played_once
    assert table.players == tuple(FOUR)
    expected = [[HAND[(a, b)] for b in FOUR] for a in FOUR]
    assert table.values.tolist() == expected
    assert table.matches.tolist() == [[1] * 4] * 4
    assert "played once" in table.describe()


def test_scores_count_every_other_individual_but_not_oneself() -> None:
    table = np.array([[600.0, 199.0], [204.0, 200.0]])  # TFT, ALLD
    # 3 TFT, 2 ALLD: a TFT meets 2 other TFT and 2 ALLD; an ALLD meets 3 TFT and 1 other ALLD.
    assert scores(table, np.array([3, 2]), Score.match_total) == [2 * 600 + 2 * 199, 3 * 204 + 1 * 200]
    # a lone TFT meets only the ALLD
    assert scores(table, np.array([1, 4]), Score.match_total) == [4 * 199, 1 * 204 + 3 * 200]


def test_a_per_round_score_is_the_mean_over_the_others_of_each_match_per_round() -> None:
    # the same matches per round (200 rounds): TFT-TFT 3, TFT-ALLD 199/200, ALLD-TFT 204/200, ALLD-ALLD 1
    table = np.array([[3.0, 0.995], [1.02, 1.0]])
    # 3 TFT, 2 ALLD: a TFT's 4 others are 2 TFT and 2 ALLD; an ALLD's are 3 TFT and 1 ALLD
    tft, alld = scores(table, np.array([3, 2]), Score.per_round)
    assert tft == pytest.approx((2 * 3 + 2 * 0.995) / 4) and alld == pytest.approx((3 * 1.02 + 1) / 4)
    # on the matrix's scale whatever the size: a population of 1,000 scores like one of 5 in the same mix
    big = scores(table, np.array([600, 400]), Score.per_round)
    assert big == pytest.approx([(599 * 3 + 400 * 0.995) / 999, (600 * 1.02 + 399 * 1) / 999])
    assert all(0.0 <= x <= 5.0 for x in big)


def test_the_table_per_round_holds_each_match_over_its_own_rounds() -> None:
    s = EvolutionSettings(players=["TFT", "ALLD"], counts=[2, 2], horizon={"type": "geometric", "stop_prob": 0.2})
    payoffs = Payoffs.for_settings(s)
    specs = [spec for spec in s.specs if spec is not None]
    for generation in range(30):
        totals = payoffs.at(generation, np.array([2, 2]), Score.match_total)
        rates = Payoffs.for_settings(s).at(generation, np.array([2, 2]), Score.per_round)
        seed = derive_seed(s.seed, "evolution", "generation", generation, "TFT", "ALLD")
        game = play_seeded(specs[0], specs[1], s.payoff_matrix, s.game_horizon, 0.0, seed)
        length = game.rounds_played
        # by hand: TFT gets L - 1 from ALLD in L rounds, ALLD L + 4; the totals are those of the same game
        assert (totals[0, 1], totals[1, 0]) == (length - 1, length + 4)
        assert (rates[0, 1], rates[1, 0]) == pytest.approx(((length - 1) / length, (length + 4) / length))
        assert rates[0, 0] == 3.0 and rates[1, 1] == 1.0


def test_random_pairs_play_a_fresh_match_per_generation_only_when_they_meet() -> None:
    s = EvolutionSettings(players=["TFT", "RAND", "ALLD"], counts=[3, 1, 3], generations=1, seed=5)
    payoffs = Payoffs.for_settings(s)
    assert payoffs.varies
    # RAND meets TFT and ALLD, but a lone RAND has no other RAND to meet
    first = payoffs.at(0, np.array([3, 1, 3]), Score.match_total)
    again = payoffs.at(1, np.array([3, 1, 3]), Score.match_total)
    assert payoffs.matches[1].tolist() == [2, 0, 2]  # two generations, RAND-RAND never played
    assert payoffs.matches[0].tolist() == [1, 2, 1]  # TFT-TFT, TFT-ALLD deterministic: once
    assert first[0, 0] == 600 and first[0, 2] == 199 and again[0, 2] == 199
    # a fresh match per generation: the RAND cells differ between generations (200 coin flips each)
    assert first[0, 1] != again[0, 1]
    # and each is the engine's game from the seed of (run seed, generation, pair)
    spec_tft, spec_rand = s.specs[0], s.specs[1]
    assert spec_tft is not None and spec_rand is not None
    game = play_seeded(
        spec_tft,
        spec_rand,
        s.payoff_matrix,
        s.game_horizon,
        0.0,
        derive_seed(5, "evolution", "generation", 1, "TFT", "RAND"),
    )
    assert (again[0, 1], again[1, 0]) == (game.score_a, game.score_b)
    table = payoffs.table()
    assert table.source == PayoffSource.per_generation
    assert math.isnan(table.values[1, 1])  # never played
    assert table.values[0, 1] == pytest.approx((first[0, 1] + again[0, 1]) / 2)


def test_with_noise_every_pair_is_random() -> None:
    s = EvolutionSettings(players=["TFT", "ALLD"], counts=[10, 10], generations=3, noise=0.1, dynamics="trust")
    table = evolve(s).payoffs
    assert table.source == PayoffSource.per_generation
    assert table.matches.tolist() == [[3, 3], [3, 3]]


def test_estimated_payoffs_are_the_mean_of_m_matches() -> None:
    # RAND(p=0.5) against ALLD, 200 rounds: RAND scores 0 or 1 a round with probability 1/2 each, so a match
    # averages 100 with standard deviation sqrt(200 / 4) = 7.07; ALLD scores 5 or 1, mean 600, sd 4 x 7.07.
    m = 400
    s = EvolutionSettings(players=["RAND", "ALLD"], counts=[5, 5], payoff_mode="estimated", replicates=m, seed=9)
    payoffs = Payoffs.for_settings(s)
    assert not payoffs.varies
    table = payoffs.table()
    assert table.source == PayoffSource.estimated and table.replicates == m
    assert table.matches.tolist() == [[m, m], [m, 1]]  # ALLD-ALLD is deterministic: once
    se = math.sqrt(200 / 4) / math.sqrt(m)
    assert abs(table.values[0, 1] - 100) < 3 * se
    assert abs(table.values[1, 0] - 600) < 3 * 4 * se
    assert table.values[1, 1] == 200
    # RAND against RAND: 1/4 each of CC (3), CD (0), DC (5), DD (1) a round: 2.25 x 200 = 450 for either seat
    assert abs(table.values[0, 0] - 450) < 4 * math.sqrt(200 * (np.var([3, 0, 5, 1]) / 2)) / math.sqrt(m)
    assert "estimated: mean of 400 matches" in table.describe()


def test_a_deterministic_pair_under_a_geometric_horizon_is_the_engine_game_of_the_drawn_length() -> None:
    s = EvolutionSettings(
        players=["TFT", "ALLD", "ALLC"], counts=[2, 2, 2], horizon={"type": "geometric", "stop_prob": 0.01}, seed=3
    )
    payoffs = Payoffs.for_settings(s)
    assert payoffs.varies
    specs = [spec for spec in s.specs if spec is not None]
    for generation in range(40):
        table = payoffs.at(generation, np.array([2, 2, 2]), Score.match_total)
        for i in range(3):
            for j in range(i, 3):
                seed = derive_seed(3, "evolution", "generation", generation, s.players[i], s.players[j])
                game = play_seeded(specs[i], specs[j], s.payoff_matrix, s.game_horizon, 0.0, seed)
                a, b = game.score_a, game.score_b
                assert (table[i, j], table[j, i]) == ((a + b) / 2,) * 2 if i == j else (a, b)
        # by hand: TFT gets L - 1 against ALLD, which gets L + 4
        assert table[1, 0] - table[0, 1] == 5


def test_geometric_lengths_average_to_the_expected_length() -> None:
    # TFT-TFT scores 3 a round, so its mean over generations estimates 3 / stop_prob (sd of a length ~ 1/p)
    s = EvolutionSettings(players=["TFT", "ALLD"], counts=[2, 2], horizon={"type": "geometric", "stop_prob": 0.05})
    payoffs = Payoffs.for_settings(s)
    n = 2000
    for g in range(n):
        payoffs.at(g, np.array([2, 2]), Score.match_total)
    mean = payoffs.table().values[0, 0]
    assert abs(mean - 3 / 0.05) < 3 * 3 * math.sqrt(1 - 0.05) / 0.05 / math.sqrt(n)
    assert s.game_horizon == GeometricHorizon(0.05)


def test_the_replicator_reads_a_fixed_table_even_in_exact_mode() -> None:
    s = EvolutionSettings(players=["TFT", "GTFT"], shares=[0.5, 0.5], dynamics="replicator", replicates=7)
    table = Payoffs.for_settings(s).table()
    assert table.source == PayoffSource.estimated
    assert table.matches.tolist() == [[1, 7], [7, 7]]
