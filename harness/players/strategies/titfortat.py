"""The tit-for-tat family: strategies that answer the opponent's recent moves."""

from __future__ import annotations

import random
from typing import ClassVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from harness.game.rules import Action, PayoffMatrix
from harness.players.strategies.base import UNSET, Strategy


class TitForTat(Strategy):
    name = "TFT"
    display_name = "Tit for Tat"
    description = "Cooperates first, then copies the opponent's last move."
    emoji = "🪞"
    memory_depth = 1
    axelrod_name = "TitForTat"
    aliases = ("Copycat",)  # The Evolution of Trust: Logic_tft, C first, then the other's last move as played

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return opp[-1] if opp else "C"


class SuspiciousTitForTat(Strategy):
    name = "STFT"
    display_name = "Suspicious Tit for Tat"
    description = "Defects first, then copies the opponent's last move."
    emoji = "🤨"
    memory_depth = 1
    axelrod_name = "SuspiciousTitForTat"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return opp[-1] if opp else "D"


class TitFor2Tats(Strategy):
    name = "TF2T"
    display_name = "Tit for Two Tats"
    description = "Defects only after two defections in a row by the opponent."
    emoji = "🐱"
    memory_depth = 2
    axelrod_name = "TitFor2Tats"
    aliases = ("Copykitten",)  # The Evolution of Trust: Logic_tf2t, D only after two D's in a row by the other

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return "D" if len(opp) >= 2 and opp[-1] == "D" and opp[-2] == "D" else "C"


class TwoTitsForTat(Strategy):
    name = "TTFT"
    display_name = "Two Tits for Tat"
    description = "Answers each defection with two: defects if the opponent defected in either of the last two rounds."
    emoji = "⚔️"
    memory_depth = 2
    axelrod_name = "TwoTitsForTat"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return "D" if "D" in opp[-2:] else "C"


class HardTitForTat(Strategy):
    name = "HTFT"
    display_name = "Hard Tit for Tat"
    description = "Defects if the opponent defected in any of the last three rounds."
    emoji = "🧱"
    memory_depth = 3
    axelrod_name = "HardTitForTat"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return "D" if "D" in opp[-3:] else "C"


class Bully(Strategy):
    name = "BULLY"
    display_name = "Bully"
    description = "Defects first, then does the opposite of the opponent's last move."
    emoji = "🐂"
    memory_depth = 1
    axelrod_name = "Bully"

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        return "C" if opp and opp[-1] == "D" else "D"


def default_generosity(game: PayoffMatrix) -> float:
    """GTFT's default forgiveness, as in the Axelrod library and Nowak & Sigmund (1992):
    ``min(1 - (T-R)/(R-S), (R-P)/(T-P))``, clamped to [0, 1] (0 where it is undefined)."""
    R, S, T, P = game.R, game.S, game.T, game.P
    if R == S or T == P:
        return 0.0
    p = min(1 - (T - R) / (R - S), (R - P) / (T - P))
    return min(1.0, max(0.0, p))


class GenerousParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # A dynamic alias (AliasChoices) only widens what validation reads; the attribute keeps its name.
    generous_prob: float | None = Field(  # type: ignore[pydantic-alias]
        None,
        validation_alias=AliasChoices("generous_prob", "p"),  # GTFT(p=0.3), as the literature writes it
        json_schema_extra={UNSET: "from the payoffs"},
        ge=0.0,
        le=1.0,
        description="probability of cooperating after an opponent's defection; "
        "default min(1 - (T-R)/(R-S), (R-P)/(T-P)) from the payoffs",
    )


class GenerousTitForTat(Strategy):
    name = "GTFT"
    display_name = "Generous Tit for Tat"
    description = (
        "Tit for Tat that forgives a defection with probability generous_prob "
        "(default from the payoffs: 1/3 for 5-3-1-0)."
    )
    emoji = "😇"
    memory_depth = 1
    stochastic = True
    axelrod_name = "GTFT"
    Params: ClassVar[type[BaseModel]] = GenerousParams
    params: GenerousParams

    __slots__ = ("p",)

    p: float  # the forgiveness in use: the parameter, or the default for these payoffs

    def __init__(self, params: BaseModel, game: PayoffMatrix, rng: random.Random) -> None:
        super().__init__(params, game, rng)
        given = self.params.generous_prob
        self.p = default_generosity(game) if given is None else given

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not own:
            return "C"
        if opp[-1] == "D":
            return self.random_choice(self.p)
        return "C"


STRATEGIES: tuple[type[Strategy], ...] = (
    TitForTat,
    SuspiciousTitForTat,
    TitFor2Tats,
    TwoTitsForTat,
    HardTitForTat,
    Bully,
    GenerousTitForTat,
)
