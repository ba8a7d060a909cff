"""The behaviour profile of a run per condition: what a suite's scorecard shows (fontana2025)."""

from __future__ import annotations

from typing import Any

from harness.store.catalog import Catalog

PROFILE_DIMENSIONS = ("nice", "forgiving", "retaliatory", "troublemaking", "emulative")
"""The five dimensions of Fontana, Pierri & Aiello (ICWSM 2025), as the ``behaviour_profile`` view names them."""


def behaviour_profile_by_condition(
    catalog: Catalog, run_id: str, player: str = "a"
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The mean of each profile dimension for ``player``, per condition, over its complete games (in plan
    order): the table a suite's scorecard shows. As in the paper, a dimension with no chance in a game
    (no opponent defection to forgive, say) is 0 for that game; the full view keeps the chance counts."""
    means = ", ".join(f"avg(bp.{c}) AS {c}" for c in PROFILE_DIMENSIONS)
    return catalog.query(
        f"SELECT g.condition, count(*) AS games, {means} FROM behaviour_profile bp "
        "JOIN games g ON g.run_id = bp.run_id AND g.game_id = bp.game_id "
        "WHERE bp.run_id = ? AND bp.player = ? AND g.status = 'complete' "
        "GROUP BY g.condition ORDER BY min(g.game_id)",
        [run_id, player],
    )
