"""Payne & Alloui-Cros (2025)'s tournament phases: every pair of individual agents plays one match, then the
population moves by the squared-share rule (:func:`harness.evolution.squared_share.next_counts`).

A phase is a round robin of *agents*, not of types: the agents are the population's individuals in population
order (all of player 0, then player 1, ...), and every unordered pair ``i < j`` plays one match, agent i in seat a;
no agent meets itself, two agents of one strategy do meet. Each match draws its own length from the settings'
horizon (a geometric stop probability and its cap), from a seed made of the run seed, the phase and the two agents'
places, so the same settings replay the same run. Matches are played through :meth:`Payoffs.match`, i.e. the
runner's own games and the cache of deterministic games.

Each strategy's fitness is its *pooled* score: the points of all its agents over all their matches of the phase
over those matches' rounds (:func:`~harness.evolution.squared_share.pooled_fitness`). That is not PDBench's
per-round score (a mean over opponents of each match's rate), which weighs a 1-round match as much as a 30-round
one; docs/protocols/payne2025.md says why the protocol needs the ratio of sums.

``generations`` counts updates. After the last update one more phase is played on the last population, for its
games and scores (their 5 phases are 4 updates), so a run has ``generations + 1`` phases, each kept in
:attr:`Trajectory.phases`. A strategy at 0 is gone for good (the rule has no mutation). The run does not stop at
fixation: every phase is played, as theirs were.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.evolution.payoffs import Payoffs
from harness.evolution.selection import Record
from harness.evolution.settings import EvolutionSettings
from harness.evolution.squared_share import next_counts, pooled_fitness
from harness.evolution.trajectory import OnGeneration, PhaseScores, Trajectory
from harness.game.seeds import derive_seed


def run(settings: EvolutionSettings, payoffs: Payoffs, on_generation: OnGeneration | None) -> Trajectory:
    counts = settings.initial_counts.copy()
    record = Record(settings, counts, on_generation)
    phases: list[PhaseScores] = []
    for generation in range(settings.generations + 1):
        phase = play_phase(settings, payoffs, generation, counts)
        phases.append(phase)
        if generation == settings.generations:
            break
        counts = update(settings.players, counts, phase)
        record.add(generation + 1, counts)
    return replace(record.trajectory(payoffs.table()), phases=tuple(phases))


def play_phase(settings: EvolutionSettings, payoffs: Payoffs, generation: int, counts: np.ndarray) -> PhaseScores:
    """Every unordered pair of the agents of ``counts`` plays one match: each player's pooled tallies."""
    k = len(counts)
    agents = np.repeat(np.arange(k), counts).tolist()
    points = np.zeros(k)
    rounds = np.zeros(k, dtype=np.int64)
    matches = np.zeros(k, dtype=np.int64)
    for i, a in enumerate(agents):
        for j in range(i + 1, len(agents)):
            b = agents[j]
            seed = derive_seed(settings.seed, "evolution", "phase", generation, i, j)
            score_a, score_b, length = payoffs.match(a, b, seed)
            points[a] += score_a
            points[b] += score_b
            rounds[a] += length
            rounds[b] += length
            matches[a] += 1
            matches[b] += 1
    for array in (points, rounds, matches):
        array.setflags(write=False)
    return PhaseScores(generation, points, rounds, matches)


def update(players: list[str], counts: np.ndarray, phase: PhaseScores) -> np.ndarray:
    """The population after ``phase``: the squared-share rule on each present strategy's pooled fitness."""
    alive = [t for t in range(len(players)) if counts[t] > 0]
    present = {players[t]: int(counts[t]) for t in alive}
    fitness = {players[t]: pooled_fitness(float(phase.points[t]), int(phase.rounds[t])) for t in alive}
    new = next_counts(present, fitness)
    return np.array([new.get(name, 0) for name in players], dtype=np.int64)
