"""The behaviour profile of a run per condition: what a suite's scorecard shows (fontana2025)."""

from __future__ import annotations

from harness.store.catalog import Catalog


def behaviour_profile_by_condition(catalog: Catalog, run_id: str, player: str = "a") -> tuple[list[str], list[tuple]]:
    """The mean of every numeric column of the ``behaviour_profile`` view for ``player``, per condition, over
    its complete games (in plan order): the profile a suite's scorecard shows. It takes the view's columns as
    they are defined (see :mod:`harness.analysis.views`), so it shows whatever profile that view computes."""
    described = catalog.query("DESCRIBE behaviour_profile")[1]
    numeric = [
        name
        for name, kind, *_ in described
        if name not in ("run_id", "game_id", "player") and kind.split("(")[0] in _NUMERIC
    ]
    if not numeric:
        return ["condition", "games"], []
    means = ", ".join(f'avg(bp."{c}") AS "{c}"' for c in numeric)
    return catalog.query(
        f"SELECT g.condition, count(*) AS games, {means} FROM behaviour_profile bp "
        "JOIN games g ON g.run_id = bp.run_id AND g.game_id = bp.game_id "
        "WHERE bp.run_id = ? AND bp.player = ? AND g.status = 'complete' "
        "GROUP BY g.condition ORDER BY min(g.game_id)",
        [run_id, player],
    )


_NUMERIC = {"DOUBLE", "FLOAT", "DECIMAL", "INTEGER", "BIGINT", "HUGEINT", "SMALLINT", "TINYINT"}
