"""Memory-one profiles of players: P(C | CC), P(C | CD), P(C | DC), P(C | DD) and P(C) in round 1, pooled over a
player's games, each with a 95% interval over games.

The per-game counts come from the ``memory_one`` view (:mod:`harness.store.views.memory_one`: the move the player
chose after each joint outcome as it saw it, fallback rounds left out). The estimate for one outcome is the
*ratio estimator*: every C chosen after it, in all the player's games, over every time it came up (sum c_g / sum
n_g), which weighs each transition alike and is consistent for a memory-one player however often each game
visits the outcome.

Its interval is over games, not over transitions. Rounds of one game are not independent draws (a model that
settles into a habit in one game makes many alike moves there), so a binomial (Wilson) interval on the pooled
transitions would be too narrow: it counts a 200-round game as 200 independent observations. Games are the
independent units (each its own seed and sample), so the variance is the cluster-robust (linearisation) variance of
a ratio over the G games that met the outcome (Cochran 1977, 6.3; the CR1 factor G/(G-1))::

    v = G / (G - 1) * sum_g (c_g - r n_g)^2 / (sum_g n_g)^2

and the interval is Wilson's score interval at the *effective* number of transitions n_eff = r (1 - r) / v with
Student's t on G - 1 degrees of freedom in place of the normal quantile: Korn & Graubard's (1998) way of making a
clustered proportion's interval, which stays inside [0, 1] and is not empty at r = 0 or 1. n_eff is capped at the
transitions counted (clustering never makes a sample worth more than its transitions), and where v = 0 (every game
chose the same share: a deterministic strategy, or r = 0 or 1) it is that count, so TFT's P(C | CC) from 500
transitions in 10 games is 1 [0.992, 1], not a zero-width interval. Fewer than two games that met an outcome give
the estimate with no interval. Tests: tests/unit/test_memory_one.py derives v from the sandwich formula at the
transition level and checks coverage by simulation.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.stats import Difference, Estimate, t_quantile, t_quantile_real, two_sided_p
from harness.analysis.zero_determinant import Payoffs, ZdResult, zd_test
from harness.store.catalog import Catalog


class Outcome(enum.StrEnum):
    """What a memory-one rate conditions on: round 1, or the previous round's outcome as the player saw it (own
    move first). The values are the ``memory_one`` view's column suffixes."""

    FIRST = "first"
    CC = "cc"
    CD = "cd"
    DC = "dc"
    DD = "dd"

    @property
    def label(self) -> str:
        """As tables head the rate: ``P(C|CC)``, ``P(C) round 1``."""
        return "P(C) round 1" if self is Outcome.FIRST else f"P(C|{self.value.upper()})"


NOTE = (
    "P(C | previous round, own move first, as the player saw it), on the moves it chose (fallback rounds left "
    "out); pooled over its complete games, 95% interval over games (cluster-robust, Korn & Graubard)."
)
"""What tables of the profile say under them."""

FOUR: tuple[Outcome, ...] = (Outcome.CC, Outcome.CD, Outcome.DC, Outcome.DD)
"""The outcomes of the four-vector (p1, p2, p3, p4), in Press & Dyson's order."""


def pooled_rate(games: Sequence[tuple[int, int]], level: float = 0.95) -> Estimate:
    """The ratio estimate of a probability from per-game (successes, trials) and its interval over games (see the
    module docstring); ``n`` of the result counts the games with a trial."""
    met = [(c, n) for c, n in games if n > 0]
    total = sum(n for _, n in met)
    if not met:
        return Estimate(None, None, None, 0)
    spread = _ratio_variance(met)
    if spread is None:
        return Estimate(met[0][0] / total, None, None, 1)
    r, v, g = spread
    n_eff = float(total) if v <= 0 else min(float(total), r * (1 - r) / v)
    if n_eff <= 0:  # r is 0 or 1 while v > 0 cannot happen; guard against rounding
        n_eff = float(total)
    low, high = wilson(r, n_eff, t_quantile(0.5 + level / 2, g - 1))
    return Estimate(r, low, high, g)


def _ratio_variance(games: Sequence[tuple[int, int]]) -> tuple[float, float, int] | None:
    """The ratio, its CR1 cluster-robust variance and the games that met the outcome; None below two games."""
    met = [(c, n) for c, n in games if n > 0]
    if len(met) < 2:
        return None
    total = sum(n for _, n in met)
    r = sum(c for c, _ in met) / total
    g = len(met)
    return r, g / (g - 1) * sum((c - r * n) ** 2 for c, n in met) / total**2, g


def ratio_difference(
    first: Sequence[tuple[int, int]], second: Sequence[tuple[int, int]], level: float = 0.95
) -> Difference:
    """The second player's pooled rate minus the first's, with a t interval and test on the sum of their
    cluster-robust variances (two players' games are different samples) and Welch-Satterthwaite degrees of
    freedom from their games. With as many transitions in every game, this is Welch's t test on the per-game
    rates. ``test`` is "ratio"; no interval or p below two games a side or with no spread on either."""
    a, b = _ratio_variance(first), _ratio_variance(second)
    games = (sum(n > 0 for _, n in first), sum(n > 0 for _, n in second))
    ra, rb = pooled_rate(first).mean, pooled_rate(second).mean
    mean = None if ra is None or rb is None else rb - ra
    if a is None or b is None or mean is None or a[1] + b[1] <= 0:
        return Difference(mean, None, None, None, "ratio", games)
    va, vb = a[1], b[1]
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a[2] - 1) + vb**2 / (b[2] - 1))
    half = t_quantile_real(0.5 + level / 2, df) * se
    return Difference(mean, mean - half, mean + half, two_sided_p(mean / se, df), "ratio", games)


def wilson(r: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``r`` of ``n`` trials (``n`` need not be whole) at quantile ``z``."""
    z2 = z * z
    centre = (r + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(r * (1 - r) / n + z2 / (4 * n * n))
    # At r = 0 (1) the lower (upper) end is 0 (1) exactly; computed, it can miss by a rounding error.
    return (0.0 if r <= 0 else max(0.0, centre - half)), (1.0 if r >= 1 else min(1.0, centre + half))


@dataclass(frozen=True, slots=True)
class MemoryOneProfile:
    """One player's memory-one profile: each outcome's pooled estimate with its interval (``Estimate.n`` = games
    that met the outcome) and the transitions counted."""

    label: str
    games: int
    rates: dict[Outcome, Estimate]
    transitions: dict[Outcome, int]
    payoffs: Payoffs | None = None  # the player's R, S, T, P; None if its games had several, or one never came up

    def four_vector(self) -> tuple[Estimate, Estimate, Estimate, Estimate]:
        cc, cd, dc, dd = (self.rates[o] for o in FOUR)
        return cc, cd, dc, dd

    def zd(self) -> ZdResult:
        """The zero-determinant test of the four-vector within its intervals (undetermined without one payoff
        matrix, or with an outcome met in fewer than two games)."""
        vector = self.four_vector()
        if any(e.low is None or e.high is None for e in vector):
            return ZdResult.undetermined("an outcome came up in fewer than two games")
        if self.payoffs is None:
            return ZdResult.undetermined("its games paid an outcome differently (several payoff matrices)")
        return zd_test([e.mean for e in vector], [e.low for e in vector], [e.high for e in vector], self.payoffs)


_COLUMNS = ", ".join(["m.first_n, m.first_c", *(f"m.n_{o.value}, m.c_{o.value}" for o in FOUR)])


def memory_one_profiles(
    catalog: Catalog, run_id: str, *, condition: str | None = None, labels: Sequence[str] | None = None
) -> list[MemoryOneProfile]:
    """The memory-one profile of every player (by ``player_label``) of run ``run_id`` over its complete games, in the
    plan's order (seat a first); only ``condition``'s games if given, only the ``labels`` named if given."""
    where, params = "m.run_id = ? AND g.status = 'complete'", [run_id]
    if condition is not None:
        where += " AND g.condition = ?"
        params.append(condition)
    rows = catalog.records(
        f"SELECT m.player_label, m.game_id, m.player, {_COLUMNS} FROM memory_one m "
        "JOIN games g ON g.run_id = m.run_id AND g.game_id = m.game_id "
        f"WHERE {where} ORDER BY m.game_id, m.player",
        params,
    )
    by_label: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        label = str(row["player_label"])
        if labels is None or label in labels:
            by_label.setdefault(label, []).append(row)
    payoffs = _payoffs(catalog, where, params)
    return [profile_of(label, games, payoffs.get(label)) for label, games in by_label.items()]


def _payoffs(catalog: Catalog, where: str, params: list[str]) -> dict[str, Payoffs]:
    """Each player's own payoffs for CC, CD, DC, DD, read from the rounds it played (as played; a game of
    strategies and a model's game store them alike); a player whose games paid an outcome two ways, or never met
    one, has none."""
    rows = catalog.query(
        "SELECT l.player_label, pr.action || pr.opp_action AS cell, min(pr.payoff), max(pr.payoff) "
        "FROM player_rounds pr JOIN games g ON g.run_id = pr.run_id AND g.game_id = pr.game_id "
        "JOIN player_labels l ON l.run_id = pr.run_id AND l.game_id = pr.game_id AND l.player = pr.player "
        f"WHERE {where.replace('m.run_id', 'pr.run_id')} GROUP BY ALL",
        params,
    )[1]
    cells: dict[str, dict[str, float | None]] = {}
    for label, cell, low, high in rows:
        cells.setdefault(label, {})[cell] = float(low) if low == high else None
    out = {}
    for label, paid in cells.items():
        r, s, t, p = (paid.get(cell) for cell in ("CC", "CD", "DC", "DD"))
        if r is not None and s is not None and t is not None and p is not None:
            out[label] = Payoffs(R=r, S=s, T=t, P=p)
    return out


def profile_of(label: str, games: Sequence[dict[str, object]], payoffs: Payoffs | None = None) -> MemoryOneProfile:
    """A profile from per-game rows of the ``memory_one`` view (``first_n``, ``first_c``, ``n_cc``, ``c_cc``...)."""
    rates, transitions = {}, {}
    for o in Outcome:
        n_key, c_key = ("first_n", "first_c") if o is Outcome.FIRST else (f"n_{o.value}", f"c_{o.value}")
        pairs = [(_int(g[c_key]), _int(g[n_key])) for g in games]
        rates[o] = pooled_rate(pairs)
        transitions[o] = sum(n for _, n in pairs)
    return MemoryOneProfile(label, len(games), rates, transitions, payoffs)


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0
