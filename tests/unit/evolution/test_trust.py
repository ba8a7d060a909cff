"""The Evolution of Trust's rule worked by hand on a tiny population, and its tie-breaking and mutation
checked against their probabilities."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from harness.evolution import EvolutionSettings, evolve

# ALLC, ALLD, TFT over 10 rounds (worked out below)
TEN_ROUNDS = np.array([[30, 0, 30], [50, 10, 14], [30, 9, 30]], dtype=float)


def test_a_tiny_population_worked_by_hand() -> None:
    # 10 rounds, T=5 R=3 P=1 S=0. Match payoffs (row against column):
    #   ALLC-ALLC 30, ALLC-TFT 30, TFT-TFT 30; ALLC-ALLD 0 / 50; TFT-ALLD 9 / 14 (S then 9 x P; T then 9 x P);
    #   ALLD-ALLD 10.
    # k = 1: each generation the lowest scorer goes and the highest is copied.
    #
    # gen 0: ALLC 2, ALLD 1, TFT 2
    #   ALLC: 30 (other ALLC) + 0 (ALLD) + 2 x 30 (TFT)   = 90   <- lowest (both ALLC tie; either goes)
    #   ALLD: 2 x 50 + 2 x 14                             = 128  <- highest
    #   TFT:  2 x 30 + 9 + 30 (other TFT)                 = 99
    # gen 1: ALLC 1, ALLD 2, TFT 2
    #   ALLC: 2 x 0 + 2 x 30 = 60 <- lowest;  ALLD: 50 + 10 + 2 x 14 = 88 <- highest;  TFT: 30 + 2 x 9 + 30 = 78
    # gen 2: ALLC 0, ALLD 3, TFT 2
    #   ALLD: 2 x 10 + 2 x 14 = 48 <- lowest;  TFT: 3 x 9 + 30 = 57 <- highest
    # gen 3: ALLD 2, TFT 3
    #   ALLD: 10 + 3 x 14 = 52 <- lowest;  TFT: 2 x 9 + 2 x 30 = 78 <- highest
    # gen 4: ALLD 1, TFT 4
    #   ALLD: 4 x 14 = 56 <- lowest;  TFT: 9 + 3 x 30 = 99 <- highest
    # gen 5: TFT 5: fixation, and the run stops (no mutation).
    s = EvolutionSettings(
        players=["ALLC", "ALLD", "TFT"], counts=[2, 1, 2], dynamics="trust", k=1, generations=50,
        horizon={"type": "fixed", "n_rounds": 10},
    )  # fmt: skip
    trajectory = evolve(s)
    assert trajectory.population.tolist() == [[2, 1, 2], [1, 2, 2], [0, 3, 2], [0, 2, 3], [0, 1, 4], [0, 0, 5]]
    assert trajectory.fixation is not None
    assert (trajectory.fixation.generation, trajectory.fixation.player) == (5, "TFT")
    assert trajectory.winner() == "TFT"
    assert trajectory.payoffs.values.tolist() == TEN_ROUNDS.tolist()


def test_k_individuals_are_replaced_at_once() -> None:
    # same population and payoffs, k = 2. gen 0 ranks: ALLC 90, 90 | TFT 99, 99 | ALLD 128: the two ALLC go,
    # and the top two are ALLD (128) and one TFT (99; which TFT does not matter): ALLC 0, ALLD 2, TFT 3.
    s = EvolutionSettings(
        players=["ALLC", "ALLD", "TFT"], counts=[2, 1, 2], dynamics="trust", k=2, generations=1,
        horizon={"type": "fixed", "n_rounds": 10},
    )  # fmt: skip
    assert evolve(s).population.tolist() == [[2, 1, 2], [0, 2, 3]]


@pytest.mark.slow
def test_ties_across_types_are_broken_uniformly() -> None:
    # TFT, GRIM and ALLC only ever cooperate with each other, so all six individuals score 5 x 600 and tie.
    # The rule ranks them in a uniformly random order: the first is removed, the last copied. So the removed
    # one is of each type with probability 2/6, and the copied one, another individual, with probability 2/5
    # for each of the other types and 1/5 for its own (then the counts do not change):
    #   P(no change) = 3 x (2/6)(1/5) = 1/5;  P(one of A -> one of B) = (2/6)(2/5) = 2/15 for each A != B.
    def settings(seed: int) -> EvolutionSettings:
        return EvolutionSettings(
            players=["TFT", "GRIM", "ALLC"], counts=[2, 2, 2], dynamics="trust", generations=1, seed=seed
        )

    table = np.full((3, 3), 600.0)
    assert evolve(settings(0)).payoffs.values.tolist() == table.tolist()
    runs = 3000
    seen: Counter[tuple[int, ...]] = Counter()
    for seed in range(runs):
        seen[tuple(evolve(settings(seed), payoffs=table).population[1].tolist())] += 1
    expected = {(2, 2, 2): 1 / 5}
    for removed in range(3):
        for copied in range(3):
            if removed != copied:
                counts = [2, 2, 2]
                counts[removed] -= 1
                counts[copied] += 1
                expected[tuple(counts)] = 2 / 15
    assert set(seen) == set(expected)
    for outcome, p in expected.items():
        assert abs(seen[outcome] / runs - p) <= 3 * math.sqrt(p * (1 - p) / runs), (outcome, seen[outcome] / runs)


@pytest.mark.slow
def test_copies_mutate_at_the_rate() -> None:
    # The hand-worked generation 0 above removes an ALLC and copies ALLD; with mutation 1 the copy always
    # becomes one of the two other types, ALLC or TFT, with probability 1/2 each.
    runs = 2000
    seen: Counter[tuple[int, ...]] = Counter()
    for seed in range(runs):
        s = EvolutionSettings(
            players=["ALLC", "ALLD", "TFT"], counts=[2, 1, 2], dynamics="trust", generations=1, mutation=1.0,
            seed=seed, horizon={"type": "fixed", "n_rounds": 10},
        )  # fmt: skip
        seen[tuple(evolve(s, payoffs=TEN_ROUNDS).population[1].tolist())] += 1
    assert set(seen) == {(2, 1, 2), (1, 1, 3)}  # the copy is ALLC (no change) or TFT
    assert abs(seen[(2, 1, 2)] / runs - 0.5) <= 3 * math.sqrt(0.25 / runs)


def test_counts_stay_whole_and_sum_to_n_under_noise_and_mutation() -> None:
    s = EvolutionSettings(
        players=["ALLC", "ALLD", "TFT", "GTFT"], counts=[7, 6, 6, 6], dynamics="trust", k=5, generations=30,
        noise=0.05, mutation=0.1, seed=8,
    )  # fmt: skip
    population = evolve(s).population
    assert population.dtype == np.int64
    assert (population.sum(axis=1) == 25).all() and (population >= 0).all()
    assert (np.abs(np.diff(population, axis=0)).sum(axis=1) <= 10).all()  # at most k out and k in
