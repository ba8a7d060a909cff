"""The gradient of selection of a pair: ``G(k) = T+(k) - T-(k)`` for k = 1 .. N - 1 individuals of type i among
N - k of type j, the expected change in k in one step (Traulsen, Nowak & Pacheco 2006; Pacheco et al. 2009).

* Moran (birth-death, fitness ``f = 1 - w + w * payoff``): ``T+ = k f_i / (k f_i + (N - k) f_j) * (N - k) / N``
  and ``T- = (N - k) f_j / (k f_i + (N - k) f_j) * k / N``.
* Fermi: ``T+/- = (k / N) ((N - k) / (N - 1)) / (1 + exp(-/+ beta (payoff_i - payoff_j)))``, so ``G(k) =
  (k / N) ((N - k) / (N - 1)) tanh(beta / 2 (payoff_i - payoff_j))``, EGTtools' convention (the role model is one of
  the other N - 1).

Where G is positive selection favours i. Its sign pattern along k says how the pair's contest goes
(:class:`Contest`): one type favoured throughout, a stable mixture (coexistence: G goes from + to -) or a threshold
(coordination: from - to +).
"""

from __future__ import annotations

import itertools
from enum import StrEnum

import numpy as np

from harness.analysis.evolutionary.fixation import pair_table
from harness.analysis.evolutionary.process import Population, Process
from harness.evolution.fixation import pair_payoffs


class Contest(StrEnum):
    """How selection acts along the edge from all-j (k = 0) to all-i (k = N), from the signs of G."""

    i_favoured = "i favoured"
    """G > 0 for every k: i is favoured wherever it is."""
    j_favoured = "j favoured"
    """G < 0 for every k."""
    coexistence = "coexistence"
    """G changes sign once, from + to -: a stable mixture of both types."""
    coordination = "coordination"
    """G changes sign once, from - to +: whichever type passes the threshold takes over."""
    neutral = "neutral"
    """G = 0 for every k (the two types' payoffs are the same whatever the mixture)."""
    mixed = "mixed"
    """G changes sign more than once."""


def gradient(table: np.ndarray, i: int, j: int, population: Population) -> np.ndarray:
    """``G(k)`` for k = 1 .. N - 1 (see the module)."""
    n = population.size
    a, b = pair_payoffs(pair_table(table, i, j), n)
    k = np.arange(1, n, dtype=np.float64)
    w = population.intensity
    if population.process is Process.fermi:
        return np.asarray(k / n * (n - k) / (n - 1) * np.tanh(w / 2 * (a - b)), dtype=np.float64)
    fi, fj = 1.0 - w + w * a, 1.0 - w + w * b
    total = k * fi + (n - k) * fj
    return np.asarray((k * fi * (n - k) - (n - k) * fj * k) / (total * n), dtype=np.float64)


def contest(g: np.ndarray, tolerance: float = 1e-12) -> Contest:
    """The sign pattern of ``g`` (see :class:`Contest`); values within ``tolerance`` of 0 carry no sign."""
    signs = np.sign(np.where(np.abs(g) <= tolerance, 0.0, g))
    signs = signs[signs != 0]
    if not len(signs):
        return Contest.neutral
    changes = np.flatnonzero(np.diff(signs))
    if not len(changes):
        return Contest.i_favoured if signs[0] > 0 else Contest.j_favoured
    if len(changes) > 1:
        return Contest.mixed
    return Contest.coexistence if signs[0] > 0 else Contest.coordination


def root(g: np.ndarray, tolerance: float = 1e-12) -> float | None:
    """Where ``g`` first changes sign, as a share of the population k / N: interpolated linearly between the two k
    around it, or the middle of the k where it is 0 between them; None if it never changes sign."""
    n = len(g) + 1
    signed = [(k, float(x)) for k, x in enumerate(g.tolist(), start=1) if abs(x) > tolerance]
    for (k0, x), (k1, y) in itertools.pairwise(signed):
        if x * y < 0:
            at = k0 + x / (x - y) if k1 == k0 + 1 else (k0 + k1) / 2
            return at / n
    return None
