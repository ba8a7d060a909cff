"""Per-condition summaries of a run, from the ``player_metrics`` view, with 95% CIs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from harness.analysis.stats import Estimate, mean_ci
from harness.store.catalog import Catalog

METRICS = (
    "payoff_per_round",
    "cooperation_rate",
    "retaliation_rate",
    "forgiveness_rate",
    "exploitability_gap",
    "time_to_collapse",
)


RATES = {"cooperation_rate", "retaliation_rate", "forgiveness_rate"}
RATE_BOUNDS = (0.0, 1.0)


@dataclass(frozen=True, slots=True)
class SeatSummary:
    player: str
    name: str
    estimates: dict[str, Estimate]
    collapsed: int


@dataclass(frozen=True, slots=True)
class ConditionSummary:
    condition: str
    games: int
    seats: tuple[SeatSummary, SeatSummary]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"condition": self.condition, "games": self.games}
        for seat in self.seats:
            for metric, est in seat.estimates.items():
                key = f"{seat.player}_{metric}"
                out[key] = est.mean
                out[f"{key}_ci_low"] = est.low
                out[f"{key}_ci_high"] = est.high
            out[f"player_{seat.player}"] = seat.name
            out[f"{seat.player}_games_collapsed"] = seat.collapsed
        return out


def condition_summaries(catalog: Catalog, run_id: str, condition: str | None = None) -> list[ConditionSummary]:
    """One summary per condition (or only ``condition``) over its complete games, in plan order."""
    only = " AND condition = ?" if condition is not None else ""
    rows = catalog.records(
        f"SELECT condition, game_id, player, player_name, {', '.join(METRICS)} "
        f"FROM player_metrics WHERE run_id = ? AND status = 'complete'{only} ORDER BY game_id, player",
        [run_id] if condition is None else [run_id, condition],
    )
    by_cond: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_cond[row["condition"]][row["player"]].append(row)
    out = []
    for cond, seats in by_cond.items():
        summaries = []
        for player in ("a", "b"):
            seat_rows = seats[player]
            summaries.append(
                SeatSummary(
                    player=player,
                    name=seat_rows[0]["player_name"],
                    estimates={
                        m: mean_ci((r[m] for r in seat_rows), bounds=RATE_BOUNDS if m in RATES else None)
                        for m in METRICS
                    },
                    collapsed=sum(r["time_to_collapse"] is not None for r in seat_rows),
                )
            )
        out.append(ConditionSummary(condition=cond, games=len(seats["a"]), seats=(summaries[0], summaries[1])))
    return out
