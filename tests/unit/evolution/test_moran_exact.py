"""The Moran process against closed forms: the fixation probability of one mutant under frequency-dependent
fitness (Nowak 2006), on the per-round score under the linear and the exponential fitness and on match totals,
neutral drift (1/N) for every finite dynamics, and the one-step law of birth, death and mutation. Each agreement
is within 3 standard errors over many seeds (all seeded, so the test is fixed)."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from harness.evolution import EvolutionSettings, Fitness, evolve, moran
from harness.evolution.fixation import fixation_probability as closed_form
from harness.evolution.payoffs import Payoffs
from tests.unit.evolution.two_types import (
    MUTANT_RUNS,
    RHO_ALLD,
    RHO_TFT,
    TABLE,
    N,
    exponential_rho,
    fixation_probability,
    linear_rho,
    mutant_runs,
    within_3_se,
)


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


def test_at_w_1_the_per_round_score_selects_as_match_totals() -> None:
    # the linear fitness at w = 1 is the score, and per round it is the total over (N - 1) x 200: a common factor
    assert linear_rho("TFT", Fraction(1)) == pytest.approx(RHO_TFT, rel=1e-12)
    assert linear_rho("ALLD", Fraction(1)) == pytest.approx(RHO_ALLD, rel=1e-12)


def test_w_is_weak_at_a_tenth_per_round_and_was_not_on_match_totals() -> None:
    neutral = 1 / N
    weak, strong = linear_rho("TFT", Fraction(1, 10)), linear_rho("TFT", Fraction(1))
    # per round, w = 0.1 is near drift (0.1246 against 0.1) and w = 1 far from it (0.2432)
    assert abs(weak - neutral) < (strong - neutral) / 4
    assert weak == pytest.approx(0.124617, abs=1e-6) and strong == pytest.approx(0.24323, abs=1e-5)

    # on match totals (the old mapping), w = 0.1 selected almost as w = 1: fitness 1 - w + w x (hundreds)
    def totals_rho(w: Fraction) -> float:
        return fixation_probability(
            lambda j: 1 - w + w * ((j - 1) * 600 + (N - j) * 199), lambda j: 1 - w + w * (j * 204 + (N - j - 1) * 200)
        )

    assert totals_rho(Fraction(1, 10)) == pytest.approx(RHO_TFT, rel=0.01)
    assert totals_rho(Fraction(1, 1000)) > 0.2  # still far from drift a hundred times lower


@pytest.mark.parametrize("mutant", ["TFT", "ALLD"])
@pytest.mark.parametrize("w", [0.01, 0.1, 1.0, 5.0])
def test_the_closed_form_in_the_library_is_the_one_derived_here(mutant: str, w: float) -> None:
    table = TABLE / 200 if mutant == "TFT" else TABLE[::-1, ::-1] / 200
    expected = linear_rho(mutant, Fraction(w)) if w <= 1 else None
    if expected is not None:
        assert closed_form(table, N, 1, w, Fitness.linear) == pytest.approx(expected, rel=1e-9)
    assert closed_form(table, N, 1, w, Fitness.exponential) == pytest.approx(exponential_rho(mutant, w), rel=1e-9)
    # from i individuals: the neutral limit is i / N
    assert closed_form(table, N, 3, 0.0, Fitness.exponential) == pytest.approx(3 / N)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mutant", "fitness", "w", "runs"),
    [("TFT", "linear", 0.1, 3000), ("ALLD", "linear", 0.1, 3000), ("TFT", "exponential", 1.0, 3000),
     ("ALLD", "exponential", 0.1, 3000)],
)  # fmt: skip
def test_per_round_fixation_follows_the_formula(mutant: str, fitness: str, w: float, runs: int) -> None:
    expected = linear_rho(mutant, Fraction(w)) if fitness == "linear" else exponential_rho(mutant, w)
    observed = mutant_runs(mutant, runs, selection=w, fitness=fitness)
    assert observed.runs == runs
    assert within_3_se(observed.frequency, expected, runs), (mutant, fitness, w, observed.frequency, expected)


@pytest.mark.slow
def test_match_totals_fix_as_their_formula_says() -> None:
    # the old mapping, kept for runs stored with it: w = 0.002 on totals (fitness 1 - w + w x hundreds)
    w = Fraction(2, 1000)
    expected = fixation_probability(
        lambda j: 1 - w + w * ((j - 1) * 600 + (N - j) * 199), lambda j: 1 - w + w * (j * 204 + (N - j - 1) * 200)
    )
    observed = mutant_runs("TFT", 3000, selection=0.002, score="match_total")
    assert within_3_se(observed.frequency, expected, 3000), (observed.frequency, expected)


@pytest.mark.slow
@pytest.mark.xdist_group(MUTANT_RUNS)
def test_one_tft_among_alld_fixes_as_the_formula_says() -> None:
    runs = mutant_runs("TFT", 3000)
    assert within_3_se(runs.frequency, RHO_TFT, runs.runs), (runs.frequency, RHO_TFT)


@pytest.mark.slow
@pytest.mark.xdist_group(MUTANT_RUNS)
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


@pytest.mark.parametrize("settings", [{"mutation": 0.0}, {"mutation": 0.2, "fitness": "exponential", "selection": 0.5}])
def test_weights_worked_out_once_per_state_play_as_weights_read_every_step(settings: dict[str, object]) -> None:
    # with a fixed table the Moran loop works out each counts state's weights once; reading the table afresh at
    # every step (as for a table played anew each step) must give the same runs, byte for byte
    for seed in range(10):
        s = EvolutionSettings(
            players=["TFT", "ALLD"], counts=[3, N - 3], dynamics="moran", generations=200, seed=seed,
            **settings,  # type: ignore[arg-type]
        )  # fmt: skip
        once = moran.run(s, Payoffs.for_settings(s, TABLE), None)
        every_step = Payoffs.for_settings(s, TABLE)
        every_step.varies = True
        again = moran.run(s, every_step, None)
        assert once.population.tobytes() == again.population.tobytes() and once.fixation == again.fixation
