"""The base class every classic strategy derives from, and its parameters.

A strategy instance is built with the game's payoffs and its own random stream, then
asked for one move per round with the two played histories. ``move`` must be cheap: a
200-round tournament calls it millions of times. :meth:`Strategy.reset` makes a used
instance play as a new one; :meth:`Strategy.clone` makes an independent twin.
"""

from __future__ import annotations

import copy
import math
import random
from typing import ClassVar, Self

from pydantic import BaseModel, ConfigDict
from pydantic.fields import FieldInfo

from harness.game.rules import Action, PayoffMatrix

INFINITE_MEMORY = math.inf

UNSET = "unset"
"""Key of a parameter's ``json_schema_extra``: what the strategy plays when the parameter is left out (its default
is None, so that a stored run without it keeps its meaning). ``pdbench strategies`` shows it as the default."""


def shown_default(field: FieldInfo) -> str:
    """A parameter's default as a user reads it: what leaving it out means, not ``None``."""
    extra = field.json_schema_extra
    if field.default is None and isinstance(extra, dict) and UNSET in extra:
        return str(extra[UNSET])
    return str(field.default)


class NoParams(BaseModel):
    """Parameters of a strategy that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Strategy:
    """A classic, rule-based player.

    Class attributes describe it for humans (``display_name``, ``description``,
    ``emoji``) and for cross-checks (``axelrod_name``: the Axelrod library class whose
    moves it reproduces for the same history). Both that class's name and ``aliases`` (The Evolution of
    Trust's characters whose rules are exactly this strategy's) are accepted wherever a strategy is named,
    and ``renamed_params`` maps a parameter's former name to its name (accepted, with a warning). ``Params``
    validates the settings a config may give, e.g. ``{policy: GTFT, generous_prob: 0.1}``; a subclass with
    parameters narrows the ``params`` annotation to its own ``Params`` class, which
    :meth:`__init__` enforces.

    ``memory_depth`` (every strategy declares it; the values follow the Axelrod library's
    classifier where the strategy exists there) is how many of the latest rounds the next
    move depends on. Precisely: feed two game histories (pairs of played move sequences)
    round by round to fresh instances; if the histories end in the same ``memory_depth``
    rounds (with ``memory_depth`` >= 1 a history shorter than that must be identical to
    the other, so "no round yet" is told apart from any round), and, when
    ``counts_rounds`` is true, have the same length, then the next move is the same,
    given the same parameters, payoffs and random-stream state before that move.
    0 means the move ignores what was played (ALLC, RAND); ``INFINITE_MEMORY`` means no
    finite bound (GRIM remembers one defection for ever). ``counts_rounds`` marks a
    strategy that also reads the round number beyond its memory (DONCE defects in one
    given round).
    """

    name: ClassVar[str]
    display_name: ClassVar[str]
    description: ClassVar[str]
    emoji: ClassVar[str]
    memory_depth: ClassVar[float]
    counts_rounds: ClassVar[bool] = False
    stochastic: ClassVar[bool] = False
    axelrod_name: ClassVar[str | None] = None
    aliases: ClassVar[tuple[str, ...]] = ()
    renamed_params: ClassVar[dict[str, str]] = {}
    Params: ClassVar[type[BaseModel]] = NoParams

    __slots__ = ("game", "params", "rng")

    params: BaseModel

    def __init__(self, params: BaseModel, game: PayoffMatrix, rng: random.Random) -> None:
        if not isinstance(params, self.Params):
            raise TypeError(
                f"{type(self).__name__} takes parameters of type {self.Params.__name__}, "
                f"not {type(params).__name__}; build it through make_spec"
            )
        self.params = params
        self.game = game
        self.rng = rng
        self.reset()

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        """The intended move for the next round, given both players' moves as played so far."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget every round played, so the instance plays the next game as a new one would.

        A strategy that keeps state between moves sets it here (``__init__`` calls this);
        the random stream is not rewound: it is the caller's, as in the Axelrod library.
        """

    def clone(self, rng: random.Random | None = None) -> Self:
        """A new, independent player built as this one was (same parameters and payoffs), in
        its starting state. It draws from ``rng`` if given, else from its own copy of this
        player's random stream at its current position, so the two play alike but share nothing.
        """
        return type(self)(self.params, self.game, copy.copy(self.rng) if rng is None else rng)

    def random_choice(self, p: float) -> Action:
        """C with probability ``p``. Consumes a random number only when 0 < p < 1,
        as the Axelrod library does, so stochastic strategies stay comparable to it."""
        if p <= 0.0:
            return "D"
        if p >= 1.0:
            return "C"
        return "C" if self.rng.random() < p else "D"
