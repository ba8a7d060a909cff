"""The Moran process against closed forms: the fixation probability of one mutant under frequency-dependent
fitness (Nowak 2006), neutral drift (1/N) for every finite dynamics, and the one-step law of birth, death and
mutation. Each agreement is within 3 standard errors over many seeds (all seeded, so the test is fixed)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from harness.evolution import EvolutionSettings, evolve
from tests.unit.evolution.two_types import RHO_ALLD, RHO_TFT, TABLE, N, fixation_probability, mutant_runs, within_3_se


def fixation_frequency(players: list[str], counts: list[int], runs: int, **settings: object) -> float:
    """The share of seeds at which the first player fixes."""
    fixed = 0
    for seed in range(runs):
        s = EvolutionSettings(
            players=players,
            counts=counts,
            generations=1_000_000,
            seed=seed,
            **settings,  # type: ignore[arg-type]
        )
        trajectory = evolve(s, payoffs=TABLE if players == ["TFT", "ALLD"] else TABLE[::-1, ::-1])
        assert trajectory.fixation is not None, "the step budget must reach absorption"
        fixed += trajectory.fixation.player == players[0]
    return fixed / runs


def test_the_hand_worked_table_is_what_the_engine_plays() -> None:
    s = EvolutionSettings(players=["TFT", "ALLD"], counts=[1, 9], dynamics="moran", generations=1_000_000, seed=11)
    played = evolve(s)
    assert played.payoffs.values.tolist() == TABLE.tolist()
    supplied = evolve(s, payoffs=TABLE)
    assert played.population.tobytes() == supplied.population.tobytes()


def test_the_formula_as_written_here() -> None:
    # sanity of the transcription: with constant fitness r for A and 1 for B it must give (1 - 1/r) / (1 - 1/r^N)
    r = Fraction(3, 2)
    assert fixation_probability(lambda j: r, lambda j: 1) == pytest.approx(float((1 - 1 / r) / (1 - 1 / r**N)))
    assert pytest.approx(0.24323, abs=1e-5) == RHO_TFT
    assert pytest.approx(0.0014062, abs=1e-7) == RHO_ALLD


@pytest.mark.slow
def test_one_tft_among_alld_fixes_as_the_formula_says() -> None:
    runs = mutant_runs("TFT", 3000)
    assert within_3_se(runs.frequency, RHO_TFT, runs.runs), (runs.frequency, RHO_TFT)


@pytest.mark.slow
def test_one_alld_among_tft_fixes_as_the_formula_says() -> None:
    runs = mutant_runs("ALLD", 6000)
    assert within_3_se(runs.frequency, RHO_ALLD, runs.runs), (runs.frequency, RHO_ALLD)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dynamics", "fitness"),
    [("moran", "linear"), ("moran", "exponential"), ("generational", "linear"), ("generational", "exponential"),
     ("trust", "linear")],
)  # fmt: skip
def test_without_selection_one_mutant_fixes_with_probability_one_over_n(dynamics: str, fitness: str) -> None:
    runs = 3000
    frequency = fixation_frequency(["TFT", "ALLD"], [1, N - 1], runs, dynamics=dynamics, fitness=fitness, selection=0.0)
    assert within_3_se(frequency, 1 / N, runs), (dynamics, fitness, frequency)


@pytest.mark.slow
def test_neutral_fixation_follows_the_initial_share() -> None:
    runs = 1500
    frequency = fixation_frequency(["TFT", "ALLD"], [3, N - 3], runs, dynamics="moran", selection=0.0)
    assert within_3_se(frequency, 3 / N, runs), frequency


@pytest.mark.slow
def test_one_moran_step_births_deaths_and_mutations() -> None:
    # Neutral (w = 0), mutation 1: the parent is uniform among the 10, its offspring always becomes one of the
    # two other types (1/2 each), and it replaces a uniform individual. From counts (8, 1, 1):
    #   offspring type 0: parent of type 1 or 2 (0.1 + 0.1) x 1/2 = 0.1; type 1: (0.8 + 0.1) / 2 = 0.45; type 2: 0.45
    #   the dead: type 0 with 0.8, type 1 or 2 with 0.1 each, independently.
    runs = 6000
    table = np.zeros((3, 3))
    seen: Counter[tuple[int, int]] = Counter()
    for seed in range(runs):
        s = EvolutionSettings(
            players=["TFT", "ALLD", "ALLC"], counts=[8, 1, 1], dynamics="moran", generations=1, mutation=1.0,
            selection=0.0, seed=seed,
        )  # fmt: skip
        before, after = evolve(s, payoffs=table).population
        change = after - before
        born = int(np.flatnonzero(change == 1)[0]) if (change == 1).any() else None
        died = int(np.flatnonzero(change == -1)[0]) if (change == -1).any() else None
        if born is None:  # the offspring replaced one of its own type: no change
            seen[("same", "same")] += 1  # type: ignore[index]
        else:
            seen[(born, died)] += 1  # type: ignore[index]
    child = [0.1, 0.45, 0.45]
    dead = [0.8, 0.1, 0.1]
    for b in range(3):
        for d in range(3):
            if b != d:
                p = child[b] * dead[d]
                assert within_3_se(seen[(b, d)] / runs, p, runs), (b, d, seen[(b, d)] / runs, p)
    p_same = sum(child[t] * dead[t] for t in range(3))
    assert within_3_se(seen[("same", "same")] / runs, p_same, runs)  # type: ignore[index]


def test_moran_runs_the_steps_it_is_given_with_mutation_and_stops_at_fixation_without() -> None:
    with_mutation = evolve(
        EvolutionSettings(players=["TFT", "ALLD"], counts=[1, 9], dynamics="moran", generations=500, mutation=0.1),
        payoffs=TABLE,
    )
    assert with_mutation.generations == 500
    assert (with_mutation.population.sum(axis=1) == N).all()
    assert (np.abs(np.diff(with_mutation.population, axis=0)).sum(axis=1) <= 2).all()  # one birth, one death a step
    without = evolve(
        EvolutionSettings(players=["TFT", "ALLD"], counts=[1, 9], dynamics="moran", generations=500, seed=2),
        payoffs=TABLE,
    )
    assert without.fixation is not None
    assert without.generations == without.fixation.generation
    assert without.population[-1].max() == N
    assert without.population[:-1].max(axis=1).max() < N
