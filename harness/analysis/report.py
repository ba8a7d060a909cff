"""Per-condition summaries of a run, from the ``player_metrics`` view, with 95% CIs, and how well
each model's answers could be read (the ``player_parsing`` and ``model_parsing`` views)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from harness.analysis.stats import Estimate, t_interval
from harness.store.catalog import Catalog
from harness.store.views.answers import READERS, reader_column

# Behaviour rates (cooperation, retaliation, forgiveness) are on the moves each player chose, with
# fallback rounds left out; the ``*_played`` rates on the moves as played. See analysis/views.py.
METRICS = (
    "payoff_per_round",
    "cooperation_rate",
    "retaliation_rate",
    "forgiveness_rate",
    "exploitability_gap",
    "time_to_collapse",
    "cooperation_rate_played",
    "retaliation_rate_played",
    "forgiveness_rate_played",
)


RATES = {
    "cooperation_rate",
    "retaliation_rate",
    "forgiveness_rate",
    "cooperation_rate_played",
    "retaliation_rate_played",
    "forgiveness_rate_played",
}
RATE_BOUNDS = (0.0, 1.0)
# Time to collapse is the round a collapse begins: 1 at the earliest, never below (see stats.t_interval).
COLLAPSE_BOUNDS = (1.0, math.inf)
BOUNDS = {**dict.fromkeys(RATES, RATE_BOUNDS), "time_to_collapse": COLLAPSE_BOUNDS}

PARSING = ("answers", "unreadable", "parse_failure_rate", "rounds", "fallback_rounds", "fallback_rate")
# Counted by reader in the ``player_parsing`` view; fallback rounds are ``fallback_rounds`` above.
_READ_COUNTS = tuple(reader_column(r) for r in READERS if r != "fallback")


@dataclass(frozen=True, slots=True)
class Parsing:
    """A model seat's answers over the games of a condition (every game, complete or not): pooled
    counts, so the rates weigh every answer (and every round) alike."""

    answers: int
    unreadable: int
    rounds: int
    fallback_rounds: int
    read_by: dict[str, int]  # rounds decided by each reader of READERS (parser, structured, ..., fallback)

    @property
    def parse_failure_rate(self) -> float | None:
        return self.unreadable / self.answers if self.answers else None

    @property
    def fallback_rate(self) -> float | None:
        return self.fallback_rounds / self.rounds if self.rounds else None

    def share(self, reader: str) -> float | None:
        """The share of the rounds ``reader`` decided (what the text report's "read by" shows, per model)."""
        return self.read_by[reader] / self.rounds if self.rounds else None


@dataclass(frozen=True, slots=True)
class SeatSummary:
    player: str
    name: str
    estimates: dict[str, Estimate]
    collapsed: int
    parsing: Parsing | None = None  # None for a strategy (it sends no request)


@dataclass(frozen=True, slots=True)
class ConditionSummary:
    """``repeated``: two or more complete games, every one the same moves round by round (a deterministic
    player, no noise, no shuffled options). Their spread is 0, and an interval "± 0" would read as certainty
    about the player when it is one game measured again: such a condition's estimates carry no interval."""

    condition: str
    games: int
    seats: tuple[SeatSummary, SeatSummary]
    repeated: bool = False

    @property
    def games_label(self) -> str:
        """The number of complete games, and "all alike" when they are one game repeated (see
        :data:`harness.analysis.notes.REPEATED_NOTE`)."""
        return f"{self.games}, all alike" if self.repeated else str(self.games)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"condition": self.condition, "games": self.games, "repeated_game": self.repeated}
        for seat in self.seats:
            for metric, est in seat.estimates.items():
                key = f"{seat.player}_{metric}"
                out[key] = est.mean
                out[f"{key}_ci_low"] = est.low
                out[f"{key}_ci_high"] = est.high
            out[f"player_{seat.player}"] = seat.name
            out[f"{seat.player}_games_collapsed"] = seat.collapsed
            for field in PARSING:  # over every game of the condition, complete or not
                key = "rounds_all_games" if field == "rounds" else field
                out[f"{seat.player}_{key}"] = getattr(seat.parsing, field) if seat.parsing else None
            for reader in READERS:  # what decided the moves: counts (summed over conditions: the model's) and shares
                column = reader_column(reader)
                out[f"{seat.player}_{column}"] = seat.parsing.read_by[reader] if seat.parsing else None
                out[f"{seat.player}_{column.removesuffix('_rounds')}_share"] = (
                    seat.parsing.share(reader) if seat.parsing else None
                )
        return out


def condition_summaries(catalog: Catalog, run_id: str, condition: str | None = None) -> list[ConditionSummary]:
    """One summary per condition (or only ``condition``) over its complete games, in plan order.

    Each metric's size, mean and standard deviation per condition and seat are summed by DuckDB, so a
    report holds a row per condition and seat, never one per game: its memory does not grow with the run.
    NULL and NaN values are left out, as :func:`~harness.analysis.stats.mean_ci` leaves them out.
    """
    only = " AND condition = ?" if condition is not None else ""
    params = [run_id] if condition is None else [run_id, condition]
    moments = ", ".join(
        f"count({v}) AS {m}__n, favg({v}) AS {m}__mean, stddev_samp({v}) AS {m}__sd"
        for m in METRICS
        for v in [f"CASE WHEN isnan({m}::DOUBLE) THEN NULL ELSE {m}::DOUBLE END"]
    )
    rows = catalog.records(
        f"SELECT condition, player, arg_min(player_label, game_id) AS player_name, count(*) AS games, "
        f"count(time_to_collapse) AS collapsed, min(min(game_id)) OVER (PARTITION BY condition) AS first_game, "
        f"{moments} FROM player_metrics WHERE run_id = ? AND status = 'complete'{only} "
        "GROUP BY condition, player ORDER BY first_game, player",
        params,
    )
    totals = catalog.records(
        "SELECT condition, player, SUM(answers) AS answers, SUM(unreadable) AS unreadable, SUM(rounds) AS rounds, "
        f"SUM(fallback_rounds) AS fallback_rounds, {', '.join(f'SUM({c}) AS {c}' for c in _READ_COUNTS)} "
        f"FROM player_parsing WHERE run_id = ?{only} GROUP BY condition, player",
        params,
    )
    parsing = {
        (r["condition"], r["player"]): Parsing(
            int(r["answers"]),
            int(r["unreadable"]),
            int(r["rounds"]),
            int(r["fallback_rounds"]),
            read_by={reader: int(r[reader_column(reader)]) for reader in READERS},
        )
        for r in totals
    }
    repeated = _repeated_conditions(catalog, run_id, condition)
    by_cond: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        by_cond[row["condition"]][row["player"]] = row
    out = []
    for cond, seats in by_cond.items():
        summaries = []
        for player in ("a", "b"):
            row = seats[player]
            summaries.append(
                SeatSummary(
                    player=player,
                    name=row["player_name"],
                    estimates={m: _estimate(row, m, cond in repeated) for m in METRICS},
                    collapsed=int(row["collapsed"]),
                    parsing=parsing.get((cond, player)),
                )
            )
        out.append(
            ConditionSummary(
                condition=cond,
                games=int(seats["a"]["games"]),
                seats=(summaries[0], summaries[1]),
                repeated=cond in repeated,
            )
        )
    return out


def _estimate(row: dict[str, Any], metric: str, repeated: bool) -> Estimate:
    n, mean, sd = row[f"{metric}__n"], row[f"{metric}__mean"], row[f"{metric}__sd"]
    if repeated:
        return Estimate(mean, None, None, int(n))
    return t_interval(int(n), mean, sd, bounds=BOUNDS.get(metric))


def _repeated_conditions(catalog: Catalog, run_id: str, condition: str | None) -> set[str]:
    """The conditions whose two or more complete games all have the same rounds: both seats' chosen and played
    moves and fallback flags, round by round."""
    only = " AND g.condition = ?" if condition is not None else ""
    params = [run_id] if condition is None else [run_id, condition]
    rows = catalog.query(
        "WITH moves AS (SELECT r.game_id, string_agg(concat(r.intended_a, r.action_a, r.flagged_a::INTEGER, "
        "r.intended_b, r.action_b, r.flagged_b::INTEGER), '' ORDER BY r.round) AS log "
        f"FROM rounds r JOIN games g ON g.run_id = r.run_id AND g.game_id = r.game_id "
        f"WHERE r.run_id = ? AND g.status = 'complete'{only} GROUP BY r.game_id) "
        "SELECT g.condition FROM moves m JOIN games g ON g.run_id = ? AND g.game_id = m.game_id "
        "GROUP BY g.condition HAVING count(*) >= 2 AND count(DISTINCT m.log) = 1",
        [*params, run_id],
    )[1]
    return {r[0] for r in rows}


def model_answers(catalog: Catalog, run_id: str) -> list[dict[str, Any]]:
    """The ``model_parsing`` rows of a run: each model's parse-failure and fallback rates."""
    return catalog.records("SELECT * FROM model_parsing WHERE run_id = ? ORDER BY player_name", [run_id])
