"""The stationary distribution in the limit of rare mutations (Fudenberg & Imhof 2006).

With mutations rare enough that a mutant fixes or dies out before the next one appears, the population is almost
always monomorphic, and it moves between the S monomorphic states as an embedded Markov chain: from all-i, a
mutant of one of the other S - 1 types, chosen uniformly, takes over with its fixation probability, so the chain
goes from i to j with probability ``rho[j, i] / (S - 1)`` and stays with the rest. Its stationary distribution is
the share of time the population spends in each state; with two types it is ``rho[0, 1] : rho[1, 0]``.
"""

from __future__ import annotations

import numpy as np

from harness.errors import ConfigError


def embedded_chain(rho: np.ndarray) -> np.ndarray:
    """The S×S transition matrix between monomorphic states (rows: from; columns: to)."""
    s = len(rho)
    chain = np.zeros((s, s))
    for i in range(s):
        for j in range(s):
            if i != j:
                chain[i, j] = rho[j, i] / (s - 1)
        chain[i, i] = 1.0 - chain[i].sum()
    return chain


def stationary_distribution(rho: np.ndarray) -> np.ndarray:
    """The chain's stationary distribution: ``pi (M - I) = 0`` with ``sum pi = 1``, solved exactly (one balance
    equation replaced by the normalisation). A chain that falls apart (fixation probabilities that underflow to 0
    under very strong selection) has none that is unique, and is refused."""
    chain = embedded_chain(rho)
    s = len(chain)
    system = (chain - np.eye(s)).T
    system[-1] = 1.0
    rhs = np.zeros(s)
    rhs[-1] = 1.0
    try:
        pi = np.linalg.solve(system, rhs)
    except np.linalg.LinAlgError:
        raise ConfigError(
            "the small-mutation chain has no unique stationary distribution: some fixation probabilities are 0 "
            "(selection so strong that they underflow); lower the selection intensity or the population size"
        ) from None
    return np.asarray(np.clip(pi, 0.0, None) / np.clip(pi, 0.0, None).sum(), dtype=np.float64)
