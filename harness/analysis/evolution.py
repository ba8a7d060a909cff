"""The evolution views, over ``population`` and ``fixation`` (written by ``pdbench evolve``).

``population_shares`` (per run, generation and player): ``count`` (individuals; NULL under replicator
dynamics, which has none) and ``share``, the player's fraction of the population: count / N for the
finite dynamics (N is the same every generation), the stored share for the replicator. Generation 0 is
the initial population; a Moran process counts its steps (one birth and one death) as generations.

``time_to_fixation`` (per run with a fixation): ``player``, the one that took over, and ``generation``,
the first generation at which every individual played it. A run in which no player took over has no row
(a Moran process, or a run with mutation, can later leave it; ``fixation`` keeps every such event).
"""

from __future__ import annotations

EVOLUTION_VIEWS: dict[str, str] = {
    "population_shares": """
        SELECT p.run_id, p.generation, p.player, p.count,
               coalesce(p.share, p.count::DOUBLE / sum(p.count) OVER (PARTITION BY p.run_id, p.generation)) AS share
        FROM population p""",
    "time_to_fixation": """
        SELECT run_id, arg_min(player, generation) AS player, min(generation) AS generation
        FROM fixation
        GROUP BY run_id""",
}
