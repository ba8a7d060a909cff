"""Strategies that test the opponent before settling on a way to play."""

from __future__ import annotations

import random
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from harness.game.rules import Action, PayoffMatrix
from harness.players.strategies.base import INFINITE_MEMORY, UNSET, Strategy


class ProberParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # None (not DCC) by default: a run stores only the settings given (``StrategySpec.params_dict``),
    # so PROBER as stored before this setting existed is still PROBER as stored now.
    opening: str | None = Field(
        None,
        pattern=r"^[CD]{3}$",
        json_schema_extra={UNSET: "DCC"},
        description="its first three moves: DCC (the default, Axelrod's Prober) or e.g. CDC "
        "(Payne & Alloui-Cros 2025's code)",
    )


class Prober(Strategy):
    """Prober as the Axelrod library plays it: D, C, C, then D for ever if the opponent played C
    in rounds 2 and 3, else Tit for Tat. Payne & Alloui-Cros's ``ProberAgent`` (2025) is
    ``opening=CDC``: it probes in round 2 instead of round 1 and reads the same two rounds."""

    name = "PROBER"
    display_name = "Prober"
    description = (
        "Opens D, C, C (opening); if the opponent cooperated in rounds 2 and 3, defects for ever, "
        "else plays Tit for Tat."
    )
    emoji = "🕵️"
    memory_depth = INFINITE_MEMORY  # it reads the opponent's 2nd and 3rd moves for ever
    axelrod_name = "Prober"
    Params: ClassVar[type[BaseModel]] = ProberParams
    params: ProberParams

    __slots__ = ("opening",)

    opening: str  # the parameter, or DCC

    def __init__(self, params: BaseModel, game: PayoffMatrix, rng: random.Random) -> None:
        super().__init__(params, game, rng)
        self.opening = self.params.opening or "DCC"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        turn = len(own)
        if turn < 3:
            return "C" if self.opening[turn] == "C" else "D"
        if opp[1] == "C" and opp[2] == "C":
            return "D"
        return "D" if opp[-1] == "D" else "C"


STRATEGIES: tuple[type[Strategy], ...] = (Prober,)
