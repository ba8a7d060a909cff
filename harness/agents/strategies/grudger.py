"""Strategies that remember a defection for good, or punish it at a growing price."""

from __future__ import annotations

from harness.agents.strategies.base import Strategy
from harness.game import Action


class Grim(Strategy):
    name = "GRIM"
    display_name = "Grim Trigger"
    description = "Cooperates until the opponent defects once, then defects for ever."
    emoji = "💀"
    axelrod_name = "Grudger"

    __slots__ = ("triggered",)

    def __init__(self, params, game, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(params, game, rng)
        self.triggered = False

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        # A flag rather than scanning the whole history keeps each move O(1).
        if self.triggered or (opp and opp[-1] == "D"):
            self.triggered = True
            return "D"
        return "C"


class Gradual(Strategy):
    """Beaufils, Delahaye and Mathieu's Gradual, as the Axelrod library plays it: after an
    opponent's defection it defects as many times as the opponent has defected in all
    (counted when the punishment is under way), then cooperates twice to calm things."""

    name = "GRADUAL"
    display_name = "Gradual"
    description = "Punishes the n-th defection with n defections, then offers two cooperations."
    emoji = "📈"
    axelrod_name = "Gradual"

    __slots__ = ("calming", "punishing", "punishment_count")

    def __init__(self, params, game, rng) -> None:  # type: ignore[no-untyped-def]
        super().__init__(params, game, rng)
        self.calming = False
        self.punishing = False
        self.punishment_count = 0

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not own:
            return "C"
        if self.punishing:
            if self.punishment_count < opp.count("D"):
                self.punishment_count += 1
                return "D"
            self.calming = True
            self.punishing = False
            self.punishment_count = 0
            return "C"
        if self.calming:
            self.calming = False
            return "C"
        if opp[-1] == "D":
            self.punishing = True
            self.punishment_count += 1
            return "D"
        return "C"


STRATEGIES: tuple[type[Strategy], ...] = (Grim, Gradual)
