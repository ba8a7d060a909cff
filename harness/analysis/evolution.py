"""The evolution views, over ``population`` and ``fixation`` (written by ``pdbench evolve``).

``population_shares`` (per run, generation and player): ``count`` (individuals; NULL under replicator
dynamics, which has none) and ``share``, the player's fraction of the population: count / N for the
finite dynamics (N is the same every generation), the stored share for the replicator. Generation 0 is
the initial population; a Moran process counts its steps (one birth and one death) as generations.

``time_to_fixation`` (per run with a fixation): ``player``, the one that took over, and ``generation``,
the first generation at which every individual played it. A run in which no player took over has no row
(a Moran process, or a run with mutation, can later leave it; ``fixation`` keeps every such event).

A sweep (``pdbench evolve --sweep``) is summarised per cell by :func:`sweep_summary`: the runs of a cell differ
only in their seed, so their final shares are independent replicates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.analysis.stats import Estimate, mean_ci

if TYPE_CHECKING:
    from harness.store.catalog import Catalog


@dataclass(frozen=True, slots=True)
class CellSummary:
    """One cell of a sweep: the settings it varies, its complete runs (one per seed), and per player the final
    share's mean over them with a 95% Student-t interval (cut to [0, 1]) and in how many runs it took over."""

    values: dict[str, Any]
    runs: int
    unfinished: int  # runs of the cell that did not complete (left out)
    shares: dict[str, Estimate]
    fixed: dict[str, int]

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values.items()) or "(base)"


_FINAL_SHARES = """
    WITH sweep AS (
        SELECT run_id, status, config_json->>'sweep_cell' AS cell FROM runs
        WHERE kind = 'evolution' AND config_json->>'sweep_id' = ?
    ), last AS (
        SELECT run_id, max(generation) AS generation FROM population
        WHERE run_id IN (SELECT run_id FROM sweep) GROUP BY run_id
    )
    SELECT s.cell, s.run_id, s.status, ps.player, ps.share, f.player AS fixed
    FROM sweep s
    LEFT JOIN last l USING (run_id)
    LEFT JOIN population_shares ps ON ps.run_id = s.run_id AND ps.generation = l.generation
    LEFT JOIN time_to_fixation f ON f.run_id = s.run_id
    ORDER BY s.run_id, ps.player"""


def sweep_runs(cat: Catalog, sweep_id: str) -> int:
    """How many evolution runs of the catalog belong to sweep ``sweep_id``."""
    rows = cat.query("SELECT count(*) FROM runs WHERE kind = 'evolution' AND config_json->>'sweep_id' = ?", [sweep_id])[
        1
    ]
    return int(rows[0][0])


def sweep_summary(cat: Catalog, sweep_id: str, level: float = 0.95) -> list[CellSummary]:
    """Per cell of sweep ``sweep_id`` (ordered by its values), each player's share at the end of the complete
    runs, with a ``level`` confidence interval over seeds (:func:`harness.analysis.stats.mean_ci`)."""
    rows = cat.query(_FINAL_SHARES, [sweep_id])[1]
    cells: dict[str, dict[str, Any]] = {}
    for cell, run_id, status, player, share, fixed in rows:
        entry = cells.setdefault(cell, {"complete": {}, "unfinished": set(), "fixed": {}})
        if status != "complete":
            entry["unfinished"].add(run_id)
            continue
        entry["complete"].setdefault(run_id, {})
        if player is not None:
            entry["complete"][run_id][player] = share
        if fixed is not None:
            entry["fixed"].setdefault(fixed, set()).add(run_id)
    out: list[CellSummary] = []
    for cell, entry in cells.items():
        values = json.loads(cell) if cell else {}
        runs: dict[str, dict[str, float]] = entry["complete"]
        players = list(dict.fromkeys(p for shares in runs.values() for p in shares))
        estimates = {p: mean_ci([shares.get(p) for shares in runs.values()], level, bounds=(0.0, 1.0)) for p in players}
        fixed = {p: len(entry["fixed"].get(p, ())) for p in players}
        out.append(CellSummary(values, len(runs), len(entry["unfinished"]), estimates, fixed))
    return sorted(out, key=lambda c: [(k, _sortable(v)) for k, v in sorted(c.values.items())])


def _sortable(value: Any) -> tuple[int, float, str]:
    return (0, float(value), "") if isinstance(value, int | float) else (1, 0.0, str(value))


@dataclass(frozen=True, slots=True)
class Shares:
    """An evolution run's population shares (the ``population_shares`` view): ``shares[g][i]`` is player
    ``players[i]``'s share at ``generations[g]``; players ordered by their final share, largest first."""

    players: tuple[str, ...]
    generations: tuple[int, ...]
    shares: tuple[tuple[float, ...], ...]


def population_shares(cat: Catalog, run_id: str) -> Shares:
    """The shares of every player in every stored generation of evolution run ``run_id``."""
    rows = cat.query(
        "SELECT generation, player, share FROM population_shares WHERE run_id = ? ORDER BY generation, player",
        [run_id],
    )[1]
    by_gen: dict[int, dict[str, float]] = {}
    for generation, player, share in rows:
        by_gen.setdefault(int(generation), {})[player] = float(share)
    generations = tuple(sorted(by_gen))
    last = by_gen[generations[-1]] if generations else {}
    players = tuple(sorted({p for g in by_gen.values() for p in g}, key=lambda p: (-last.get(p, 0.0), p)))
    return Shares(players, generations, tuple(tuple(by_gen[g].get(p, 0.0) for p in players) for g in generations))
