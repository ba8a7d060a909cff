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

_KIND_ORDER = "CASE kind WHEN 'all' THEN 0 WHEN 'payoff' THEN 1 WHEN 'horizon' THEN 2 ELSE 3 END"


def comprehension_accuracy(catalog: Catalog, run_id: str) -> list[dict[str, Any]]:
    """The accuracy rows of one run, each player's ``all`` row first; empty if nothing was asked."""
    return catalog.records(
        f"SELECT player_name, kind, questions, answered, correct, accuracy FROM comprehension_accuracy "
        f"WHERE run_id = ? ORDER BY player_name, {_KIND_ORDER}",
        [run_id],
    )
