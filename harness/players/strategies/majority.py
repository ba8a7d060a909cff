"""Strategies that follow the opponent's majority move over the whole game."""

from __future__ import annotations

from harness.game.rules import Action
from harness.players.strategies.base import INFINITE_MEMORY, Strategy


class _Majority(Strategy):
    """Counts the opponent's defections as the game goes, instead of recounting the whole history every
    round (a game of n rounds costs n counts, not n * n / 2). The count is kept for one history list, the one
    a match appends to; any other list, or a shorter one, is counted afresh, so a call with an unrelated
    history answers as a fresh player would."""

    __slots__ = ("_counted", "_defections", "_history")

    def reset(self) -> None:
        self._history: list[Action] | None = None
        self._counted = 0
        self._defections = 0

    def _opponent_defections(self, opp: list[Action]) -> int:
        n = len(opp)
        if opp is not self._history or n < self._counted:
            self._history, self._counted, self._defections = opp, 0, 0
        if n == self._counted + 1:  # one round since the last call: the match's usual step
            if opp[-1] == "D":
                self._defections += 1
        elif n > self._counted:
            self._defections += opp[self._counted :].count("D")
        self._counted = n
        return self._defections


class SoftMajority(_Majority):
    name = "SMAJ"
    display_name = "Soft Majority"
    description = "Cooperates while the opponent has cooperated at least as often as it defected."
    emoji = "🗳️"
    memory_depth = INFINITE_MEMORY
    axelrod_name = "GoByMajority"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        defections = self._opponent_defections(opp)
        return "D" if defections > len(opp) - defections else "C"


class HardMajority(_Majority):
    name = "HMAJ"
    display_name = "Hard Majority"
    description = "Defects unless the opponent has cooperated strictly more often than it defected."
    emoji = "⚖️"
    memory_depth = INFINITE_MEMORY
    axelrod_name = "HardGoByMajority"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        defections = self._opponent_defections(opp)
        return "D" if defections >= len(opp) - defections else "C"


STRATEGIES: tuple[type[Strategy], ...] = (SoftMajority, HardMajority)
