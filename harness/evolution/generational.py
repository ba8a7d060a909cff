"""The guide's generational process: every individual plays every other, then the whole next
generation of N is drawn by roulette wheel in proportion to fitness.

Drawing N offspring independently, each of type i with probability ``n_i F_i / sum_j n_j F_j`` and
then mutating with the settings' rate to a uniformly chosen other type, is one multinomial draw of
N over the mutated shares (:func:`~harness.evolution.selection.mutated_shares`); that is how it is
drawn. All-zero fitness (a linear fitness of 0 for everyone) is neutral: shares in proportion to
the counts. Without mutation the run stops at fixation.
"""

from __future__ import annotations

import numpy as np

from harness.evolution.payoffs import Payoffs
from harness.evolution.selection import Record, generator, mutated_shares, scores, weights
from harness.evolution.settings import EvolutionSettings
from harness.evolution.trajectory import OnGeneration, Trajectory


def run(settings: EvolutionSettings, payoffs: Payoffs, on_generation: OnGeneration | None) -> Trajectory:
    rng = generator(settings, "generational")
    counts = settings.initial_counts.copy()
    record = Record(settings, counts, on_generation)
    for generation in range(settings.generations):
        if record.stopped:
            break
        score = scores(payoffs.at(generation, counts, settings.score), counts, settings.score)
        weight = np.array(weights(settings, score, counts.tolist()))
        if not weight.any():
            weight = counts.astype(np.float64)
        shares = weight / weight.sum()
        if settings.mutation > 0.0:
            shares = mutated_shares(shares, settings.mutation)
        counts = rng.multinomial(record.size, shares)
        record.add(generation + 1, counts)
    return record.trajectory(payoffs.table())
