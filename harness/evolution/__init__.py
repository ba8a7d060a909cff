"""Population evolution: strategies (and language models) as individuals of a population that plays
the iterated Prisoner's Dilemma and changes by selection, after The Evolution of Trust.

Pure code: no I/O, no SQL, no printing. :func:`evolve` runs one of five dynamics (:class:`Dynamics`)
from :class:`EvolutionSettings` and returns a :class:`Trajectory`; the same settings and seed give
the same trajectory, byte for byte. Storage, the CLI and the dashboard build on it.

May import: errors, states, util, game, players, config.
"""

from __future__ import annotations

import numpy as np

from harness.evolution.phases import AgentMatch, MatchResult, PlayMatches
from harness.evolution.settings import Dynamics, EvolutionSettings, Fitness, PayoffMode, Score
from harness.evolution.trajectory import Fixation, OnGeneration, PayoffSource, PayoffTable, PhaseScores, Trajectory


def evolve(
    settings: EvolutionSettings,
    *,
    payoffs: PayoffTable | np.ndarray | None = None,
    on_generation: OnGeneration | None = None,
    model_matches: PlayMatches | None = None,
) -> Trajectory:
    """Run the dynamics ``settings.dynamics`` from the settings' initial population.

    ``payoffs``: a k×k table of mean match payoffs (row player against column player, in the order
    of ``settings.players``) obtained elsewhere, e.g. from games with a language model played through
    the engine; it is used as it is for every generation. Without it, the table is played here through
    the engine (see :mod:`harness.evolution.payoffs`); a population with a model player needs it.
    ``model_matches``: under the squared_share dynamics, what plays each phase's matches that have a language
    model in a seat (see :mod:`harness.evolution.phases`); a population with a model needs it there.
    Raises :class:`~harness.errors.ConfigError` for a table that does not fit, or for a linear fitness
    that turns negative.
    """
    from harness.evolution import generational, moran, phases, replicator, trust
    from harness.evolution.payoffs import Payoffs

    table = Payoffs.for_settings(settings, supplied=payoffs)
    if settings.dynamics == Dynamics.squared_share:
        return phases.run(settings, table, on_generation, model_matches)
    run = {
        Dynamics.moran: moran.run,
        Dynamics.generational: generational.run,
        Dynamics.trust: trust.run,
        Dynamics.replicator: replicator.run,
    }[settings.dynamics]
    return run(settings, table, on_generation)


__all__ = [
    "AgentMatch",
    "Dynamics",
    "EvolutionSettings",
    "Fitness",
    "Fixation",
    "MatchResult",
    "OnGeneration",
    "PayoffMode",
    "PayoffSource",
    "PayoffTable",
    "PhaseScores",
    "PlayMatches",
    "Score",
    "Trajectory",
    "evolve",
]
