"""The numbers behind ``pdbench plot``'s figures, read through the same views and summaries as ``report``, the
scorecard and the dashboard (no figure computes a metric of its own).

Each run's *focal seat* per condition is the one the scorecard reports: the model's (seat A unless only seat B is
a model; seat A in self-play and in games of two strategies). The figures of several runs show each run's focal
player against each of its opponents; a player named alike in two runs is told apart by its run id.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from harness.analysis.profile_summary import PROFILE_DIMENSIONS, behaviour_profile_by_condition
from harness.analysis.report import ConditionSummary, SeatSummary, condition_summaries
from harness.analysis.stats import Estimate, t_interval
from harness.store.catalog import Catalog

RATE_BOUNDS = (0.0, 1.0)
PROFILE_RATES = {
    "cooperation_rate": "cooperation",
    "retaliation_rate": "retaliation",
    "forgiveness_rate": "forgiveness",
}
"""The report's behaviour rates (on chosen moves) the profile shows first, with their 95% intervals."""
COMPARE_METRICS = {
    "payoff_per_round": "payoff / round",
    "cooperation_rate": "cooperation",
    "retaliation_rate": "retaliation",
    "forgiveness_rate": "forgiveness",
}
"""The report's metrics the comparison shows, each with its 95% interval over games."""


@dataclass(frozen=True, slots=True)
class Focal:
    """A run's focal seat in one condition (see the module docstring) and its summary there."""

    run_id: str
    summary: ConditionSummary
    me: SeatSummary
    them: SeatSummary
    label: str = ""  # the player as a legend names it (set by :func:`focal_seats`)


@dataclass(frozen=True, slots=True)
class CooperationSeries:
    """A focal player's cooperation (chosen moves, fallback rounds left out) in each round, over the condition's
    complete games: the mean and its 95% interval per round (no interval where the condition's games are one game
    repeated, as the report gives none)."""

    player: str
    opponent: str
    rounds: tuple[int, ...]
    estimates: tuple[Estimate, ...]


@dataclass(frozen=True, slots=True)
class PlayerValue:
    """One metric of one focal player against one opponent."""

    player: str
    opponent: str
    metric: str  # as the figure labels it
    estimate: Estimate


def _focal(run_id: str, s: ConditionSummary) -> Focal:
    """The scorecard's seating: the model's seat, A unless only B is a model."""
    a, b = s.seats
    if a.parsing is None and b.parsing is not None:
        return Focal(run_id, s, b, a)
    return Focal(run_id, s, a, b)


def focal_seats(cat: Catalog, run_ids: list[str]) -> list[Focal]:
    """Every run's focal seat per condition, runs in the order given, conditions in plan order; a player's label is
    its name, with the run id after it where another run's focal player has the same name."""
    found = [_focal(run_id, s) for run_id in run_ids for s in condition_summaries(cat, run_id)]
    runs_of: dict[str, set[str]] = {}
    for f in found:
        runs_of.setdefault(f.me.name, set()).add(f.run_id)
    return [
        Focal(
            f.run_id,
            f.summary,
            f.me,
            f.them,
            f.me.name if len(runs_of[f.me.name]) == 1 else f"{f.me.name} ({f.run_id})",
        )
        for f in found
    ]


def cooperation_by_round(cat: Catalog, run_ids: list[str]) -> list[CooperationSeries]:
    """Per run and condition, the focal player's cooperation in each round over the complete games that reached it
    (a geometric game's later rounds have fewer games), from the ``player_rounds`` view."""
    out = []
    for f in focal_seats(cat, run_ids):
        rows = cat.query(
            "SELECT pr.round, count(pr.choice) AS n, avg((pr.choice = 'C')::DOUBLE) AS mean, "
            "stddev_samp((pr.choice = 'C')::DOUBLE) AS sd FROM player_rounds pr "
            "JOIN games g ON g.run_id = pr.run_id AND g.game_id = pr.game_id "
            "WHERE pr.run_id = ? AND g.condition = ? AND pr.player = ? AND g.status = 'complete' "
            "GROUP BY pr.round ORDER BY pr.round",
            [f.run_id, f.summary.condition, f.me.player],
        )[1]
        estimates = tuple(
            Estimate(mean, None, None, int(n))
            if f.summary.repeated
            else t_interval(int(n), mean, sd, bounds=RATE_BOUNDS)
            for _round, n, mean, sd in rows
        )
        out.append(CooperationSeries(f.label, f.them.name, tuple(int(r[0]) for r in rows), estimates))
    return out


def behaviour_profile(cat: Catalog, run_ids: list[str]) -> list[PlayerValue]:
    """Per focal player and opponent: the report's cooperation, retaliation and forgiveness rates with their 95%
    intervals, then the five dimensions of Fontana et al.'s behaviour profile as the suites' scorecard reads them
    (:func:`~harness.analysis.profile_summary.behaviour_profile_by_condition`: means, no interval)."""
    out = []
    profiles: dict[tuple[str, str], dict[str, dict[str, float | None]]] = {}
    for f in focal_seats(cat, run_ids):
        key = (f.run_id, f.me.player)
        if key not in profiles:
            columns, rows = behaviour_profile_by_condition(cat, f.run_id, f.me.player)
            profiles[key] = {r[0]: dict(zip(columns, r, strict=True)) for r in rows}
        out += [PlayerValue(f.label, f.them.name, name, f.me.estimates[m]) for m, name in PROFILE_RATES.items()]
        row = profiles[key].get(f.summary.condition, {})
        for dim in PROFILE_DIMENSIONS:
            value = row.get(dim)
            out.append(
                PlayerValue(f.label, f.them.name, dim, Estimate(None if value is None else float(value), None, None, 0))
            )
    return out


def metrics_by_player(cat: Catalog, run_ids: list[str]) -> list[PlayerValue]:
    """Per focal player and opponent, the report's metrics of :data:`COMPARE_METRICS` with their 95% intervals
    over games: what the comparison figure draws."""
    return [
        PlayerValue(f.label, f.them.name, name, f.me.estimates[m])
        for f in focal_seats(cat, run_ids)
        for m, name in COMPARE_METRICS.items()
    ]


def opponents_in_order(values: list[PlayerValue] | list[CooperationSeries]) -> list[str]:
    """The opponents in the order they first appear (plan order)."""
    return list(Counter(v.opponent for v in values))
