"""Every figure of the analysis on the measured table, and its interval over the bootstrap draws.

:func:`figures` computes them on one table; :func:`analyze` on the table of means (the estimates) and on K
resampled tables (the intervals), and keeps both in an :class:`Analysis`, which lays them out as a JSON object
(:meth:`Analysis.as_dict`) and as rows (:meth:`Analysis.rows`, for CSV).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from harness.analysis.evolutionary import bootstrap
from harness.analysis.evolutionary.fixation import fixation_matrix
from harness.analysis.evolutionary.gradient import Contest, contest, gradient, root
from harness.analysis.evolutionary.invasion import invades
from harness.analysis.evolutionary.process import Population
from harness.analysis.evolutionary.rest_points import Ess, RestPoint, RestPoints, Stability, rest_points, rest_points_of
from harness.analysis.evolutionary.stationary import stationary_distribution
from harness.analysis.evolutionary.table import MeasuredTable
from harness.errors import ConfigError

MAX_BOOTSTRAP = 100_000


@dataclass(frozen=True, slots=True, eq=False)
class Figures:
    """Every figure on one table of payoffs per round."""

    table: np.ndarray
    rho: np.ndarray
    stationary: np.ndarray
    gradients: dict[tuple[int, int], np.ndarray]  # i < j: G(k) for k = 1 .. N - 1 i among N - k j
    rest: RestPoints | None


def figures(table: np.ndarray, population: Population, replicator: bool = True) -> Figures:
    """The fixation matrix, the stationary distribution, every pair's gradient and (if ``replicator``) the
    replicator's rest points, on ``table``."""
    rho = fixation_matrix(table, population)
    k = len(table)
    grads = {(i, j): gradient(table, i, j, population) for i in range(k) for j in range(i + 1, k)}
    return Figures(table, rho, stationary_distribution(rho), grads, rest_points(table) if replicator else None)


@dataclass(frozen=True, slots=True)
class RestSummary:
    """A rest point of the estimate, over the draws: in how many a rest point on the same face exists, is stable,
    is an ESS, and the interval of its shares over the draws where it exists."""

    point: RestPoint
    present: float
    stable: float
    ess: float
    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True, slots=True, eq=False)
class Analysis:
    players: tuple[str, ...]
    origin: str
    population: Population
    draws: int
    seed: int
    point: Figures
    samples: list[Figures] = field(repr=False)
    cpu_seconds: float
    fewest_games: int

    # -- intervals over the draws ---------------------------------------------------------------------------
    def interval(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The percentile interval of figure ``name`` (``table``, ``rho`` or ``stationary``)."""
        return bootstrap.percentile_interval(np.stack([getattr(s, name) for s in self.samples]))

    def invasion_share(self) -> np.ndarray:
        """``out[i, j]``: the share of draws in which i invades j."""
        return np.asarray(np.mean([invades(s.rho, self.population.size) for s in self.samples], axis=0))

    def gradient_interval(self, pair: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        return bootstrap.percentile_interval(np.stack([s.gradients[pair] for s in self.samples]))

    def contest_share(self, pair: tuple[int, int]) -> float:
        """The share of draws in which the pair's contest is the estimate's."""
        shown = contest(self.point.gradients[pair])
        return float(np.mean([contest(s.gradients[pair]) == shown for s in self.samples]))

    def rest_summaries(self) -> list[RestSummary]:
        if self.point.rest is None:
            return []
        out = []
        for p in self.point.rest.points:
            found = [r for s in self.samples if s.rest is not None and (r := s.rest.on(p.support)) is not None]
            shares = np.stack([r.shares for r in found]) if found else np.full((1, len(self.players)), np.nan)
            low, high = bootstrap.percentile_interval(shares)
            out.append(
                RestSummary(
                    p,
                    len(found) / self.draws,
                    sum(r.stability is Stability.stable for r in found) / self.draws,
                    sum(r.ess is Ess.ess for r in found) / self.draws,
                    low,
                    high,
                )
            )
        return out

    @property
    def note(self) -> str:
        """What the intervals are, for every output."""
        few = (
            " Some pair has a single game: its cells cannot vary in the bootstrap, so their intervals are points."
            if self.fewest_games < 2
            else ""
        )
        return (
            f"95% percentile intervals over {self.draws:,} bootstrap draws of the games (each pair's games resampled "
            f"with replacement, seed {self.seed}); verdicts with the share of draws in which they hold.{few}"
        )

    # -- outputs -----------------------------------------------------------------------------------------------
    def as_dict(self) -> dict[str, Any]:
        """Every figure with its interval, as one JSON-ready object (NaN as None)."""
        k, n = len(self.players), self.population.size
        names = self.players
        t_low, t_high = self.interval("table")
        r_low, r_high = self.interval("rho")
        s_low, s_high = self.interval("stationary")
        share = self.invasion_share()
        out: dict[str, Any] = {
            "origin": self.origin,
            "players": list(names),
            "population": n,
            "dynamics": self.population.process.value,
            "intensity": {self.population.process.intensity_name: self.population.intensity},
            "bootstrap": self.draws,
            "seed": self.seed,
            "interval": self.note,
            "cpu_seconds": round(self.cpu_seconds, 3),
            "payoffs": [
                _cell(names[i], names[j], self.point.table[i, j], t_low[i, j], t_high[i, j])
                for i in range(k)
                for j in range(k)
            ],
            "fixation": [
                {
                    **_cell(names[i], names[j], self.point.rho[i, j], r_low[i, j], r_high[i, j]),
                    "neutral": 1.0 / n,
                    "invades": bool(self.point.rho[i, j] > 1.0 / n),
                    "invades_share": float(share[i, j]),
                }
                for i in range(k)
                for j in range(k)
                if i != j
            ],
            "stationary": [
                {"player": names[i], **_value(self.point.stationary[i], s_low[i], s_high[i])} for i in range(k)
            ],
            "gradients": [self._gradient(pair) for pair in self.point.gradients],
            "rest_points": [_rest(r, names) for r in self.rest_summaries()],
        }
        if self.point.rest is not None:
            out["degenerate_faces"] = [[names[i] for i in face] for face in self.point.rest.degenerate]
        return out

    def _gradient(self, pair: tuple[int, int]) -> dict[str, Any]:
        g = self.point.gradients[pair]
        low, high = self.gradient_interval(pair)
        return {
            "player": self.players[pair[0]],
            "opponent": self.players[pair[1]],
            "contest": contest(g).value,
            "contest_share": self.contest_share(pair),
            "root": root(g),
            "k": list(range(1, len(g) + 1)),
            "estimate": _floats(g),
            "low": _floats(low),
            "high": _floats(high),
        }

    def rows(self) -> list[dict[str, Any]]:
        """One row per figure (long format, for CSV): figure, player, opponent, k, estimate, low, high, share."""
        d = self.as_dict()
        rows: list[dict[str, Any]] = []

        def add(figure: str, player: str, opponent: str | None, k: int | None, est: Any, low: Any, high: Any,
                share: Any = None) -> None:  # fmt: skip
            rows.append(
                {"figure": figure, "player": player, "opponent": opponent, "k": k, "estimate": est, "low": low,
                 "high": high, "share": share}
            )  # fmt: skip

        for c in d["payoffs"]:
            add("payoff", c["player"], c["opponent"], None, c["estimate"], c["low"], c["high"])
        for c in d["fixation"]:
            add("fixation", c["player"], c["opponent"], None, c["estimate"], c["low"], c["high"], c["invades_share"])
        for c in d["stationary"]:
            add("stationary", c["player"], None, None, c["estimate"], c["low"], c["high"])
        for g in d["gradients"]:
            add("contest", g["player"], g["opponent"], None, g["contest"], None, None, g["contest_share"])
            for k, est, low, high in zip(g["k"], g["estimate"], g["low"], g["high"], strict=True):
                add("gradient", g["player"], g["opponent"], k, est, low, high)
        for r in d["rest_points"]:
            face = "+".join(r["support"])
            add("rest_point_present", face, None, None, None, None, None, r["present_share"])
            add("rest_point_stable", face, r["stability"], None, None, None, None, r["stable_share"])
            add("rest_point_ess", face, r["ess"], None, None, None, None, r["ess_share"])
            for s in r["shares"]:
                add("rest_point_share", face, s["player"], None, s["estimate"], s["low"], s["high"])
        return rows


def _num(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def _floats(xs: np.ndarray) -> list[float | None]:
    return [_num(float(x)) for x in xs]


def _value(est: float, low: float, high: float) -> dict[str, float | None]:
    return {"estimate": _num(est), "low": _num(low), "high": _num(high)}


def _cell(player: str, opponent: str, est: float, low: float, high: float) -> dict[str, Any]:
    return {"player": player, "opponent": opponent, **_value(est, low, high)}


def _rest(r: RestSummary, names: tuple[str, ...]) -> dict[str, Any]:
    return {
        "support": [names[i] for i in r.point.support],
        "stability": r.point.stability.value,
        "eigenvalues_real": _floats(r.point.eigenvalues),
        "ess": r.point.ess.value,
        "present_share": r.present,
        "stable_share": r.stable,
        "ess_share": r.ess,
        "shares": [{"player": names[i], **_value(r.point.shares[i], r.low[i], r.high[i])} for i in r.point.support],
    }


def check_bootstrap(draws: int) -> None:
    if not 1 <= draws <= MAX_BOOTSTRAP:
        raise ConfigError(
            f"--bootstrap {draws}: the intervals need at least one bootstrap draw (1,000 is usual; at most "
            f"{MAX_BOOTSTRAP:,}); give --bootstrap K with K >= 1"
        )


def analyze(
    table: MeasuredTable, population: Population, *, draws: int, seed: int, replicator: bool = True
) -> Analysis:
    """Every figure of ``table`` for ``population``, with its interval over ``draws`` bootstrap draws; the settings
    are checked first (:meth:`Population.check`, the number of draws), so a bad one fails before anything runs."""
    check_bootstrap(draws)
    population.check(table.size, table.span())
    start = time.process_time()
    point = figures(table.point(), population, replicator)
    samples = bootstrap.draws(table, draws, seed, lambda t: figures(t, population, replicator=False))
    if replicator:  # the rest points of every draw at once (rest_points_of): most of the time otherwise
        rests = rest_points_of(np.stack([s.table for s in samples]))
        samples = [replace(s, rest=r) for s, r in zip(samples, rests, strict=True)]
    return Analysis(
        table.players,
        table.origin,
        population,
        draws,
        seed,
        point,
        samples,
        time.process_time() - start,
        table.fewest_games(),
    )


__all__ = ["Analysis", "Contest", "Figures", "RestSummary", "analyze", "check_bootstrap", "figures"]
