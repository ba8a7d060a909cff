"""The behaviour profile of a run per condition: what a suite's scorecard shows (fontana2025)."""

from __future__ import annotations

from typing import Any

from harness.store.catalog import Catalog

PROFILE_DIMENSIONS = ("nice", "forgiving", "retaliatory", "troublemaking", "emulative")
"""The five dimensions of Fontana, Pierri & Aiello (ICWSM 2025), as the ``behaviour_profile`` view names them."""
CHANCES = {d: f"{d}_chances" for d in PROFILE_DIMENSIONS if d != "nice"}
"""Each dimension's denominator in the view (``nice`` has none: it applies whenever the player chose a move)."""


def behaviour_profile_by_condition(
    catalog: Catalog, run_id: str, player: str = "a"
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The mean of each profile dimension for ``player``, per condition, over its complete games that gave it a
    chance to apply (in plan order): the table a suite's scorecard shows. The view scores a game with no chance
    (no opponent defection to forgive, say) 0, as the paper's code does; a mean over such zeros would read as
    "never forgave", so those games are left out here, and a condition without any chance gets None (shown —).
    Where every game had a chance (the paper's 100-round games against RAND(p) for 0 < p < 1) this is the
    paper's mean."""
    means = ", ".join(
        f"avg(bp.{c}) FILTER (WHERE bp.{CHANCES[c]} > 0) AS {c}" if c in CHANCES else f"avg(bp.{c}) AS {c}"
        for c in PROFILE_DIMENSIONS
    )
    return catalog.query(
        f"SELECT g.condition, count(*) AS games, {means} FROM behaviour_profile bp "
        "JOIN games g ON g.run_id = bp.run_id AND g.game_id = bp.game_id "
        "WHERE bp.run_id = ? AND bp.player = ? AND g.status = 'complete' "
        "GROUP BY g.condition ORDER BY min(g.game_id)",
        [run_id, player],
    )
