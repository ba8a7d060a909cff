"""The fixation matrix: ``rho[i, j]``, the probability that one individual of type i, among N - 1 of type j, takes
over the population (no mutation). Each cell is the two-type closed form of :mod:`harness.evolution.fixation`
(Nowak 2006, eq. 6.13) on the 2×2 sub-table of i and j; under the Fermi rule with the exponential fitness, whose
ratio T-/T+ is the pairwise comparison's. The diagonal is NaN: a type does not invade itself.
"""

from __future__ import annotations

import numpy as np

from harness.analysis.evolutionary.process import Population
from harness.evolution.fixation import fixation_probability


def pair_table(table: np.ndarray, i: int, j: int) -> np.ndarray:
    """The 2×2 table of i (row and column 0) and j."""
    return np.array([[table[i, i], table[i, j]], [table[j, i], table[j, j]]], dtype=np.float64)


def fixation_matrix(table: np.ndarray, population: Population) -> np.ndarray:
    """``rho[i, j]`` for every ordered pair of the k×k ``table`` of payoffs per round (see the module)."""
    k = len(table)
    rho = np.full((k, k), np.nan)
    for i in range(k):
        for j in range(k):
            if i != j:
                rho[i, j] = fixation_probability(
                    pair_table(table, i, j), population.size, 1, population.intensity, population.process.fitness
                )
    return rho
