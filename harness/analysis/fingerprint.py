"""A fingerprint run's matrix, read from its games: what Axelrod 4.14's fingerprints compute, on PDBench's records.

A fingerprint run (``runs.kind = 'fingerprint'``, made by ``pdbench fingerprint``) plays one player as seat A against
a probe as seat B in one condition per probe point. The probe and its point are read from the run's stored config
(``runs.config_json``: each condition's ``agent_b``, a strategy with its parameters), not from the condition's name:

* an ``ASHLOCK`` probe at (x, y): the cell is seat A's mean payoff per round in a game, averaged over the point's
  complete games (Axelrod's ``AshlockFingerprint``: ``compute_final_score_per_turn`` of player 0, averaged over
  repetitions);
* a ``RAND`` probe with p: one cell per round t, seat A's cooperation in round t (moves as played, as Axelrod reads
  them from its interactions), averaged over the point's complete games (Axelrod's ``TransitiveFingerprint``: the
  mean cooperation of player 0 per opponent and turn).

Each cell carries its number of games and the standard deviation over them, so a reader (and the test against
Axelrod's fixture) can tell a deterministic cell (sd 0) from a sampled one and say how far two estimates may differ.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass

from harness.errors import ConfigError
from harness.store.catalog import Catalog
from harness.util.plural import plural

RUN_KIND = "fingerprint"
"""``runs.kind`` of a fingerprint run."""


class ProbeKind(enum.StrEnum):
    """Which fingerprint a run holds, by the probe its conditions play (the values are ``pdbench fingerprint
    --kind``'s)."""

    ASHLOCK = "ashlock"
    TRANSITIVE = "transitive"


PROBES: dict[str, tuple[ProbeKind, tuple[str, ...]]] = {
    "ASHLOCK": (ProbeKind.ASHLOCK, ("x", "y")),
    "RAND": (ProbeKind.TRANSITIVE, ("p",)),
}
"""Seat B's strategy in a fingerprint's conditions -> the fingerprint and the parameters that place its point."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One value of the fingerprint: Ashlock ``key = (x, y)``; transitive ``key = (p, round)``."""

    key: tuple[float, ...]
    games: int
    mean: float
    sd: float | None  # over games (n - 1 in the denominator); None for one game


@dataclass(frozen=True, slots=True)
class Fingerprint:
    run_id: str
    kind: ProbeKind
    player: str
    cells: tuple[Cell, ...]

    @property
    def axes(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The distinct values of the key's two parts, ascending: Ashlock (x values, y values); transitive
        (p values, rounds)."""
        first = tuple(sorted({c.key[0] for c in self.cells}))
        second = tuple(sorted({c.key[1] for c in self.cells}))
        return first, second

    def value(self, *key: float) -> float | None:
        return next((c.mean for c in self.cells if c.key == key), None)

    @property
    def caption(self) -> str:
        """What a cell is and how many games each holds, as the command's table and the dashboard say it."""
        games = {c.games for c in self.cells}
        fewer = "" if len(games) <= 1 else f" (some fewer: {min(games)})"
        return f"{VALUE_NOTE[self.kind]}; {plural(max(games, default=0), 'game')} per point{fewer}"


VALUE_NOTE = {
    ProbeKind.ASHLOCK: "mean payoff per round of the player against the probe at (x, y), over its games",
    ProbeKind.TRANSITIVE: "the player's cooperation (moves as played) in each round against RAND(p), over its games",
}


def probe_points(config_json: str) -> dict[str, tuple[ProbeKind, tuple[float, ...]]]:
    """Each condition of a stored config whose seat B is a fingerprint probe -> the fingerprint and its point."""
    out = {}
    for cond in json.loads(config_json)["experiment"]["conditions"]:
        probe = cond["agent_b"]
        known = PROBES.get(str(probe.get("policy")))
        if known is not None:
            kind, params = known
            out[str(cond["name"])] = (kind, tuple(float(probe[p]) for p in params))
    return out


def fingerprint(cat: Catalog, run_id: str) -> Fingerprint:
    """The run's fingerprint from its complete games; a clear error for a run that is not a fingerprint."""
    run = cat.require_run(run_id)
    points = probe_points(str(run["config_json"])) if run["kind"] == RUN_KIND else {}
    kinds = {kind for kind, _ in points.values()}
    if len(kinds) != 1:
        raise ConfigError(
            f"run {run_id!r} is {'an' if str(run['kind'])[:1] in 'aeiou' else 'a'} {run['kind']} run, not a "
            "fingerprint: `pdbench fingerprint --model M` (or --strategy S) makes one"
        )
    kind = kinds.pop()
    names = list(points)
    marks = ", ".join("?" for _ in names)
    player = cat.query(
        f"SELECT DISTINCT player_a FROM games WHERE run_id = ? AND condition IN ({marks}) ORDER BY 1",
        [run_id, *names],
    )[1]
    if kind is ProbeKind.ASHLOCK:
        sql = (
            "SELECT condition, NULL AS round, count(*), avg(score_a / rounds_played), stddev_samp(score_a / "
            f"rounds_played) FROM games WHERE run_id = ? AND status = 'complete' AND rounds_played > 0 AND condition "
            f"IN ({marks}) GROUP BY condition"
        )
    else:
        sql = (
            "SELECT g.condition, r.round, count(*), avg(CASE WHEN r.action_a = 'C' THEN 1.0 ELSE 0.0 END), "
            "stddev_samp(CASE WHEN r.action_a = 'C' THEN 1.0 ELSE 0.0 END) FROM games g JOIN rounds r ON "
            "r.run_id = g.run_id AND r.game_id = g.game_id WHERE g.run_id = ? AND g.status = 'complete' AND "
            f"g.condition IN ({marks}) GROUP BY g.condition, r.round"
        )
    cells = []
    for condition, round_, games, mean, sd in cat.query(sql, [run_id, *names])[1]:
        point = points[str(condition)][1]
        key = point if round_ is None else (*point, float(round_))
        spread = None if sd is None or math.isnan(float(sd)) else float(sd)
        cells.append(Cell(key, int(games), float(mean), spread))
    cells.sort(key=lambda c: c.key)
    return Fingerprint(run_id, kind, ", ".join(str(p[0]) for p in player), tuple(cells))


def reproducing_sql(kind: ProbeKind, run_id: str) -> str:
    """The query that gives a fingerprint's cells from ``pdbench sql``, one row per cell (the probe point is in the
    condition's name, ``ashlock(x=0.5,y=1)``, ``transitive(p=0.25)``): what :func:`fingerprint` reads, for a reader
    to check a figure against."""
    run = "'" + run_id.replace("'", "''") + "'"
    if kind is ProbeKind.ASHLOCK:
        return (
            "select condition, count(*) as games, avg(score_a / rounds_played) as payoff_per_round,\n"
            "  stddev_samp(score_a / rounds_played) as sd\n"
            f"from games where run_id = {run} and status = 'complete' and rounds_played > 0\n"
            "group by condition order by condition"
        )
    return (
        "select g.condition, r.round, count(*) as games,\n"
        "  avg(case when r.action_a = 'C' then 1.0 else 0.0 end) as cooperation,\n"
        "  stddev_samp(case when r.action_a = 'C' then 1.0 else 0.0 end) as sd\n"
        "from games g join rounds r on r.run_id = g.run_id and r.game_id = g.game_id\n"
        f"where g.run_id = {run} and g.status = 'complete'\n"
        "group by g.condition, r.round order by g.condition, r.round"
    )
