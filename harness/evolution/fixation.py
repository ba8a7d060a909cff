"""The exact fixation probability of two types under the Moran process, from the payoffs per round.

A birth-death Moran process of N individuals, i of type A and N - i of type B, without mutation, fixes A with
probability ``(1 + sum_{k=1}^{i-1} prod_{j=1}^{k} g_j / f_j) / (1 + sum_{k=1}^{N-1} prod_{j=1}^{k} g_j / f_j)``,
where ``f_j`` and ``g_j`` are the fitness of an A and of a B when j individuals play A (Nowak 2006, Evolutionary
Dynamics, eq. 6.13; Nowak et al. 2004 for frequency-dependent payoffs). Under the exponential fitness the ratio
is ``exp(-w (pi_A(j) - pi_B(j)))``, the same as the pairwise comparison (Fermi) process's
(Traulsen et al. 2006). Here the payoffs are the per-round scores the dynamics read (:class:`Score.per_round`),
so what this says is what a run of the same settings does, in the long run over seeds.
"""

from __future__ import annotations

import math

import numpy as np

from harness.errors import ConfigError
from harness.evolution.settings import Fitness


def pair_payoffs(rates: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The payoffs per round of an A and of a B when j individuals of ``size`` play A, for j = 1 .. N - 1: each
    meets the N - 1 others (never itself), ``rates`` being the 2×2 table of payoffs per round of A (row and column
    0) and B. What every two-type closed form (fixation, the gradient of selection) reads."""
    j = np.arange(1, size, dtype=np.float64)
    a = ((j - 1) * rates[0, 0] + (size - j) * rates[0, 1]) / (size - 1)  # an A among j A and N - j B
    b = (j * rates[1, 0] + (size - j - 1) * rates[1, 1]) / (size - 1)  # a B among them
    return a, b


def fixation_probability(rates: np.ndarray, size: int, start: int, selection: float, fitness: Fitness) -> float:
    """The probability that type A (row and column 0 of the 2×2 table ``rates`` of payoffs per round) takes
    over a population of ``size`` from ``start`` individuals (1 <= start < size), under the Moran process with
    selection intensity ``selection`` and the given fitness mapping. Computed in logarithms, so that strong
    selection cannot overflow."""
    if rates.shape != (2, 2) or not 1 <= start < size:
        raise ConfigError(f"a fixation probability needs two types and 1 <= start < N; got {rates.shape}, {start}")
    a, b = pair_payoffs(rates, size)
    # log of prod_{j <= k} g_j / f_j, for k = 0 .. N - 1 (a cumulative sum adds in the same order as a loop)
    logs = np.concatenate(([0.0], np.cumsum(_log_ratios(a, b, selection, fitness))))
    weights = np.exp(logs - logs.max())
    return math.fsum(weights[:start].tolist()) / math.fsum(weights.tolist())


def _log_ratios(a: np.ndarray, b: np.ndarray, w: float, fitness: Fitness) -> np.ndarray:
    """``log(g / f)`` for the scores ``a`` (type A) and ``b`` (type B), element by element."""
    if fitness == Fitness.exponential:
        return np.asarray(w * (b - a), dtype=np.float64)
    f, g = 1.0 - w + w * a, 1.0 - w + w * b
    bad = (f <= 0.0) | (g <= 0.0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ConfigError(
            f"the linear fitness 1 - w + w * score is not positive (w = {w:g}, scores {a[i]:g} and {b[i]:g}): the "
            "fixation probability has no meaning there; lower w or use the exponential fitness"
        )
    return np.asarray(np.log(g) - np.log(f), dtype=np.float64)
