"""Payne & Alloui-Cros (2025)'s tournament phases: every pair of individual agents plays one match, then the
population moves by the squared-share rule (:func:`harness.evolution.squared_share.next_counts`).

A phase is a round robin of *agents*, not of types: the agents are the population's individuals in population
order (all of player 0, then player 1, ...), and every unordered pair ``i < j`` plays one match, agent i in seat a;
no agent meets itself, two agents of one strategy do meet. Each match draws its own length from the settings'
horizon (a geometric stop probability and its cap), from a seed made of the run seed, the phase and the two agents'
places, so the same settings replay the same run. Matches between two strategies are played here, through
:meth:`Payoffs.match`, i.e. the runner's own games and the cache of deterministic games.

A match with a language model in either seat cannot be played here (this package does not call providers): the
phase hands all of them at once, in agent order, to the caller's :data:`PlayMatches` (``pdbench evolve`` plays
them as one recorded, cached, resumable engine run per phase: :mod:`harness.engine.evolution.phases`) and counts
what it returns into the same tallies. Two agents of one model are two agents: they meet each other, as two
copies of a strategy do.

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from harness.errors import ConfigError
from harness.evolution.payoffs import Payoffs
from harness.evolution.selection import Record
from harness.evolution.settings import EvolutionSettings, is_model
from harness.evolution.squared_share import next_counts, pooled_fitness
from harness.evolution.trajectory import OnGeneration, PhaseScores, Trajectory
from harness.game.seeds import derive_seed


@dataclass(frozen=True, slots=True)
class AgentMatch:
    """One match of a phase that has a language model in at least one seat: agent ``i`` (seat a) against agent
    ``j`` (seat b), by their places in the phase's population order (``i < j``), playing players ``a`` and ``b``
    (indices into the settings' ``players``)."""

    i: int
    j: int
    a: int
    b: int


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A match as played: each seat's total payoff and the rounds it lasted."""

    score_a: float
    score_b: float
    rounds: int


PlayMatches = Callable[[int, tuple[AgentMatch, ...]], Sequence[MatchResult]]
"""Plays the model matches of phase ``generation`` (the first argument) and returns their results in the same
order. Each match draws its own length from the settings' horizon and is played on the settings' game."""


def run(
    settings: EvolutionSettings,
    payoffs: Payoffs,
    on_generation: OnGeneration | None,
    model_matches: PlayMatches | None = None,
) -> Trajectory:
    if settings.models and model_matches is None:
        raise ConfigError(
            f"{', '.join(settings.models)}: the matches of a language model are played through the engine, each "
            "phase (pdbench evolve does this; in code, pass evolve(model_matches=...), e.g. "
            "harness.engine.evolution.phases.PhaseGames)"
        )
    counts = settings.initial_counts.copy()
    record = Record(settings, counts, on_generation)
    phases: list[PhaseScores] = []
    for generation in range(settings.generations + 1):
        phase = play_phase(settings, payoffs, generation, counts, model_matches)
        phases.append(phase)
        if generation == settings.generations:
            break
        counts = update(settings.players, counts, phase)
        record.add(generation + 1, counts)
    return replace(record.trajectory(payoffs.table()), phases=tuple(phases))


def play_phase(
    settings: EvolutionSettings,
    payoffs: Payoffs,
    generation: int,
    counts: np.ndarray,
    model_matches: PlayMatches | None = None,
) -> PhaseScores:
    """Every unordered pair of the agents of ``counts`` plays one match: each player's pooled tallies. Matches
    between two strategies are played here; those with a model, by ``model_matches`` (all of the phase's at once)."""
    k = len(counts)
    agents = np.repeat(np.arange(k), counts).tolist()
    model = [is_model(player) for player in settings.players]
    points = np.zeros(k)
    rounds = np.zeros(k, dtype=np.int64)
    matches = np.zeros(k, dtype=np.int64)
    played: list[tuple[int, int, float, float, int]] = []
    elsewhere: list[AgentMatch] = []
    for i, a in enumerate(agents):
        for j in range(i + 1, len(agents)):
            b = agents[j]
            if model[a] or model[b]:
                elsewhere.append(AgentMatch(i, j, a, b))
                continue
            seed = derive_seed(settings.seed, "evolution", "phase", generation, i, j)
            played.append((a, b, *payoffs.match(a, b, seed)))
    if elsewhere:
        assert model_matches is not None  # run() refuses a population with a model and no way to play it
        results = list(model_matches(generation, tuple(elsewhere)))
        if len(results) != len(elsewhere):  # a broken PlayMatches, not the user's doing
            raise RuntimeError(
                f"phase {generation}: {len(elsewhere)} model matches were to be played, {len(results)} came back"
            )
        for match, result in zip(elsewhere, results, strict=True):
            payoffs.count(match.a, match.b, result.score_a, result.score_b, result.rounds)
            played.append((match.a, match.b, result.score_a, result.score_b, result.rounds))
    for a, b, score_a, score_b, length in played:
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
