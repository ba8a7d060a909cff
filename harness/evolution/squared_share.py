"""Payne & Alloui-Cros (2025)'s population update: each strategy's count times its squared relative fitness.

Source: github.com/HCSS-Data-Lab/Strategic-LLM-IPD, ``evolutionary_PD_expanded.py`` (commit 5a61dcb1),
function ``evolve_population``; docs/protocols/payne2025.md, "Selection", gives the steps with their sources.
This is our own code for the same arithmetic, so that a PDBench run of their protocol moves its population
exactly as theirs did: tests/unit/test_squared_share.py replays the 16 updates of their four released runs.

Deterministic given the fitnesses: there is no draw anywhere (ties go to the first strategy in population order).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from harness.errors import ConfigError

NUDGE_BUDGET = 100
"""Single +1/-1 steps allowed to bring the total back to N: [R]'s ``max_adjustments = 100``, shared by both loops."""


def pooled_fitness(total_score: float, total_rounds: int) -> float:
    """A strategy's fitness in [R]: the points of all its agents over all their matches in the phase, divided by
    all those matches' rounds (a ratio of sums, not a mean of per-match rates; a match between two copies counts
    both sides' points and its rounds twice)."""
    if total_rounds <= 0:
        raise ConfigError(f"A strategy's pooled fitness needs at least one round played, got {total_rounds} rounds.")
    return total_score / total_rounds


def next_counts(
    counts: Mapping[str, int], fitness: Mapping[str, float], *, budget: int = NUDGE_BUDGET
) -> dict[str, int]:
    """The population after one phase, from ``counts`` (strategy -> agents, in population order) and ``fitness``
    (strategy -> pooled points per round, :func:`pooled_fitness`, for every strategy present).

    Steps, each as [R] does it:

    1. The mean is the *unweighted* mean of the fitnesses of the strategies present (``total_fitness /
       len(strategy_fitness)``): a strategy with one agent weighs as much as one with ten.
    2. The raw count is ``(fitness / mean) ** 2 * count``, computed in that order so that a half lands exactly
       where theirs does; squaring is theirs ("to amplify differences").
    3. It is rounded with Python's ``round`` (halves to even: 2.5 -> 2, 3.5 -> 4), then clamped at 0.
    4. While the total exceeds N, the lowest-fitness strategy still above 0 loses one; then, while the total is
       below N, the highest-fitness strategy gains one. Ties go to the first in population order (``min`` and
       ``max`` over the dict). Both loops share one budget of ``budget`` single steps; when it runs out the total
       stays off N, as in [R] (it takes one strategy at many times the mean, and never happened in their runs).
    5. Strategies at 0 are dropped: extinction is permanent (there is no mutation in [R]).

    If every fitness is 0, [R] sets every count to 0, so the population is empty; with positive payoffs it cannot
    happen (some player scores in every round). Strategies with a count of 0 in ``counts`` are absent.
    """
    present = {name: count for name, count in counts.items() if count > 0}
    if any(count < 0 for count in counts.values()):
        raise ConfigError(f"Population counts must be whole numbers of agents >= 0, got {dict(counts)}.")
    if set(fitness) != set(present):
        raise ConfigError(
            f"The squared-share update needs a fitness for exactly the strategies present: present "
            f"{sorted(present)}, fitness given for {sorted(fitness)}."
        )
    if any(not math.isfinite(value) or value < 0 for value in fitness.values()):
        raise ConfigError(f"Fitnesses must be finite points per round >= 0, got {dict(fitness)}.")
    total_fitness = sum(fitness[name] for name in present)
    if total_fitness == 0:
        return {}
    mean = total_fitness / len(present)
    size = sum(present.values())
    new = {name: max(0, round((fitness[name] / mean) ** 2 * count)) for name, count in present.items()}
    steps = 0
    while sum(new.values()) > size and steps < budget:
        steps += 1
        weakest = min((name for name in new if new[name] > 0), key=lambda name: fitness[name])
        new[weakest] -= 1
    fittest = max(present, key=lambda name: fitness[name])
    while sum(new.values()) < size and steps < budget:
        steps += 1
        new[fittest] += 1
    return {name: count for name, count in new.items() if count > 0}
