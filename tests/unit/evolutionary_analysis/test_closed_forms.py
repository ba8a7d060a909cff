"""The analysis's fixation, gradient, stationary distribution and invasion graph against closed forms worked by
hand: neutral drift, a 2×2 table in a population of 3 (exact fractions), the two-strategy stationary distribution
as the ratio of fixation probabilities, and the balance of the embedded chain."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from harness.analysis.evolutionary import Population, Process, figures
from harness.analysis.evolutionary.fixation import fixation_matrix
from harness.analysis.evolutionary.gradient import Contest, contest, gradient, root
from harness.analysis.evolutionary.invasion import invades
from harness.analysis.evolutionary.stationary import embedded_chain, stationary_distribution
from harness.errors import ConfigError

PD = np.array([[3.0, 0.0], [5.0, 1.0]])  # ALLC (0) and ALLD (1): payoffs per round
RNG_TABLES = [np.random.default_rng(seed).uniform(0, 5, (k, k)) for seed, k in enumerate((2, 3, 4, 5, 3))]


@pytest.mark.parametrize("process", list(Process))
@pytest.mark.parametrize("size", [2, 7, 100])
def test_without_selection_every_mutant_fixes_with_the_neutral_1_over_n(process: Process, size: int) -> None:
    for table in RNG_TABLES:
        f = figures(table, Population(process, 0.0, size), replicator=False)
        off = ~np.eye(len(table), dtype=bool)
        assert np.allclose(f.rho[off], 1 / size, rtol=1e-12)
        assert np.allclose(f.stationary, 1 / len(table))  # every state alike
        assert not invades(f.rho * (1 - 1e-9), size).any()
        assert all(np.allclose(g, 0.0) for g in f.gradients.values())


def test_a_2x2_table_in_a_population_of_3_under_the_moran_process_by_hand() -> None:
    # w = 1/2, fitness 1 - w + w * payoff. One ALLC among two ALLD: ALLC earns (0*3 + 2*0)/2 = 0 -> f1 = 1/2, an
    # ALLD earns (5 + 1)/2 = 3 -> g1 = 2. Two ALLC: an ALLC earns (3 + 0)/2 = 3/2 -> f2 = 5/4; the ALLD (5 + 5)/2
    # = 5 -> g2 = 3. rho_C = 1 / (1 + g1/f1 + g1 g2 / (f1 f2)) = 1 / (1 + 4 + 48/5) = 5/73; from two ALLC the
    # ALLC fix with (1 + 4) / (73/5) = 25/73, so one ALLD among two ALLC fixes with 48/73.
    rho = fixation_matrix(PD, Population(Process.moran, 0.5, 3))
    assert rho[0, 1] == pytest.approx(float(Fraction(5, 73)), rel=1e-14)
    assert rho[1, 0] == pytest.approx(float(Fraction(48, 73)), rel=1e-14)
    # The stationary distribution of two states is the ratio of the fixation probabilities: 5 : 48.
    pi = stationary_distribution(rho)
    assert pi == pytest.approx([5 / 53, 48 / 53], rel=1e-12)
    # T+ and T- at k = 1: T+ = f1 / (f1 + 2 g1) * 2/3 = 2/27, T- = 2 g1 / (f1 + 2 g1) * 1/3 = 8/27.
    g = gradient(PD, 0, 1, Population(Process.moran, 0.5, 3))
    assert g[0] == pytest.approx(2 / 27 - 8 / 27, rel=1e-14)
    # k = 2: T+ = 2 f2 / (2 f2 + g2) * 1/3 = (5/2) / (11/2) / 3 = 5/33, T- = g2 / (11/2) * 2/3 = 4/11.
    assert g[1] == pytest.approx(5 / 33 - 4 / 11, rel=1e-14)
    assert contest(g) is Contest.j_favoured


def test_the_same_table_under_the_fermi_rule_by_hand() -> None:
    # T-/T+ = exp(-beta (payoff_C - payoff_D)): e^3 at one ALLC (0 against 3), e^3.5 at two (3/2 against 5).
    rho = fixation_matrix(PD, Population(Process.fermi, 1.0, 3))
    assert rho[0, 1] == pytest.approx(1 / (1 + math.exp(3) + math.exp(6.5)), rel=1e-13)
    assert rho[1, 0] == pytest.approx(1 - (1 + math.exp(3)) / (1 + math.exp(3) + math.exp(6.5)), rel=1e-13)
    # G(k) = (k / N) ((N - k) / (N - 1)) tanh(beta / 2 (payoff_C - payoff_D))
    g = gradient(PD, 0, 1, Population(Process.fermi, 1.0, 3))
    assert g == pytest.approx([1 / 3 * math.tanh(-1.5), 2 / 3 * 1 / 2 * math.tanh(-1.75)], rel=1e-14)


@pytest.mark.parametrize("process", list(Process))
def test_two_strategies_share_the_long_run_in_the_ratio_of_their_fixation_probabilities(process: Process) -> None:
    for seed in range(20):
        table = np.random.default_rng(seed).uniform(0.5, 4, (2, 2))
        population = Population(process, 0.3, 5 + seed)
        rho = fixation_matrix(table, population)
        pi = stationary_distribution(rho)
        assert pi[0] / pi[1] == pytest.approx(rho[0, 1] / rho[1, 0], rel=1e-10)


def test_the_stationary_distribution_balances_the_embedded_chain() -> None:
    for table in RNG_TABLES:
        rho = fixation_matrix(table, Population(Process.fermi, 0.5, 20))
        chain = embedded_chain(rho)
        s = len(table)
        assert np.allclose(chain.sum(axis=1), 1.0)
        assert chain[0, 1] == pytest.approx(rho[1, 0] / (s - 1))  # from all-0 to all-1: a 1 mutant fixes
        pi = stationary_distribution(rho)
        assert pi @ chain == pytest.approx(pi, abs=1e-14) and pi.sum() == pytest.approx(1.0)


def test_the_invasion_graph_compares_each_fixation_probability_with_1_over_n() -> None:
    rho = fixation_matrix(PD, Population(Process.moran, 0.1, 10))
    edges = invades(rho, 10)
    assert edges.tolist() == [[False, False], [True, False]]  # ALLD invades ALLC, not the reverse
    assert rho[1, 0] > 0.1 > rho[0, 1]


def test_a_hawk_dove_pair_coexists_where_both_earn_the_same() -> None:
    # Hawk (0) and dove (1): with j hawks among N = 11, pi_H - pi_D = (N + 2 - 2j) / (N - 1), 0 at j = 6.5.
    hawk_dove = np.array([[0.0, 3.0], [1.0, 2.0]])
    for process in Process:
        g = gradient(hawk_dove, 0, 1, Population(process, 0.5, 11))
        assert contest(g) is Contest.coexistence
        at = root(g)
        assert at is not None and 6 / 11 < at < 7 / 11
    coordination = np.array([[2.0, 0.0], [0.0, 1.0]])
    assert contest(gradient(coordination, 0, 1, Population(Process.fermi, 1.0, 30))) is Contest.coordination


def test_a_population_too_small_or_a_fitness_that_is_not_positive_is_refused_before_anything_runs() -> None:
    with pytest.raises(ConfigError, match="smaller than the 3 players"):
        Population(Process.moran, 0.1, 2).check(3, (0.0, 5.0))
    with pytest.raises(ConfigError, match="must be positive; lower --selection below 1"):
        Population(Process.moran, 1.0, 10).check(2, (0.0, 5.0))
    with pytest.raises(ConfigError, match="must not be negative"):
        Population(Process.fermi, -1.0, 10).check(2, (0.0, 5.0))
    Population(Process.fermi, 5.0, 10).check(2, (-1.0, 5.0))  # the exponential fitness is always positive
