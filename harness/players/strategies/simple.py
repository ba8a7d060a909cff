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
    aliases = ("Always Cooperate",)  # The Evolution of Trust (ncase.me/trust): Logic_all_c

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return "C"


class AllD(Strategy):
    name = "ALLD"
    display_name = "Always Defect"
    description = "Defects every round, whatever the opponent does."
    emoji = "😈"
    memory_depth = 0
    axelrod_name = "Defector"
    aliases = ("Always Cheat", "Cheater")  # The Evolution of Trust: Logic_all_d

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
    model_config = ConfigDict(extra="forbid", frozen=True)

    p: float = Field(0.5, ge=0.0, le=1.0, description="probability of cooperating each round")


class RandomPlayer(Strategy):
    name = "RAND"
    display_name = "Random"
    description = "Cooperates with probability p each round (default 0.5), independently."
    emoji = "🎲"
    memory_depth = 0
    stochastic = True
    axelrod_name = "Random"  # and The Evolution of Trust's Random (Logic_random: 50/50, p's default)
    renamed_params: ClassVar[dict[str, str]] = {"coop_prob": "p"}  # its former name, which runs stored
    Params: ClassVar[type[BaseModel]] = RandomParams
    params: RandomParams

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return self.random_choice(self.params.p)


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
