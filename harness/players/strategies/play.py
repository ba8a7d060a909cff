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
    """Play ``rounds`` rounds between two classic strategies, through :meth:`Match.play` (its one
    round loop, noisy or not); the match is returned for chaining."""
    match.play(a, b, rounds)
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
    observation: float = 0.0,
) -> Match:
    """One whole game between two classic strategies, every draw from the game's seed: the horizon,
    the noise and each stochastic player read their own stream (``horizon``, ``noise``, ``a``, ``b``,
    as :func:`harness.game.seeds.stream` derives them), and nothing else is seeded; observation noise
    (``observation``) reads a stream of its own, ``observation``, so a game without it is drawn exactly
    as before it existed. So the same specs,
    game and seed always give the same game, whoever plays it. ``length``, when given, is the length
    already drawn from this seed's horizon stream."""
    if length is None:
        length = horizon.game_length(seed)
    match = Match(
        game,
        noise,
        stream(seed, "noise") if noise > 0 else NO_DRAWS,
        observation=observation,
        observation_rng=stream(seed, "observation") if observation > 0 else None,
    )
    a = spec_a.build(game, stream(seed, "a") if spec_a.cls.stochastic else NO_DRAWS)
    b = spec_b.build(game, stream(seed, "b") if spec_b.cls.stochastic else NO_DRAWS)
    return play_strategies(match, a, b, length)
