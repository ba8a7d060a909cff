"""The base class every classic strategy derives from, and its parameters.

A strategy instance lives for one game: it is built fresh with the game's payoffs
and its own random stream, then asked for one move per round with the two played
histories. ``move`` must be cheap: a 200-round tournament calls it millions of times.
"""

from __future__ import annotations

import random
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from harness.game import Action, PayoffMatrix


class NoParams(BaseModel):
    """Parameters of a strategy that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Strategy:
    """A classic, rule-based player.

    Class attributes describe it for humans (``display_name``, ``description``,
    ``emoji``) and for cross-checks (``axelrod_name``: the Axelrod library class whose
    moves it reproduces for the same history). ``Params`` validates the settings a
    config may give, e.g. ``{policy: GTFT, generous_prob: 0.1}``.
    """

    name: ClassVar[str]
    display_name: ClassVar[str]
    description: ClassVar[str]
    emoji: ClassVar[str]
    stochastic: ClassVar[bool] = False
    axelrod_name: ClassVar[str | None] = None
    Params: ClassVar[type[BaseModel]] = NoParams

    __slots__ = ("game", "params", "rng")

    def __init__(self, params: BaseModel, game: PayoffMatrix, rng: random.Random) -> None:
        self.params = params
        self.game = game
        self.rng = rng

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        """The intended move for the next round, given both players' moves as played so far."""
        raise NotImplementedError

    def random_choice(self, p: float) -> Action:
        """C with probability ``p``. Consumes a random number only when 0 < p < 1,
        as the Axelrod library does, so stochastic strategies stay comparable to it."""
        if p <= 0.0:
            return "D"
        if p >= 1.0:
            return "C"
        return "C" if self.rng.random() < p else "D"
