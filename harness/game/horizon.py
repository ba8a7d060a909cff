"""How long a game lasts, and what its players are told about it: a :class:`FixedHorizon` or a
:class:`GeometricHorizon`, each holding only its own numbers and answering for itself (its length, its mean,
its longest game, what the players know).

A horizon is made from the config's ``horizon`` section (:class:`harness.config.sections.HorizonSection`),
the one place its numbers are checked against the bounds users are told; the types here hold what was
checked and do not check it again. Callers dispatch on the type (a method, or ``match``), never on a name;
:class:`HorizonKind` names the kind where a name is needed (the config's ``type``, the ``games.horizon``
column, the prompts' ``horizon.kind``).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from harness.game.seeds import stream


class HorizonKind(StrEnum):
    """The name of a horizon's kind, as configs, the results file and the prompt templates spell it."""

    FIXED = "fixed"
    GEOMETRIC = "geometric"


@dataclass(frozen=True, slots=True)
class FixedHorizon:
    """Every game lasts exactly ``n_rounds``, and the players are told so (they could count down to the end)."""

    n_rounds: int

    kind: ClassVar[HorizonKind] = HorizonKind.FIXED
    random_length: ClassVar[bool] = False  # the length is never drawn: no game reads its horizon stream

    def game_length(self, seed: int) -> int:
        """The number of rounds of the game of ``seed``."""
        return self.n_rounds

    def expected_length(self) -> float:
        """Mean number of rounds, for plans and cost estimates."""
        return float(self.n_rounds)

    def expected_remaining(self, played: int) -> float:
        """The rounds still to come in a game that has played ``played`` rounds and not ended."""
        return float(max(self.n_rounds - played, 0))

    def reach(self, round: int, played: int) -> float:
        """The chance that round ``round`` (after ``played``) is played in a game that has played ``played``."""
        return 1.0 if played < round <= self.n_rounds else 0.0

    @property
    def longest(self) -> int:
        """The most rounds a game can last."""
        return self.n_rounds

    def known_to_players(self) -> FixedHorizonInfo:
        return FixedHorizonInfo(self.n_rounds)


@dataclass(frozen=True, slots=True)
class GeometricHorizon:
    """After every round the game stops with probability ``stop_prob``, cut at ``max_rounds`` when set.

    The players are told only the continuation probability, never the end. The realised length is drawn
    once per game from the game's own horizon stream, so noise or agents' randomness cannot change it."""

    stop_prob: float
    max_rounds: int | None = None

    kind: ClassVar[HorizonKind] = HorizonKind.GEOMETRIC
    random_length: ClassVar[bool] = True  # each game's length is drawn from its horizon stream

    def draw_length(self, rng: random.Random) -> int:
        """The number of rounds a game will last, drawn from ``rng``."""
        if self.stop_prob >= 1.0:
            length = 1
        else:
            # Inverse CDF of the geometric distribution on {1, 2, ...}: one draw per game.
            u = 1.0 - rng.random()  # in (0, 1]
            length = 1 + int(math.log(u) / math.log1p(-self.stop_prob))
        return min(length, self.max_rounds) if self.max_rounds is not None else length

    def game_length(self, seed: int) -> int:
        """The number of rounds of the game of ``seed``, drawn from its ``horizon`` stream."""
        return self.draw_length(stream(seed, "horizon"))

    def expected_length(self) -> float:
        """Mean number of rounds, for plans and cost estimates."""
        p = self.stop_prob
        if self.max_rounds is None:
            return 1.0 / p
        # E[min(G, m)] = sum_{k=0}^{m-1} (1-p)^k
        return (1.0 - (1.0 - p) ** self.max_rounds) / p

    def expected_remaining(self, played: int) -> float:
        """The rounds still to come in a game that has played ``played`` rounds and not ended (what the live
        progress adds for a game in flight, so the last game does not sit at 100%).

        Round 1 is always played, so before it this is the mean length. After round r >= 1 the game goes on
        with probability w = 1 - stop_prob after every round whatever came before (memoryless): round r + k is
        played with probability w^k, and the rounds to come are sum_{k>=1} w^k = w / (1 - w), or, cut at
        ``max_rounds`` = m, sum_{k=1}^{m-r} w^k = w (1 - w^(m-r)) / (1 - w)."""
        if played <= 0:
            return self.expected_length()
        w = 1.0 - self.stop_prob
        if self.max_rounds is None:
            return w / self.stop_prob
        return w * (1.0 - w ** max(self.max_rounds - played, 0)) / self.stop_prob

    def reach(self, round: int, played: int) -> float:
        """The chance that round ``round`` (after ``played``) is played in a game that has played ``played`` rounds
        and not ended: w^(round - max(played, 1)), since round 1 is always played; 0 past ``max_rounds``."""
        if round <= played or (self.max_rounds is not None and round > self.max_rounds):
            return 0.0
        return (1.0 - self.stop_prob) ** (round - max(played, 1))

    @property
    def longest(self) -> int | None:
        """The most rounds a game can last: ``max_rounds``, or None when games are not capped."""
        return self.max_rounds

    def known_to_players(self) -> GeometricHorizonInfo:
        return GeometricHorizonInfo(1.0 - self.stop_prob)


Horizon = FixedHorizon | GeometricHorizon
"""How long a game lasts: one of the two kinds."""


@dataclass(frozen=True, slots=True)
class FixedHorizonInfo:
    """What a player of a fixed game is told: how many rounds it has."""

    n_rounds: int

    kind: ClassVar[HorizonKind] = HorizonKind.FIXED


@dataclass(frozen=True, slots=True)
class GeometricHorizonInfo:
    """What a player of a geometric game is told: only the probability that it goes on after a round."""

    continuation_prob: float

    kind: ClassVar[HorizonKind] = HorizonKind.GEOMETRIC


HorizonInfo = FixedHorizonInfo | GeometricHorizonInfo
"""The part of the horizon a player is told."""
