"""Memory-one strategies: the next move depends only on the last round's outcome."""

from __future__ import annotations

import enum
import random
from typing import Annotated, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from harness.game.rules import Action, PayoffMatrix
from harness.players.strategies.base import UNSET, Strategy


class Win(enum.StrEnum):
    """Which last rounds Win-Stay Lose-Shift counts as a win (it repeats its move after one)."""

    R_OR_T = "R_or_T"
    """A round that paid R or T, i.e. the opponent cooperated: Pavlov (Nowak & Sigmund 1993, Axelrod)."""
    CC_OR_DD = "CC_or_DD"
    """A round where both moved alike, as Payne & Alloui-Cros's code counts it. Staying after CC or DD
    and shifting after CD or DC always plays the opponent's last move: Tit for Tat's moves."""


def _win(value: object) -> object:
    """Read ``win`` from its text (configs and one-line specs give text; strict validation would refuse it)."""
    if isinstance(value, str):
        try:
            return Win(value)
        except ValueError:
            raise ValueError(f"must be one of {', '.join(w.value for w in Win)}, not {value!r}") from None
    return value


class WinStayLoseShiftParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # None (not R_or_T) by default: a run stores only the settings given (``StrategySpec.params_dict``),
    # so WSLS as stored before this setting existed is still WSLS as stored now.
    win: Annotated[Win | None, BeforeValidator(_win)] = Field(
        None,
        json_schema_extra={UNSET: "R_or_T"},
        description="the last rounds after which it repeats its move: R_or_T (Pavlov, the default) "
        "or CC_or_DD (Payne & Alloui-Cros 2025's code, which plays Tit for Tat's moves)",
    )


class WinStayLoseShift(Strategy):
    name = "WSLS"
    display_name = "Win-Stay Lose-Shift"
    description = (
        "Pavlov: repeats its last move after R or T, switches after P or S "
        "(win=CC_or_DD: repeats after CC or DD, as Payne & Alloui-Cros code it)."
    )
    emoji = "🔄"
    memory_depth = 1
    axelrod_name = "WinStayLoseShift"
    # The Evolution of Trust's Logic_pavlov: C first, then its own last move as played, switched after the
    # other's D: the default win=R_or_T (C exactly when both last moves were alike).
    aliases = ("Simpleton",)
    Params: ClassVar[type[BaseModel]] = WinStayLoseShiftParams
    params: WinStayLoseShiftParams

    __slots__ = ("wins_on_match",)

    wins_on_match: bool  # win=CC_or_DD, read once: move() is called millions of times

    def __init__(self, params: BaseModel, game: PayoffMatrix, rng: random.Random) -> None:
        super().__init__(params, game, rng)
        self.wins_on_match = self.params.win is Win.CC_OR_DD

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not own:
            return "C"
        if self.wins_on_match:
            # Stay after CC or DD, shift after CD or DC: the move is always the opponent's last one.
            return opp[-1]
        # Stay after a win (CC gives R, DC gives T), shift after a loss (CD gives S, DD gives P):
        # that is, cooperate exactly when both players made the same move.
        return "C" if own[-1] == opp[-1] else "D"


STRATEGIES: tuple[type[Strategy], ...] = (WinStayLoseShift,)
