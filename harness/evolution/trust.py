"""The Evolution of Trust's rule: play a round robin, remove the k lowest scorers, copy the k highest.

Each generation every individual's score is its total payoff against every other individual, as in The
Evolution of Trust, whatever the settings' ``score`` (for a fixed horizon the per-round score ranks alike); all N
are ranked by score, ties in a uniformly random order (one uniform key per individual, drawn from
the run's seeded stream every generation, sorts the individuals that share a score). The first k of
that order are removed and the last k are copied (k <= N/2, so no individual is both); each copy
becomes, with the mutation rate, a uniformly chosen other type. The rank is by score, which every
fitness mapping with w > 0 preserves; with w = 0 every individual ties, so the rule is neutral drift.
Without mutation the run stops at fixation.
"""

from __future__ import annotations

import numpy as np

from harness.evolution.payoffs import Payoffs
from harness.evolution.selection import Record, generator, mutate, scores
from harness.evolution.settings import EvolutionSettings, Score
from harness.evolution.trajectory import OnGeneration, Trajectory


def run(settings: EvolutionSettings, payoffs: Payoffs, on_generation: OnGeneration | None) -> Trajectory:
    rng = generator(settings, "trust")
    counts = settings.initial_counts.copy()
    record = Record(settings, counts, on_generation)
    types, k = len(counts), settings.k
    for generation in range(settings.generations):
        if record.stopped:
            break
        points = scores(payoffs.at(generation, counts, Score.match_total), counts, Score.match_total)
        removed, copied = replaced(settings, points, counts, rng)
        if settings.mutation > 0.0:
            mutates = rng.random(k) < settings.mutation
            copied = np.array(
                [mutate(int(t), types, rng.random()) if m else int(t) for t, m in zip(copied, mutates, strict=True)]
            )
        counts = counts - np.bincount(removed, minlength=types) + np.bincount(copied, minlength=types)
        record.add(generation + 1, counts)
    return record.trajectory(payoffs.table())


def replaced(
    settings: EvolutionSettings, score: list[float], counts: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The types of the k individuals removed and of the k copied, lowest and highest first."""
    individuals = np.repeat(np.arange(len(counts)), counts)
    ranked = np.asarray(score)[individuals] if settings.selection > 0.0 else np.zeros(len(individuals))
    order = np.lexsort((rng.random(len(individuals)), ranked))
    return individuals[order[: settings.k]], individuals[order[len(order) - settings.k :]][::-1]
