"""Two classic strategies playing a game: the synchronous fast path, with no event loop."""

from __future__ import annotations

import random

from harness.game.horizon import Horizon
from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.game.seeds import stream
from harness.players.strategies.base import Strategy
from harness.players.strategies.registry import StrategySpec


def play_strategies(match: Match, a: Strategy, b: Strategy, rounds: int) -> Match:
    """Play ``rounds`` rounds between two classic strategies; the fast path.

    With noise, every round goes through :meth:`Match.record`. Without it, intended and
    played moves coincide, so the loop only appends moves and payoffs and the rest of the
    bookkeeping is done once at the end; the result is the same as through ``record``.
    """
    move_a, move_b = a.move, b.move
    hist_a, hist_b = match.moves_a, match.moves_b
    if match.noise > 0.0:
        record = match.record
        for _ in range(rounds):
            record(move_a(hist_a, hist_b), move_b(hist_b, hist_a))
        return match
    start = len(hist_a)
    table = match._table
    pays_a, pays_b = match.payoffs_a, match.payoffs_b
    for _ in range(rounds):
        x = move_a(hist_a, hist_b)
        y = move_b(hist_b, hist_a)
        hist_a.append(x)
        hist_b.append(y)
        pa, pb = table[(x, y)]
        pays_a.append(pa)
        pays_b.append(pb)
    match.intended_a.extend(hist_a[start:])
    match.intended_b.extend(hist_b[start:])
    match.score_a += sum(pays_a[start:])
    match.score_b += sum(pays_b[start:])
    return match


class NoDraws(random.Random):
    """Handed to what must never draw (deterministic strategies, noiseless games): a
    strategy that draws without declaring ``stochastic = True`` would be silently memoized, so it fails
    loudly."""

    def random(self) -> float:
        raise RuntimeError("a strategy declared deterministic drew a random number; set stochastic = True")


NO_DRAWS = NoDraws(0)


def play_seeded(
    spec_a: StrategySpec,
    spec_b: StrategySpec,
    game: PayoffMatrix,
    horizon: Horizon,
    noise: float,
    seed: int,
    length: int | None = None,
) -> Match:
    """One whole game between two classic strategies, every draw from the game's seed: the horizon,
    the noise and each stochastic player read their own stream (``horizon``, ``noise``, ``a``, ``b``,
    as :func:`harness.game.seeds.stream` derives them), and nothing else is seeded. So the same specs,
    game and seed always give the same game, whoever plays it. ``length``, when given, is the length
    already drawn from this seed's horizon stream."""
    if length is None:
        length = horizon.game_length(seed)
    match = Match(game, noise, stream(seed, "noise") if noise > 0 else NO_DRAWS)
    a = spec_a.build(game, stream(seed, "a") if spec_a.cls.stochastic else NO_DRAWS)
    b = spec_b.build(game, stream(seed, "b") if spec_b.cls.stochastic else NO_DRAWS)
    return play_strategies(match, a, b, length)
