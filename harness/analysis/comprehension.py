"""Comprehension-check accuracy, as a SQL view over the ``comprehension`` table, and its summaries.

``comprehension_accuracy`` has one row per run, player (by name: a model's name unless the config
named it) and question kind (``payoff``, ``horizon``, ``last_move``), plus one row per run and player
with kind ``all``: ``questions`` asked, ``answered`` (readable answers), ``correct``, and
``accuracy`` = correct / questions (an unreadable answer counts as wrong). Every game is counted,
whatever its status: a question asked in a game that later failed was still answered.
"""

from __future__ import annotations

from typing import Any

from harness.store.catalog import Catalog

COMPREHENSION_VIEWS: dict[str, str] = {
    "comprehension_accuracy": """
        WITH answers AS (
            SELECT c.run_id, CASE c.player WHEN 'a' THEN g.player_a ELSE g.player_b END AS player_name,
                   c.kind, c.answer, c.correct
            FROM comprehension c JOIN games g ON g.run_id = c.run_id AND g.game_id = c.game_id
        )
        SELECT run_id, player_name,
               CASE WHEN GROUPING(kind) = 1 THEN 'all' ELSE kind END AS kind,
               COUNT(*) AS questions,
               COUNT(answer) AS answered,
               COUNT(*) FILTER (WHERE correct) AS correct,
               COUNT(*) FILTER (WHERE correct) / COUNT(*) AS accuracy
        FROM answers
        GROUP BY GROUPING SETS ((run_id, player_name, kind), (run_id, player_name))""",
}

_KIND_ORDER = "CASE kind WHEN 'all' THEN 0 WHEN 'payoff' THEN 1 WHEN 'horizon' THEN 2 ELSE 3 END"


def comprehension_accuracy(catalog: Catalog, run_id: str) -> list[dict[str, Any]]:
    """The accuracy rows of one run, each player's ``all`` row first; empty if nothing was asked."""
    return catalog.records(
        f"SELECT player_name, kind, questions, answered, correct, accuracy FROM comprehension_accuracy "
        f"WHERE run_id = ? ORDER BY player_name, {_KIND_ORDER}",
        [run_id],
    )
