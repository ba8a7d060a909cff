"""Strategies that remember a defection for good, or punish it at a growing price."""

from __future__ import annotations

from harness.game.rules import Action
from harness.players.strategies.base import INFINITE_MEMORY, Strategy


class Grim(Strategy):
    name = "GRIM"
    display_name = "Grim Trigger"
    description = "Cooperates until the opponent defects once, then defects for ever."
    emoji = "💀"
    memory_depth = INFINITE_MEMORY
    axelrod_name = "Grudger"

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


class Gradual(Strategy):
    """Gradual as the Axelrod library (and CRISTAL-SMAC 2018) plays it: when the opponent has
    just defected, defect as many times in a row as the opponent has defected in all so far,
    then cooperate twice whatever happens; defections during the punishment count towards
    the next one. (Beaufils et al.'s original differs slightly; see Axelrod issue 1294.)"""

    name = "GRADUAL"
    display_name = "Gradual"
    description = "Punishes the n-th defection with n defections, then offers two cooperations."
    emoji = "📈"
    memory_depth = INFINITE_MEMORY
    axelrod_name = "Gradual"

    __slots__ = ("calm_count", "defections", "punish_count")

    punish_count: int  # defections still owed for the opponent's latest defection
    calm_count: int  # cooperations still owed after the punishment
    defections: int  # the opponent's defections so far

    def reset(self) -> None:
        self.punish_count = 0
        self.calm_count = 0
        self.defections = 0

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not own:
            return "C"
        if opp[-1] == "D":
            self.defections += 1
        if self.punish_count > 0:
            self.punish_count -= 1
            return "D"
        if self.calm_count > 0:
            self.calm_count -= 1
            return "C"
        if opp[-1] == "D":
            self.punish_count = self.defections - 1
            self.calm_count = 2
            return "D"
        return "C"


STRATEGIES: tuple[type[Strategy], ...] = (Grim, Gradual)
