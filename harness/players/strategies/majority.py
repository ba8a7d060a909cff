"""Strategies that follow the opponent's majority move over the whole game."""

from __future__ import annotations

from harness.game.rules import Action
from harness.players.strategies.base import INFINITE_MEMORY, Strategy


class SoftMajority(Strategy):
    name = "SMAJ"
    display_name = "Soft Majority"
    description = "Cooperates while the opponent has cooperated at least as often as it defected."
    emoji = "🗳️"
    memory_depth = INFINITE_MEMORY
    axelrod_name = "GoByMajority"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        defections = opp.count("D")
        return "D" if defections > len(opp) - defections else "C"


class HardMajority(Strategy):
    name = "HMAJ"
    display_name = "Hard Majority"
    description = "Defects unless the opponent has cooperated strictly more often than it defected."
    emoji = "⚖️"
    memory_depth = INFINITE_MEMORY
    axelrod_name = "HardGoByMajority"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        defections = opp.count("D")
        return "D" if defections >= len(opp) - defections else "C"


STRATEGIES: tuple[type[Strategy], ...] = (SoftMajority, HardMajority)
