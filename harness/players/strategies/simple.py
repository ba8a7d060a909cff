"""Strategies that ignore the opponent: unconditional, periodic and random play."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from harness.game.rules import MAX_ROUNDS, Action
from harness.players.strategies.base import Strategy


class AllC(Strategy):
    name = "ALLC"
    display_name = "Always Cooperate"
    description = "Cooperates every round, whatever the opponent does."
    emoji = "🕊️"
    memory_depth = 0
    axelrod_name = "Cooperator"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return "C"


class AllD(Strategy):
    name = "ALLD"
    display_name = "Always Defect"
    description = "Defects every round, whatever the opponent does."
    emoji = "😈"
    memory_depth = 0
    axelrod_name = "Defector"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return "D"


class Alternator(Strategy):
    name = "ALT"
    display_name = "Alternator"
    description = "Plays C, D, C, D, ...: the opposite of its own last move as played."
    emoji = "🔀"
    memory_depth = 1
    axelrod_name = "Alternator"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not own:
            return "C"
        return "D" if own[-1] == "C" else "C"


class RandomParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    coop_prob: float = Field(0.5, ge=0.0, le=1.0, alias="p", description="probability of cooperating each round")


class RandomPlayer(Strategy):
    name = "RAND"
    display_name = "Random"
    description = "Cooperates with probability p each round (default 0.5), independently."
    emoji = "🎲"
    memory_depth = 0
    stochastic = True
    axelrod_name = "Random"
    Params: ClassVar[type[BaseModel]] = RandomParams
    params: RandomParams

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return self.random_choice(self.params.coop_prob)


class DefectOnceParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    round: int = Field(1, ge=1, le=MAX_ROUNDS, description="the one round in which it defects")


class DefectOnce(Strategy):
    """The "defect-once" opponent of Akata et al. (2023): it cooperates every round but one."""

    name = "DONCE"
    display_name = "Defect Once"
    description = "Cooperates every round except round `round` (default 1), in which it defects."
    emoji = "☝️"
    memory_depth = 0
    counts_rounds = True
    Params: ClassVar[type[BaseModel]] = DefectOnceParams
    params: DefectOnceParams

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return "D" if len(own) + 1 == self.params.round else "C"


STRATEGIES: tuple[type[Strategy], ...] = (AllC, AllD, Alternator, RandomPlayer, DefectOnce)
