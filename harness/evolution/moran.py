"""The Moran process, birth-death (as the Axelrod library's ``MoranProcess`` in its default mode).

Each step: every individual's fitness is read from the counts (its score against every other individual,
per round or in match totals as the settings' ``score`` says, mapped by the settings' fitness); one
individual is chosen to reproduce with probability proportional to fitness; its offspring becomes, with
the mutation rate, a uniformly chosen other type; and it replaces one individual chosen uniformly among
all N (possibly the parent). Without mutation the run stops at fixation, else after ``generations``
steps. Row ``g`` of the trajectory is the population after step ``g``.
"""

from __future__ import annotations

from harness.evolution.payoffs import Payoffs
from harness.evolution.selection import Record, mutate, pick, scores, uniform, weights
from harness.evolution.settings import EvolutionSettings
from harness.evolution.trajectory import OnGeneration, Trajectory


def run(settings: EvolutionSettings, payoffs: Payoffs, on_generation: OnGeneration | None) -> Trajectory:
    rand = uniform(settings, "moran")
    counts = settings.initial_counts.copy()  # for the table product
    n = counts.tolist()  # the same counts, for the scalar loop
    record = Record(settings, counts, on_generation)
    types, rate = len(n), settings.mutation
    # A fixed table makes each type's weight a function of the counts alone, and a run revisits the same few
    # counts over and over (N + 1 of them with two types): each is worked out once, the same way, so a run is
    # the same byte for byte, in about half the time. A table played afresh each step (random pairs) is not.
    known: dict[tuple[int, ...], list[float]] | None = None if payoffs.varies else {}
    for step in range(settings.generations):
        if record.stopped:
            break
        state = tuple(n)
        weight = known.get(state) if known is not None else None
        if weight is None:
            weight = weights(settings, scores(payoffs.at(step, counts, settings.score), counts, settings.score), n)
            if known is not None:
                known[state] = weight
        parent = pick(weight if any(weight) else n, rand())
        dead = pick(n, rand())
        child = mutate(parent, types, rand()) if rate > 0.0 and rand() < rate else parent
        n[dead] -= 1
        n[child] += 1
        counts[dead] -= 1
        counts[child] += 1
        record.add(step + 1, counts)
    return record.trajectory(payoffs.table())
