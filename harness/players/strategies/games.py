"""Games of classic strategies from their seeds, each deterministic pairing played once: the one cache of
deterministic games, shared by tournaments and experiments (:mod:`harness.engine.runner`) and evolution's payoff
tables (:mod:`harness.evolution.payoffs`).

A pairing is *deterministic* (:func:`is_deterministic`) when neither strategy is stochastic and there is no
noise: its moves are then fixed by the two strategies and the payoffs, whatever the seed, so its game is played
once and reused, as the Axelrod library does. Its game of length L is also the first L rounds of any longer
one (a strategy reads only the histories, never the horizon), so one game per pairing, the longest asked for
yet, serves every length: a shorter one is a copy of its first rounds (:meth:`Match.first`), a longer one plays
it again at least twice as long, so a geometric horizon's lengths cost a few plays per pairing, not one per
length.
"""

from __future__ import annotations

from harness.game.horizon import Horizon
from harness.game.match import Match
from harness.game.rules import PayoffMatrix
from harness.players.strategies.play import play_seeded
from harness.players.strategies.registry import StrategySpec


def is_deterministic(spec_a: StrategySpec, spec_b: StrategySpec, noise: float, observation: float = 0.0) -> bool:
    """Whether the game of these two strategies is the same whatever its seed (for a given payoff matrix and
    length): neither draws a random number and no noise (execution or observation) flips a move."""
    return noise == 0.0 and observation == 0.0 and not spec_a.cls.stochastic and not spec_b.cls.stochastic


class StrategyGames:
    """Plays games of classic strategies, deterministic in each game's seed, each deterministic pairing once.

    Remembers the games of at most ``MAX_REMEMBERED`` deterministic pairings (seat order, parameters and
    payoff matrix make a pairing); past that it forgets them all and starts again, so a long evolution run or
    a sweep of many payoff matrices holds a bounded memory. Forgetting changes no result, only its cost.
    """

    MAX_REMEMBERED = 4096

    def __init__(self) -> None:
        self._longest: dict[tuple[StrategySpec, StrategySpec, PayoffMatrix], Match] = {}

    def __len__(self) -> int:
        """The number of deterministic pairings remembered."""
        return len(self._longest)

    def play(
        self,
        spec_a: StrategySpec,
        spec_b: StrategySpec,
        game: PayoffMatrix,
        horizon: Horizon,
        noise: float,
        seed: int,
        observation: float = 0.0,
    ) -> tuple[Match, int]:
        """The game of ``spec_a`` (seat a) against ``spec_b`` from ``seed``, as
        :func:`~harness.players.strategies.play.play_seeded` plays it, and its length (drawn from the seed's
        horizon stream). A deterministic pairing's game is remembered: the caller may read it, never change it."""
        length = horizon.game_length(seed)
        if not is_deterministic(spec_a, spec_b, noise, observation):
            return play_seeded(spec_a, spec_b, game, horizon, noise, seed, length, observation), length
        key = (spec_a, spec_b, game)
        longest = self._longest.get(key)
        if longest is None or longest.rounds_played < length:
            if longest is None and len(self._longest) >= self.MAX_REMEMBERED:
                self._longest.clear()
            played = length if longest is None else max(length, 2 * longest.rounds_played)
            longest = self._longest[key] = play_seeded(spec_a, spec_b, game, horizon, 0.0, seed, played)
        if longest.rounds_played == length:
            return longest, length
        return longest.first(length), length
