"""Strategies that test the opponent before settling on a way to play."""

from __future__ import annotations

from harness.game.rules import Action
from harness.players.strategies.base import INFINITE_MEMORY, Strategy


class Prober(Strategy):
    name = "PROBER"
    display_name = "Prober"
    description = "Opens D, C, C; if the opponent did not retaliate, defects for ever, else plays Tit for Tat."
    emoji = "🕵️"
    memory_depth = INFINITE_MEMORY  # it reads the opponent's 2nd and 3rd moves for ever
    axelrod_name = "Prober"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        turn = len(own)
        if turn == 0:
            return "D"
        if turn < 3:
            return "C"
        if opp[1] == "C" and opp[2] == "C":
            return "D"
        return "D" if opp[-1] == "D" else "C"


STRATEGIES: tuple[type[Strategy], ...] = (Prober,)
