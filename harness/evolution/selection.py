"""What every finite dynamics shares: an individual's score from the counts, its fitness, mutation,
the run's random stream, and the record of the population generation by generation.

All of it works on counts per type, never on a list of individuals: every individual of a type has
the same score (it meets the same others), so a step costs O(types), not a round robin.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np

from harness.errors import ConfigError
from harness.evolution.settings import EvolutionSettings, Fitness, Score
from harness.evolution.trajectory import Fixation, OnGeneration, PayoffTable, Trajectory
from harness.game.seeds import derive_seed


def generator(settings: EvolutionSettings, name: str) -> np.random.Generator:
    """The dynamics' own random stream, from the run seed alone (the matches have theirs)."""
    return np.random.Generator(np.random.PCG64(derive_seed(settings.seed, "evolution", name)))


def uniform(settings: EvolutionSettings, name: str) -> Callable[[], float]:
    """Uniform draws in [0, 1) from the run seed alone, for a loop that takes one at a time (Python's own
    generator: a scalar draw costs a tenth of numpy's)."""
    return random.Random(derive_seed(settings.seed, "evolution", name)).random


def scores(table: np.ndarray, counts: np.ndarray, unit: Score) -> list[float]:
    """The score of one individual of each type, from ``table`` in ``unit`` (:meth:`Payoffs.at`): its payoff
    against every other individual, ``sum_j table[i, j] * counts[j]`` less one match against itself, which it
    does not play; per round, that sum over the N - 1 others (the mean over the opponents met)."""
    total = table @ counts - table.diagonal()
    if unit == Score.per_round:
        total = total / (int(counts.sum()) - 1)
    return list(total.tolist())


def weights(settings: EvolutionSettings, score: list[float], counts: list[int]) -> list[float]:
    """Each type's weight in reproduction: ``counts_i * fitness_i``, the fitness of an individual of type i
    being its score mapped by the settings (absent types weigh 0).

    Exponential fitness is computed as ``exp(w * (score - max score present))``: the same fitness up to
    a common factor, which selection in proportion to fitness ignores, and it cannot overflow.
    A linear fitness below 0 has no meaning as a weight and is refused.
    """
    w = settings.selection
    if settings.fitness == Fitness.exponential:
        top = max(x for x, n in zip(score, counts, strict=True) if n)
        return [n * math.exp(w * (x - top)) if n else 0.0 for x, n in zip(score, counts, strict=True)]
    out = [n * ((1.0 - w) + w * x) if n else 0.0 for x, n in zip(score, counts, strict=True)]
    if min(out) < 0.0:
        i = out.index(min(out))
        raise ConfigError(
            f"the linear fitness 1 - w + w * score is negative for {settings.players[i]} (score {score[i]:g}, "
            f"w = {w:g}): fitness weighs reproduction, so it must not be negative; lower the selection intensity "
            "w, shift the payoff matrix so that scores are not negative, or use the exponential fitness"
        )
    return out


def pick(weights: list[float] | list[int], u: float) -> int:
    """The index chosen with probability proportional to ``weights`` (non-negative, not all 0) for a
    uniform draw ``u`` in [0, 1): the first index whose cumulative weight exceeds ``u * total`` (the last
    index with a weight, should rounding put ``u * total`` at the total)."""
    target = u * sum(weights)
    cumulative = 0.0
    last = 0
    for i, x in enumerate(weights):
        if x > 0:
            cumulative += x
            last = i
            if cumulative > target:
                return i
    return last


def mutate(parent: int, types: int, u: float) -> int:
    """A uniformly chosen type other than ``parent``, for a uniform draw ``u`` in [0, 1)."""
    other = min(int(u * (types - 1)), types - 2)
    return other if other < parent else other + 1


def mutated_shares(p: np.ndarray, rate: float) -> np.ndarray:
    """The type of an offspring whose parent's type is drawn from ``p`` and which then, with probability
    ``rate``, becomes a uniformly chosen other type: ``p_i (1 - rate) + (1 - p_i) rate / (k - 1)``."""
    k = len(p)
    out = p * (1.0 - rate) + (1.0 - p) * rate / (k - 1)
    return np.asarray(out / out.sum(), dtype=np.float64)


class Record:
    """The population generation by generation, the first fixation, and the live view's callback."""

    def __init__(self, settings: EvolutionSettings, counts: np.ndarray, on_generation: OnGeneration | None) -> None:
        self.settings = settings
        self.rows = np.empty((min(settings.generations + 1, 1024), len(counts)), dtype=np.int64)
        self.size = int(counts.sum())
        self.last = 0
        self.fixation: Fixation | None = None
        self.callback = on_generation
        self.add(0, counts)

    @property
    def stopped(self) -> bool:
        """Whether the run is over early: fixed without mutation, so nothing can change any more."""
        return self.fixation is not None and self.settings.mutation == 0.0

    def add(self, generation: int, counts: np.ndarray | list[int]) -> None:
        if generation == len(self.rows):  # grown by doubling: a run that fixes early never holds its budget
            grown = np.empty((min(2 * len(self.rows), self.settings.generations + 1), self.rows.shape[1]), np.int64)
            grown[: len(self.rows)] = self.rows
            self.rows = grown
        row = self.rows[generation]
        row[:] = counts
        self.last = generation
        if self.fixation is None and row.max() == self.size:
            self.fixation = Fixation(generation, self.settings.players[int(row.argmax())])
        if self.callback is not None:
            view = row.view()
            view.setflags(write=False)
            self.callback(generation, view)

    def trajectory(self, payoffs: PayoffTable) -> Trajectory:
        rows = self.rows[: self.last + 1].copy()
        rows.setflags(write=False)
        return Trajectory(tuple(self.settings.players), rows, self.size, self.fixation, payoffs)
