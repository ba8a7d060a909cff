"""The generational process: the next generation is N independent roulette-wheel draws in proportion to
fitness, so over seeds its mean shares are the fitness-proportional shares worked out by hand, its counts
vary as a multinomial's, and mutation moves the stated share of offspring to the other types."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.evolution import EvolutionSettings, evolve

N = 10
RUNS = 4000
PLAYERS = ["TFT", "ALLD", "ALLC"]
COUNTS = [5, 3, 2]
# 200 rounds, T=5 R=3 P=1 S=0, by hand (row against column): nice pairs 600; TFT-ALLD 199 / 204;
# ALLD-ALLD 200; ALLC-ALLD 0 / 1000.
TABLE = np.array([[600, 199, 600], [204, 200, 1000], [600, 0, 600]], dtype=float)
# Scores (total payoff against the 9 others) with 5 TFT, 3 ALLD, 2 ALLC:
#   TFT:  4 x 600 + 3 x 199 + 2 x 600  = 4197
#   ALLD: 5 x 204 + 2 x 200 + 2 x 1000 = 3420
#   ALLC: 5 x 600 + 3 x 0   + 1 x 600  = 3600
SCORES = [4197, 3420, 3600]
# Per round (the default score): each over the 9 others and the 200 rounds of each match, 1,800 rounds in all.
PER_ROUND = [x / (9 * 200) for x in SCORES]  # 2.3317, 1.9, 2.0


def next_generations(**settings: object) -> np.ndarray:
    """The counts after one generation, one row per seed."""
    rows = []
    for seed in range(RUNS):
        s = EvolutionSettings(
            players=PLAYERS,
            counts=COUNTS,
            generations=1,
            seed=seed,
            **settings,  # type: ignore[arg-type]
        )
        rows.append(evolve(s, payoffs=TABLE).population[1])
    return np.array(rows)


def assert_mean_shares(rows: np.ndarray, expected: list[float]) -> None:
    shares = rows.mean(axis=0) / N
    for observed, p in zip(shares, expected, strict=True):
        assert abs(observed - p) <= 3 * math.sqrt(p * (1 - p) / (N * RUNS)), (shares, expected)


def test_the_scores_by_hand_are_the_engines() -> None:
    s = EvolutionSettings(players=PLAYERS, counts=COUNTS, generations=1)
    trajectory = evolve(s)
    assert trajectory.payoffs.values.tolist() == TABLE.tolist()
    assert (TABLE @ np.array(COUNTS) - np.diagonal(TABLE)).tolist() == SCORES


@pytest.mark.slow
def test_mean_next_shares_are_fitness_proportional() -> None:
    # w = 1, linear: fitness = score, so type i is drawn with probability n_i s_i / sum_j n_j s_j
    total = 5 * 4197 + 3 * 3420 + 2 * 3600  # 38445
    expected = [5 * 4197 / total, 3 * 3420 / total, 2 * 3600 / total]
    rows = next_generations()
    assert (rows.sum(axis=1) == N).all()
    assert_mean_shares(rows, expected)
    # a multinomial's counts: variance N p (1 - p) for each type (sample variance within ~4 standard errors)
    for i, p in enumerate(expected):
        assert rows[:, i].var(ddof=1) == pytest.approx(N * p * (1 - p), rel=0.1)


@pytest.mark.slow
@pytest.mark.parametrize(("score", "w", "of"), [("per_round", 0.1, PER_ROUND), ("match_total", 0.001, SCORES)])
def test_weak_linear_selection_mixes_score_with_a_baseline(score: str, w: float, of: list[float]) -> None:
    # per round, w = 0.1: 1.133, 1.09, 1.1 (weak); in match totals it takes w = 0.001 for 5.197, 4.420, 4.600
    fitness = [1 - w + w * s for s in of]
    total = sum(n * f for n, f in zip(COUNTS, fitness, strict=True))
    rows = next_generations(selection=w, score=score)
    assert_mean_shares(rows, [n * f / total for n, f in zip(COUNTS, fitness, strict=True)])


@pytest.mark.slow
@pytest.mark.parametrize(("score", "w", "of"), [("per_round", 2.0, PER_ROUND), ("match_total", 0.002, SCORES)])
def test_exponential_fitness(score: str, w: float, of: list[float]) -> None:
    fitness = [math.exp(w * s) for s in of]  # e^4.663, e^3.8, e^4 per round; e^8.394, e^6.84, e^7.2 in totals
    total = sum(n * f for n, f in zip(COUNTS, fitness, strict=True))
    rows = next_generations(selection=w, fitness="exponential", score=score)
    assert_mean_shares(rows, [n * f / total for n, f in zip(COUNTS, fitness, strict=True)])


@pytest.mark.slow
def test_mutation_sends_the_stated_share_of_offspring_to_each_other_type() -> None:
    # w = 0: parents are drawn in proportion to the counts (0.5, 0.3, 0.2); each offspring then becomes, with
    # probability 0.3, one of the two other types (0.15 each):
    #   TFT:  0.5 x 0.7 + 0.3 x 0.15 + 0.2 x 0.15 = 0.425
    #   ALLD: 0.3 x 0.7 + 0.5 x 0.15 + 0.2 x 0.15 = 0.315
    #   ALLC: 0.2 x 0.7 + 0.5 x 0.15 + 0.3 x 0.15 = 0.260
    rows = next_generations(selection=0.0, mutation=0.3)
    assert_mean_shares(rows, [0.425, 0.315, 0.260])


def test_mutation_keeps_a_fixed_population_moving() -> None:
    s = EvolutionSettings(players=["TFT", "ALLD"], counts=[9, 1], generations=200, mutation=0.05, seed=4)
    trajectory = evolve(s)
    assert trajectory.generations == 200  # not stopped at fixation: mutants keep arriving
    assert (trajectory.population.sum(axis=1) == N).all()
    stopped = evolve(EvolutionSettings(players=["TFT", "ALLD"], counts=[9, 1], generations=200, seed=4))
    assert stopped.fixation is not None and stopped.generations == stopped.fixation.generation
    assert stopped.winner() == stopped.fixation.player == "TFT"


def test_all_zero_fitness_is_neutral() -> None:
    # With P = 0, ALLD and STFT only ever defect against each other and score 0: every linear (w = 1) fitness is
    # 0, and the next generation is drawn in proportion to the counts (STFT's mean share stays 0.1).
    zero = {"C": {"C": [3, 3], "D": [0, 5]}, "D": {"C": [5, 0], "D": [0, 0]}}
    s = EvolutionSettings(players=["ALLD", "STFT"], counts=[9, 1], generations=1, payoff_matrix=zero)
    assert evolve(s).payoffs.values.tolist() == [[0, 0], [0, 0]]
    runs = 2000
    stft = [
        evolve(
            EvolutionSettings(players=["ALLD", "STFT"], counts=[9, 1], generations=1, seed=seed),
            payoffs=np.zeros((2, 2)),
        ).population[1, 1]
        for seed in range(runs)
    ]
    assert abs(np.mean(stft) / N - 0.1) <= 3 * math.sqrt(0.1 * 0.9 / (N * runs))
