"""What a player is, as the match loop sees it.

Two kinds of player share one match loop:

* a :class:`Policy` (a classic strategy of :mod:`harness.players.strategies`) decides synchronously from the
  two move histories; games between strategies never touch the event loop;
* an :class:`Agent` (a language model, later) is awaited for each move, with a
  :class:`RoundView` of everything it is allowed to know.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from harness.game.horizon import HorizonInfo
from harness.game.rules import Action, PayoffMatrix


@dataclass(frozen=True, slots=True)
class RoundView:
    """One player's view before a round: its own seat, the rules, and the played history."""

    seat: Literal["a", "b"]
    round: int
    horizon: HorizonInfo
    payoffs: PayoffMatrix
    own_moves: Sequence[Action]
    opponent_moves: Sequence[Action]
    own_payoffs: Sequence[float]
    opponent_payoffs: Sequence[float]
    own_score: float
    opponent_score: float


@dataclass(frozen=True, slots=True)
class Decision:
    """An agent's move for one round. ``flagged`` marks a move the agent did not really choose
    (for a model: every parse attempt failed and the fallback move was used)."""

    action: Action
    flagged: bool = False


class Policy(Protocol):
    """A player that decides synchronously from the two histories (a classic strategy)."""

    def move(self, own: list[Action], opp: list[Action]) -> Action: ...


@runtime_checkable
class Agent(Protocol):
    """A player whose move must be awaited (a model behind an API)."""

    name: str

    async def act(self, view: RoundView) -> Decision: ...
