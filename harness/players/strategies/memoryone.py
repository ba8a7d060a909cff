"""Memory-one strategies: the next move depends only on the last round's outcome."""

from __future__ import annotations

from harness.game.rules import Action
from harness.players.strategies.base import Strategy


class WinStayLoseShift(Strategy):
    name = "WSLS"
    display_name = "Win-Stay Lose-Shift"
    description = "Pavlov: repeats its last move after R or T, switches after P or S."
    emoji = "🔄"
    memory_depth = 1
    axelrod_name = "WinStayLoseShift"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not own:
            return "C"
        # Stay after a win (CC gives R, DC gives T), shift after a loss (CD gives S, DD gives P):
        # that is, cooperate exactly when both players made the same move.
        return "C" if own[-1] == opp[-1] else "D"


STRATEGIES: tuple[type[Strategy], ...] = (WinStayLoseShift,)
