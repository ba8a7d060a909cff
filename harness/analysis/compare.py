"""Model players side by side: each metric per opponent and overall, with 95% intervals, and each player's
difference from the first with its interval and a test that fits the design.

A player is a model seat's label (:data:`player_labels` in :mod:`harness.store.views.core`: the model, its persona,
and its temperature, labels or prompt where those differ within the run) in one run; the same label in two runs is
two players. Every metric is a per-game value from the views a report reads (``player_metrics``,
``behaviour_profile``, ``player_parsing``, ``calls``), over complete games:

* payoff per round, cooperation, retaliation and forgiveness rates (chosen moves, fallback rounds left out);
* the behaviour profile's five dimensions, a game without a chance for a dimension left out of that dimension
  (as the scorecard's profile does);
* the parse-failure and fallback rates of the seat's move requests, and the dollars the seat's calls cost;
* the memory-one profile (P(C) in round 1 and after CC, CD, DC, DD, the ``memory_one`` view): not a mean of
  per-game rates but the pooled ratio and its interval over games of :mod:`harness.analysis.memory_one`, as the
  report shows it; two players' difference is tested on their cluster-robust variances
  (:func:`~harness.analysis.memory_one.ratio_difference`, "ratio" in the test column);
* the counterfactual probes of the player's games (``pdbench probe``, the ``counterfactual_probes`` view of every
  probe run of the player's run): the share of C->D flips (retaliation caused) and of D->C flips (forgiveness
  caused) of the opponent's last move that changed the player's move, pooled ratios like the memory-one profile
  (a round probed by two probe runs counts once: its counterfactual answer is the same cached draw); no value
  (—) for a run never probed.

A player's value per opponent and overall is the mean over games with a Student-t 95% interval
(:func:`~harness.analysis.stats.t_interval`). Two players' games are *paired* when every opponent and replicate
one played the other played too (an eval of two models, the same seeds): the difference is then the mean of the
per-game differences with a paired t test; otherwise it is Welch's. Overall, the pairs are matched by opponent and
replicate across all opponents. With several players or metrics many tests are made: their p-values are
Holm-adjusted over the overall table, and :attr:`Comparison.note` says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from harness.analysis.memory_one import Outcome, pooled_rate, ratio_difference
from harness.analysis.profile_summary import CHANCES, PROFILE_DIMENSIONS
from harness.analysis.report import BOUNDS
from harness.analysis.stats import Difference, Estimate, holm, mean_ci, paired_difference, welch_difference
from harness.errors import ConfigError
from harness.store.catalog import Catalog

MEMORY_ONE: dict[str, Outcome] = {f"p_c_{o.value}": o for o in Outcome}
"""The memory-one metrics, each with the outcome it conditions on."""

PROBES: dict[str, str] = {"probe_retaliation": "C->D", "probe_forgiveness": "D->C"}
"""The counterfactual-probe metrics, each with the flip it counts (``counterfactual_probes.flip``)."""

RATIOS = frozenset({*MEMORY_ONE, *PROBES})
"""The metrics that are pooled ratios of per-game counts (``<metric>:c`` of ``<metric>:n``), not means of rates."""

METRICS: tuple[str, ...] = (
    "payoff_per_round",
    "cooperation_rate",
    "retaliation_rate",
    "forgiveness_rate",
    *PROFILE_DIMENSIONS,
    *MEMORY_ONE,
    *PROBES,
    "parse_failure_rate",
    "fallback_rate",
    "cost_usd",
)
"""Every metric compared, in the order tables show them."""

METRIC_NAMES = {
    "payoff_per_round": "payoff / round",
    "cooperation_rate": "cooperation",
    "retaliation_rate": "retaliation",
    "forgiveness_rate": "forgiveness",
    "nice": "nice",
    "forgiving": "forgiving",
    "retaliatory": "retaliatory",
    "troublemaking": "troublemaking",
    "emulative": "emulative",
    **{metric: o.label for metric, o in MEMORY_ONE.items()},
    "probe_retaliation": "probe C->D",
    "probe_forgiveness": "probe D->C",
    "parse_failure_rate": "parse failures",
    "fallback_rate": "fallback moves",
    "cost_usd": "cost / game",
}
"""How tables and charts name each metric (the command adds its unit: cost in cents, the dashboard in dollars)."""

RATE_METRICS = frozenset(
    {"cooperation_rate", "retaliation_rate", "forgiveness_rate", *PROFILE_DIMENSIONS, "parse_failure_rate"}
    | {"fallback_rate", *RATIOS}
)
_BOUNDS = {**BOUNDS, **dict.fromkeys(RATE_METRICS, (0.0, 1.0)), "cost_usd": (0.0, math.inf)}

_PROFILE_COLUMNS = ", ".join(
    f"CASE WHEN bp.{CHANCES[d]} > 0 THEN bp.{d} END AS {d}" if d in CHANCES else f"bp.{d}" for d in PROFILE_DIMENSIONS
)
# Each ratio metric's per-game count (":c") and chances (":n"): of C chosen after an outcome (the memory_one view), of
# probes whose flip changed the move (the counterfactual_probes view).
_COUNTS = {
    metric: ("m.first_c", "m.first_n") if o is Outcome.FIRST else (f"m.c_{o.value}", f"m.n_{o.value}")
    for metric, o in MEMORY_ONE.items()
} | {metric: (f"cp.c_{metric}", f"cp.n_{metric}") for metric in PROBES}
_MEMORY_COLUMNS = ", ".join(
    f'{c} AS "{metric}:c", {n} AS "{metric}:n", {c} / NULLIF({n}, 0) AS {metric}' for metric, (c, n) in _COUNTS.items()
)
_PROBE_COUNTS = ", ".join(
    f"COUNT(*) FILTER (WHERE flip = '{flip}') AS n_{metric}, COUNT(*) FILTER (WHERE flip = '{flip}' AND changed) "
    f"AS c_{metric}"
    for metric, flip in PROBES.items()
)
_GAMES_SQL = f"""
    WITH spent AS (
        SELECT run_id, game_id, player, sum(cost_usd) AS cost_usd, count(cost_usd) AS priced
        FROM calls GROUP BY run_id, game_id, player
    ),
    probed AS (
        SELECT source_run, game_id, player, {_PROBE_COUNTS}
        FROM (SELECT DISTINCT source_run, game_id, player, round, flip, changed FROM counterfactual_probes
              WHERE changed IS NOT NULL)
        GROUP BY source_run, game_id, player
    )
    SELECT pm.run_id, pm.game_id, pm.condition, pm.replicate, pm.player, pm.player_name, pm.player_label,
           pm.opponent_label,
           pm.payoff_per_round, pm.cooperation_rate, pm.retaliation_rate, pm.forgiveness_rate, {_PROFILE_COLUMNS},
           {_MEMORY_COLUMNS},
           pp.parse_failure_rate, pp.fallback_rate, CASE WHEN s.priced > 0 THEN s.cost_usd END AS cost_usd
    FROM player_metrics pm
    JOIN player_parsing pp ON pp.run_id = pm.run_id AND pp.game_id = pm.game_id AND pp.player = pm.player
    LEFT JOIN behaviour_profile bp ON bp.run_id = pm.run_id AND bp.game_id = pm.game_id AND bp.player = pm.player
    LEFT JOIN memory_one m ON m.run_id = pm.run_id AND m.game_id = pm.game_id AND m.player = pm.player
    LEFT JOIN spent s ON s.run_id = pm.run_id AND s.game_id = pm.game_id AND s.player = pm.player
    LEFT JOIN probed cp ON cp.source_run = pm.run_id AND cp.game_id = pm.game_id AND cp.player = pm.player
    WHERE pm.status = 'complete' AND pm.run_id IN ({{runs}})
    ORDER BY pm.run_id, pm.game_id, pm.player"""


@dataclass(frozen=True, slots=True)
class Player:
    """One model player of one run: its label, the run, and the name tables show (the label, with the run id when
    the same label is compared from two runs)."""

    label: str
    run_id: str
    model: str
    shown: str


@dataclass(slots=True)
class _Games:
    """A player's per-game values: by (opponent, replicate), each game's metric values."""

    games: dict[tuple[str, int], dict[str, float | None]] = field(default_factory=dict)

    def values(self, metric: str, opponent: str | None = None) -> list[float | None]:
        return [row[metric] for (opp, _), row in self.games.items() if opponent is None or opp == opponent]

    def counts(self, metric: str, opponent: str | None = None) -> list[tuple[int, int]]:
        """A ratio metric's per-game (count, chances): C chosen after an outcome, probes that changed the move."""
        return [
            (int(row[f"{metric}:c"] or 0), int(row[f"{metric}:n"] or 0))
            for (opp, _), row in self.games.items()
            if opponent is None or opp == opponent
        ]


@dataclass(frozen=True, slots=True)
class Cell:
    """One player's estimate of one metric (per opponent or overall) and, for every player but the first, its
    difference from the first."""

    estimate: Estimate
    difference: Difference | None = None
    p_holm: float | None = None


@dataclass(frozen=True, slots=True)
class Comparison:
    """Players, the opponents they share, and each metric's cells: ``overall[metric][player]`` and
    ``by_opponent[opponent][metric][player]`` (players by their index in :attr:`players`)."""

    players: list[Player]
    opponents: list[str]
    overall: dict[str, list[Cell]]
    by_opponent: dict[str, dict[str, list[Cell]]]
    paired: bool
    games: list[int]
    tests: int

    @property
    def note(self) -> str:
        """How the differences were tested, and what many tests mean."""
        design = (
            "paired by opponent and replicate (every game of one player has its twin in the other's)"
            if self.paired
            else "Welch's unequal-variance t test (the players' games are not matched game by game)"
        )
        many = (
            f" {self.tests} overall differences were tested: their p-values are Holm-adjusted (p Holm), so at most "
            "a 5% chance that any one of those below 0.05 is a false positive; per-opponent p-values are not."
            if self.tests > 1
            else ""
        )
        return (
            f"Differences are each player's minus {self.players[0].shown}'s, {design}; of P(C|..) (pooled ratios), "
            f"tested on their cluster-robust variances over games.{many}"
        )

    def rows(self) -> list[dict[str, Any]]:
        """One row per (scope, metric, player): every figure with its run id, for CSV and JSON."""
        out: list[dict[str, Any]] = []
        scopes: list[tuple[str, dict[str, list[Cell]]]] = [("overall", self.overall)]
        scopes += [(opp, self.by_opponent[opp]) for opp in self.opponents]
        for scope, metrics in scopes:
            for metric, cells in metrics.items():
                for player, cell in zip(self.players, cells, strict=True):
                    e, d = cell.estimate, cell.difference
                    out.append(
                        {
                            "opponent": scope,
                            "metric": metric,
                            "player": player.label,
                            "run_id": player.run_id,
                            "model": player.model,
                            "games": e.n,
                            "mean": e.mean,
                            "ci_low": e.low,
                            "ci_high": e.high,
                            "vs": None if d is None else self.players[0].label,
                            "vs_run_id": None if d is None else self.players[0].run_id,
                            "difference": None if d is None else d.mean,
                            "difference_ci_low": None if d is None else d.low,
                            "difference_ci_high": None if d is None else d.high,
                            "test": None if d is None else d.test,
                            "p": None if d is None else d.p,
                            "p_holm": cell.p_holm,
                        }
                    )
        return out


def resolve_players(catalog: Catalog, targets: list[str], run_ids: dict[str, list[str]]) -> list[Player]:
    """The model players named by ``targets``: each is either a run (``run_ids`` maps it to the run it resolved to:
    every model player of that run) or a model name or label (every run of the folder, fingerprint runs left out,
    in which a model player has that name or label). A target that names neither is an error that says what the
    folder holds."""
    found: list[tuple[str, str, str]] = []  # label, run id, model
    for target in targets:
        runs = run_ids.get(target)
        if runs is not None:
            rows = catalog.records(
                "SELECT player_label, run_id, player_name FROM player_parsing WHERE run_id = ? "
                "GROUP BY ALL ORDER BY min(game_id), min(player)",  # in the plan's order, seat a first
                runs,
            )
        else:
            # Fingerprint runs are left out: their opponents are probes, which no other run meets (name one by
            # its run id to compare it).
            rows = catalog.records(
                "SELECT p.player_label, p.run_id, p.player_name FROM player_parsing p JOIN runs r USING (run_id) "
                "WHERE (p.player_name = ? OR p.player_label = ?) AND r.kind <> 'fingerprint' "
                "GROUP BY ALL ORDER BY p.run_id, min(p.game_id), min(p.player)",
                [target, target],
            )
        if not rows:
            models = [r["player_label"] for r in catalog.records("SELECT DISTINCT player_label FROM player_parsing")]
            known = ", ".join(sorted(models)[:12]) or "none"
            raise ConfigError(
                f"{target!r} is neither a run in {catalog.results_dir} (its id, a unique prefix of one, or latest) "
                f"nor a model played in one (the models there: {known}); `pdbench runs` lists the runs"
            )
        for r in rows:
            key = (r["player_label"], r["run_id"], r["player_name"])
            if key not in found:
                found.append(key)
    labels = [label for label, _, _ in found]
    return [
        Player(label, run, model, f"{label} @ {run}" if labels.count(label) > 1 else label)
        for label, run, model in found
    ]


def compare(catalog: Catalog, players: list[Player]) -> Comparison:
    """The comparison of ``players`` (two or more) over the opponents all of them met in complete games."""
    if len(players) < 2:
        only = players[0].shown if players else "nothing"
        raise ConfigError(
            f"a comparison needs two players or more, and this finds one ({only}): name two runs, two models, or a "
            "run in which two model players (two models, or one model under two personas) played"
        )
    runs = sorted({p.run_id for p in players})
    rows = catalog.records(_GAMES_SQL.format(runs=", ".join("?" * len(runs))), runs)
    index = {(p.label, p.run_id): p for p in players}
    mine = [row for row in rows if (row["player_label"], row["run_id"]) in index]
    # Games are matched by opponent; players that met each other (two personas of one model playing each other)
    # have no opponent in common, and are matched by the condition they played in instead.
    by = "opponent_label" if _meet(players, index, mine, "opponent_label") else "condition"
    games: dict[Player, _Games] = {p: _Games() for p in players}
    for row in mine:
        key = (row[by], int(row["replicate"]))
        values = {m: _number(row[m]) for m in METRICS}
        values |= {f"{m}:{part}": _number(row[f"{m}:{part}"]) for m in RATIOS for part in "cn"}
        games[index[(row["player_label"], row["run_id"])]].games[key] = values
    opponents = _shared_opponents(players, games)
    for p in players:  # only the shared opponents count, overall too
        games[p].games = {k: v for k, v in games[p].games.items() if k[0] in opponents}
    paired = _paired(players, games)
    overall = {m: _cells(players, games, m, None, paired) for m in METRICS}
    by_opponent = {opp: {m: _cells(players, games, m, opp, paired) for m in METRICS} for opp in opponents}
    tests = _adjust(players, overall)
    return Comparison(players, opponents, overall, by_opponent, paired, [len(games[p].games) for p in players], tests)


def _number(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _meet(players: list[Player], index: dict[tuple[str, str], Player], rows: list[dict[str, Any]], by: str) -> bool:
    """Whether every player has at least one ``by`` value (opponent or condition) in common with the others."""
    seen: dict[Player, set[str]] = {p: set() for p in players}
    for row in rows:
        seen[index[(row["player_label"], row["run_id"])]].add(row[by])
    return bool(set.intersection(*seen.values()))


def _shared_opponents(players: list[Player], games: dict[Player, _Games]) -> list[str]:
    met = [{opp for opp, _ in games[p].games} for p in players]
    empty = [p.shown for p, m in zip(players, met, strict=True) if not m]
    if empty:
        raise ConfigError(
            f"{', '.join(empty)} {'has' if len(empty) == 1 else 'have'} no complete game to compare; "
            "`pdbench runs` shows each run's games (resume an interrupted run first)"
        )
    shared = set.intersection(*met)
    if not shared:
        listing = "; ".join(f"{p.shown}: {', '.join(sorted(m))}" for p, m in zip(players, met, strict=True))
        raise ConfigError(
            "these players have no opponent in common, so nothing can be compared game for game "
            f"({listing}); compare runs that played the same opponents (an eval's default panel, say)"
        )
    order = [opp for opp, _ in games[players[0]].games]
    return sorted(shared, key=order.index)


def _paired(players: list[Player], games: dict[Player, _Games]) -> bool:
    """Whether every player played exactly the same (opponent, replicate) games: then games pair one to one."""
    keys = [set(games[p].games) for p in players]
    return all(k == keys[0] for k in keys[1:])


def _cells(
    players: list[Player], games: dict[Player, _Games], metric: str, opponent: str | None, paired: bool
) -> list[Cell]:
    first = games[players[0]]
    if metric in RATIOS:
        base = first.counts(metric, opponent)
        return [
            Cell(pooled_rate(base))
            if i == 0
            else Cell(
                pooled_rate(own := games[p].counts(metric, opponent)),
                _within(ratio_difference(base, own), _BOUNDS.get(metric)),
            )
            for i, p in enumerate(players)
        ]
    cells = []
    for i, p in enumerate(players):
        values = games[p].values(metric, opponent)
        estimate = mean_ci(values, bounds=_BOUNDS.get(metric))
        if i == 0:
            cells.append(Cell(estimate))
            continue
        if paired:
            keys = [k for k in first.games if opponent is None or k[0] == opponent]
            diff = paired_difference((first.games[k][metric], games[p].games[k][metric]) for k in keys)
        else:
            diff = welch_difference(first.values(metric, opponent), values)
        cells.append(Cell(estimate, _within(diff, _BOUNDS.get(metric))))
    return cells


def _within(diff: Difference, bounds: tuple[float, float] | None) -> Difference:
    """A difference's interval cut where no difference can lie: two rates differ by at most 1 either way (as an
    estimate's interval is cut at its metric's bounds; the test is unchanged)."""
    if bounds is None or diff.low is None or diff.high is None or math.isinf(bounds[1] - bounds[0]):
        return diff
    span = bounds[1] - bounds[0]
    return replace(diff, low=max(diff.low, -span), high=min(diff.high, span))


def _adjust(players: list[Player], overall: dict[str, list[Cell]]) -> int:
    """Holm-adjust the overall differences' p-values in place; returns how many tests there were."""
    slots = [(m, i) for m in METRICS for i in range(1, len(players))]
    raw: list[float | None] = []
    for m, i in slots:
        diff = overall[m][i].difference
        raw.append(diff.p if diff is not None else None)
    adjusted = holm(raw)
    for (m, i), p in zip(slots, adjusted, strict=True):
        cell = overall[m][i]
        overall[m][i] = Cell(cell.estimate, cell.difference, p)
    return sum(p is not None for p in raw)
