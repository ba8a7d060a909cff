"""Strategies that remember a defection for good, or punish it at a growing price."""

from __future__ import annotations

import random
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from harness.game.rules import MAX_ROUNDS, Action, PayoffMatrix
from harness.players.strategies.base import INFINITE_MEMORY, UNSET, Strategy


class Grim(Strategy):
    name = "GRIM"
    display_name = "Grim Trigger"
    description = "Cooperates until the opponent defects once, then defects for ever."
    emoji = "💀"
    memory_depth = INFINITE_MEMORY
    axelrod_name = "Grudger"  # and The Evolution of Trust's Grudger (Logic_grudge)

    __slots__ = ("triggered",)

    triggered: bool

    def reset(self) -> None:
        self.triggered = False

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        # A flag rather than scanning the whole history keeps each move O(1).
        if self.triggered or (opp and opp[-1] == "D"):
            self.triggered = True
            return "D"
        return "C"


class GradualParams(BaseModel):
    """None means the classic value: a run stores only the settings given (``StrategySpec.params_dict``),
    so GRADUAL as stored before these settings existed is still GRADUAL as stored now."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    peace_moves: int | None = Field(
        None,
        ge=0,
        le=MAX_ROUNDS,
        json_schema_extra={UNSET: "2"},
        description="cooperations it offers after each punishment, whatever happens (default 2)",
    )
    counts_all_defections: bool | None = Field(
        None,
        json_schema_extra={UNSET: "true"},
        description="count every defection of the opponent, those made during a punishment or its peace "
        "moves included (the default, Axelrod's Gradual), or false: only those that start a punishment "
        "(Payne & Alloui-Cros 2025's code)",
    )


class Gradual(Strategy):
    """Gradual as the Axelrod library (and CRISTAL-SMAC 2018) plays it: when the opponent has
    just defected, defect as many times in a row as the opponent has defected in all so far,
    then cooperate twice whatever happens; defections during the punishment count towards
    the next one. (Beaufils et al.'s original differs slightly; see Axelrod issue 1294.)

    Payne & Alloui-Cros's ``GradualAgent`` (2025) is ``peace_moves=1, counts_all_defections=false``:
    it counts a defection only when it starts a punishment (the opponent's moves during the n
    defections are not looked at), and offers one cooperation after them."""

    name = "GRADUAL"
    display_name = "Gradual"
    description = (
        "Punishes the n-th defection with n defections, then offers two cooperations "
        "(peace_moves; counts_all_defections=false counts only the defections it punishes)."
    )
    emoji = "📈"
    memory_depth = INFINITE_MEMORY
    axelrod_name = "Gradual"
    Params: ClassVar[type[BaseModel]] = GradualParams
    params: GradualParams

    __slots__ = ("calm_count", "counts_all", "defections", "peace_moves", "punish_count")

    peace_moves: int  # the parameter, or 2
    counts_all: bool  # the parameter, or true
    punish_count: int  # defections still owed for the opponent's latest defection
    calm_count: int  # cooperations still owed after the punishment
    defections: int  # the opponent's defections counted so far

    def __init__(self, params: BaseModel, game: PayoffMatrix, rng: random.Random) -> None:
        super().__init__(params, game, rng)
        given = self.params
        self.peace_moves = 2 if given.peace_moves is None else given.peace_moves
        self.counts_all = given.counts_all_defections is not False

    def reset(self) -> None:
        self.punish_count = 0
        self.calm_count = 0
        self.defections = 0

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not own:
            return "C"
        counts_all = self.counts_all
        if counts_all and opp[-1] == "D":
            self.defections += 1
        if self.punish_count > 0:
            self.punish_count -= 1
            return "D"
        if self.calm_count > 0:
            self.calm_count -= 1
            return "C"
        if opp[-1] == "D":
            if not counts_all:
                self.defections += 1
            self.punish_count = self.defections - 1
            self.calm_count = self.peace_moves
            return "D"
        return "C"


STRATEGIES: tuple[type[Strategy], ...] = (Grim, Gradual)
