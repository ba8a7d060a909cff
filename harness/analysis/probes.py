"""Counterfactual probes, read side: what a source run offers to probe, and the share of probes whose flip changed
the model's move, by kind of flip, with a 95% interval over games.

``pdbench probe`` (:mod:`harness.engine.probe`) asks a model for round t of a recorded game twice: as the round was
(the *factual* request, from the cache) and with the opponent's move at t - 1 flipped in the history the model sees
(the *counterfactual* one). The ``counterfactual_probes`` view (:mod:`harness.store.views.probes`) pairs them.

The share for one kind of flip (C->D: retaliation caused; D->C: forgiveness caused) is the ratio estimator over all
its probes (changed / probes), and its interval is over games, not probes: the probes of one game share its history
and its draw of the model, so they are not independent. Each source game is one cluster (in self-play both seats'
probes are in it), and the interval is the one the memory-one profile uses
(:func:`harness.analysis.memory_one.pooled_rate`: the CR1 cluster-robust variance of a ratio, Wilson's interval at the
effective sample size with Student's t on G - 1 degrees of freedom), so a probe share and a memory-one rate read alike.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from dataclasses import dataclass, field

from harness.analysis.memory_one import pooled_rate
from harness.analysis.stats import Estimate
from harness.store.catalog import Catalog
from harness.store.views.probes import COUNTERFACTUAL, FACTUAL, PROBE_KIND

PROBE_NOTE = (
    "share: probes whose flip of the opponent's move at t-1 changed the model's move at t; 95% interval over games "
    "(cluster-robust, Korn & Graubard). C->D: retaliation caused; D->C: forgiveness caused."
)
"""What tables of the shares say under them."""

__all__ = [
    "COUNTERFACTUAL",
    "FACTUAL",
    "PROBE_KIND",
    "PROBE_NOTE",
    "Flip",
    "ProbeShare",
    "RecordedGame",
    "mean_move_cost",
    "probe_shares",
    "probes_of",
    "recorded_games",
    "recorded_move_answers",
]


class Flip(enum.StrEnum):
    """The kind of flip of the opponent's move at t - 1 (the view's ``flip``), and what a change of move shows."""

    C_TO_D = "C->D"
    D_TO_C = "D->C"

    @property
    def effect(self) -> str:
        return "retaliation" if self is Flip.C_TO_D else "forgiveness"

    @classmethod
    def of(cls, opponent_move: str) -> Flip:
        """The flip of a probe whose opponent played ``opponent_move`` at t - 1."""
        return cls.C_TO_D if opponent_move == "C" else cls.D_TO_C


@dataclass(frozen=True, slots=True)
class RecordedGame:
    """A complete game of the source run, as the probes rebuild it: both seats' moves as played, the opponent's
    moves as each seat saw them (what its prompt showed: the played moves unless observation noise misread one),
    as intended (the factual answers), and the rounds whose move was a fallback (not the model's)."""

    game_id: int
    rounds: int
    played_a: tuple[str, ...]
    played_b: tuple[str, ...]
    intended_a: tuple[str, ...]
    intended_b: tuple[str, ...]
    flagged_a: frozenset[int] = field(default_factory=frozenset)
    flagged_b: frozenset[int] = field(default_factory=frozenset)
    observed_a: tuple[str, ...] | None = None  # B's moves as A saw them (None: as played)
    observed_b: tuple[str, ...] | None = None  # A's moves as B saw them

    def played(self, seat: str) -> tuple[str, ...]:
        return self.played_a if seat == "a" else self.played_b

    def seen(self, seat: str) -> tuple[str, ...]:
        """The opponent's moves as the player in ``seat`` saw them."""
        observed = self.observed_a if seat == "a" else self.observed_b
        return observed if observed is not None else self.played("b" if seat == "a" else "a")

    def intended(self, seat: str) -> tuple[str, ...]:
        return self.intended_a if seat == "a" else self.intended_b

    def flagged(self, seat: str) -> frozenset[int]:
        return self.flagged_a if seat == "a" else self.flagged_b


def recorded_games(catalog: Catalog, run_id: str) -> list[RecordedGame]:
    """The source run's complete games, in ``game_id`` order, with every round."""
    rows = catalog.query(
        "SELECT r.game_id, list(r.action_a::VARCHAR ORDER BY r.round), list(r.action_b::VARCHAR ORDER BY r.round), "
        "list(r.intended_a::VARCHAR ORDER BY r.round), list(r.intended_b::VARCHAR ORDER BY r.round), "
        "list(r.round) FILTER (WHERE r.flagged_a), list(r.round) FILTER (WHERE r.flagged_b), "
        "list(r.observed_a::VARCHAR ORDER BY r.round), list(r.observed_b::VARCHAR ORDER BY r.round) "
        "FROM rounds r JOIN games g USING (run_id, game_id) "
        "WHERE r.run_id = ? AND g.status = 'complete' GROUP BY r.game_id ORDER BY r.game_id",
        [run_id],
    )[1]
    return [
        RecordedGame(
            game_id=int(g),
            rounds=len(pa),
            played_a=tuple(pa),
            played_b=tuple(pb),
            intended_a=tuple(ia),
            intended_b=tuple(ib),
            flagged_a=frozenset(fa or ()),
            flagged_b=frozenset(fb or ()),
            observed_a=tuple(oa),
            observed_b=tuple(ob),
        )
        for g, pa, pb, ia, ib, fa, fb, oa, ob in rows
    ]


def recorded_move_answers(catalog: Catalog, run_id: str) -> list[tuple[str, str, str, str, str | None]]:
    """The answers the source run received to its move requests, as (provider, model, request JSON, answer, refusal
    reason or None): what serves a factual request when the response cache no longer holds it (as resume does)."""
    rows = catalog.query(
        "SELECT provider, model, request_json::VARCHAR, response_text, "
        "CASE WHEN outcome = 'refused' THEN error END FROM calls "
        "WHERE run_id = ? AND purpose = 'move' AND response_text IS NOT NULL "
        "AND outcome IN ('ok', 'unparseable', 'refused')",
        [run_id],
    )[1]
    return [(str(p), str(m), str(r), str(t), None if e is None else str(e)) for p, m, r, t, e in rows]


def mean_move_cost(catalog: Catalog, run_id: str) -> float | None:
    """The mean cost in dollars of the source run's paid move calls (None: none was paid or priced): what one
    counterfactual request is estimated to cost before a probe run starts."""
    row = catalog.query(
        "SELECT avg(cost_usd) FROM calls WHERE run_id = ? AND purpose = 'move' AND NOT cached AND cost_usd IS NOT NULL",
        [run_id],
    )[1]
    return None if not row or row[0][0] is None else float(row[0][0])


@dataclass(frozen=True, slots=True)
class ProbeShare:
    """The share of one model's probes of one kind of flip that changed its move, over games."""

    player_name: str
    flip: Flip
    probes: int
    changed: int
    share: Estimate  # n: the games with a probe of this kind


def probe_shares(catalog: Catalog, run_id: str) -> list[ProbeShare]:
    """Per model of the probe run ``run_id`` and kind of flip: the probes with a readable answer to both requests,
    how many changed the move, and the share with its interval over games (see the module docstring)."""
    return _shares(catalog, "run_id = ?", [run_id])


def probes_of(catalog: Catalog, source_run: str) -> list[ProbeShare]:
    """The shares of every probe run of ``source_run`` together (``catalog`` must hold them and the source): a
    round probed by two probe runs counts once, since its counterfactual answer is the same cached draw."""
    return _shares(catalog, "source_run = ?", [source_run])


def _shares(catalog: Catalog, where: str, params: list[object]) -> list[ProbeShare]:
    rows = catalog.query(
        "SELECT player_name, flip, game_id, count(*), count(*) FILTER (WHERE changed) FROM ("
        "  SELECT DISTINCT source_run, game_id, round, player, player_name, flip, changed FROM counterfactual_probes"
        f"  WHERE {where} AND changed IS NOT NULL"
        ") GROUP BY player_name, flip, game_id ORDER BY player_name, flip, game_id",
        params,
    )[1]
    per: dict[tuple[str, Flip], list[tuple[int, int]]] = defaultdict(list)
    for name, flip, _game, n, c in rows:
        per[(str(name), Flip(flip))].append((int(c), int(n)))
    return [
        ProbeShare(name, flip, sum(n for _, n in games), sum(c for c, _ in games), pooled_rate(games))
        for (name, flip), games in sorted(per.items())
    ]
