"""The evolution views over a population run's tables: each generation's shares and the time to fixation."""

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
