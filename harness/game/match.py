"""One game between two players, round by round.

The rules of a round (noise, payoffs, bookkeeping) live in :class:`Match`. Two drivers
feed it moves: :func:`play_strategies` for two classic strategies, a plain loop with
no event loop and no per-round allocation beyond the histories; and :func:`play_game`
for any pair that includes an awaited :class:`~harness.game.view.Agent` (a model),
which asks both players at the same time when both must be awaited.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from harness.game.horizon import HorizonInfo
from harness.game.rules import FLIP, Action, PayoffMatrix
from harness.game.view import Agent, Decision, Policy, RoundView


@dataclass(slots=True)
class Match:
    """The state of one game: both players' moves as intended and as played, and payoffs."""

    game: PayoffMatrix
    noise: float
    noise_rng: random.Random
    moves_a: list[Action] = field(default_factory=list)
    moves_b: list[Action] = field(default_factory=list)
    intended_a: list[Action] = field(default_factory=list)
    intended_b: list[Action] = field(default_factory=list)
    payoffs_a: list[float] = field(default_factory=list)
    payoffs_b: list[float] = field(default_factory=list)
    flagged_a: list[int] = field(default_factory=list)  # rounds (1-based) whose move was not really chosen
    flagged_b: list[int] = field(default_factory=list)
    score_a: float = 0.0
    score_b: float = 0.0

    @property
    def rounds_played(self) -> int:
        return len(self.moves_a)

    def record(self, intended_a: Action, intended_b: Action, flagged_a: bool = False, flagged_b: bool = False) -> None:
        """Play one round: apply noise (A's draw first, then B's), score it, append it."""
        self.intended_a.append(intended_a)
        self.intended_b.append(intended_b)
        if self.noise > 0.0:
            rng = self.noise_rng.random
            played_a = FLIP[intended_a] if rng() < self.noise else intended_a
            played_b = FLIP[intended_b] if rng() < self.noise else intended_b
        else:
            played_a, played_b = intended_a, intended_b
        pay_a, pay_b = self._table[(played_a, played_b)]
        self.moves_a.append(played_a)
        self.moves_b.append(played_b)
        self.payoffs_a.append(pay_a)
        self.payoffs_b.append(pay_b)
        if flagged_a:
            self.flagged_a.append(len(self.moves_a))
        if flagged_b:
            self.flagged_b.append(len(self.moves_b))
        self.score_a += pay_a
        self.score_b += pay_b

    def __post_init__(self) -> None:
        self._table = self.game.table()

    _table: dict[tuple[str, str], tuple[float, float]] = field(init=False, repr=False)

    def view(self, seat: str, horizon: HorizonInfo) -> RoundView:
        """What the player in ``seat`` may know before the next round."""
        if seat == "a":
            own, opp, own_p, opp_p = self.moves_a, self.moves_b, self.payoffs_a, self.payoffs_b
            own_s, opp_s = self.score_a, self.score_b
        else:
            own, opp, own_p, opp_p = self.moves_b, self.moves_a, self.payoffs_b, self.payoffs_a
            own_s, opp_s = self.score_b, self.score_a
        return RoundView(
            seat="a" if seat == "a" else "b",
            round=self.rounds_played + 1,
            horizon=horizon,
            payoffs=self.game,
            own_moves=tuple(own),
            opponent_moves=tuple(opp),
            own_payoffs=tuple(own_p),
            opponent_payoffs=tuple(opp_p),
            own_score=own_s,
            opponent_score=opp_s,
        )


Player = Policy | Agent


async def _decide(player: Player, match: Match, seat: str, horizon: HorizonInfo) -> Decision:
    if not isinstance(player, Agent):
        own, opp = (match.moves_a, match.moves_b) if seat == "a" else (match.moves_b, match.moves_a)
        return Decision(player.move(own, opp))
    return await player.act(match.view(seat, horizon))


async def _decide_both(a: Player, b: Player, match: Match, horizon: HorizonInfo) -> tuple[Decision, Decision]:
    """Ask both players at once (two model calls in flight, not one after the other).

    If one fails, the other is still allowed to finish (its call may be paid for and must be
    recorded), and the first failure is raised as itself, not wrapped in an exception group.
    """
    results: dict[str, Decision] = {}
    errors: list[Exception] = []

    async def ask(seat: str, player: Player) -> None:
        try:
            results[seat] = await _decide(player, match, seat, horizon)
        except Exception as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask, "a", a)
        tg.start_soon(ask, "b", b)
    if errors:
        raise errors[0]
    return results["a"], results["b"]


async def play_game(
    match: Match,
    a: Player,
    b: Player,
    rounds: int,
    horizon: HorizonInfo,
    on_round: Callable[[Match], object] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Match:
    """Play ``rounds`` rounds where at least one player is awaited.

    When both players are agents their moves are requested concurrently; a strategy
    answers inline. ``on_round`` (if given) sees the match after each round, e.g. to
    record it. Cancellation between rounds leaves ``match`` holding every finished round.
    """
    both_awaited = isinstance(a, Agent) and isinstance(b, Agent)
    for _ in range(rounds - match.rounds_played):
        if should_stop is not None and should_stop():
            break
        if both_awaited:
            dec_a, dec_b = await _decide_both(a, b, match, horizon)
        else:
            dec_a = await _decide(a, match, "a", horizon)
            dec_b = await _decide(b, match, "b", horizon)
        match.record(dec_a.action, dec_b.action, dec_a.flagged, dec_b.flagged)
        if on_round is not None:
            on_round(match)
    return match
