"""Named reads of a results folder, for the CLI, the runner and the dashboard.

Every question those layers ask of the results is a function here (or in
:mod:`harness.analysis`), so the SQL that answers it exists once and nothing outside
``store/`` and ``analysis/`` writes SQL.
"""

from __future__ import annotations

from typing import Any

from harness.store.catalog import Catalog


def leaderboard(cat: Catalog, run_id: str) -> list[dict[str, Any]]:
    """The ``tournament`` view of one run, best first."""
    return cat.records("SELECT * FROM tournament WHERE run_id = ? ORDER BY rank, player", [run_id])


def matchups(cat: Catalog, run_id: str) -> list[dict[str, Any]]:
    """The ``matchups`` view of one run: each player's mean payoff per round against each opponent."""
    return cat.records("SELECT * FROM matchups WHERE run_id = ? ORDER BY player, opponent", [run_id])
