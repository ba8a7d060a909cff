"""The Ashlock fingerprint's probe: Tit for Tat with joint noise, and its dual beyond the diagonal.

Ashlock & Kim (2008) and Ashlock, Kim & Ashlock (2010, doi:10.1109/ITW.2010.5593352) fingerprint a strategy by its
score against a family of probes indexed by a point (x, y) of the unit square. As the Axelrod library 4.14 builds them
(``axelrod.fingerprint._create_jossann``: ``JossAnnTransformer`` and ``DualTransformer`` over ``TitForTat``):

* x + y < 1: the Joss-Ann of TFT: C with probability x, D with probability y, else TFT's move (C first, then the
  opponent's last move as played);
* x + y >= 1: the dual of the Joss-Ann of TFT at (1 - x, 1 - y): the dual flips every move the strategy would make on
  the flipped own history, and TFT ignores its own history, so this is D with probability 1 - x, C with probability
  1 - y, else the opposite of TFT's move (D first, then the opposite of the opponent's last move).

On the diagonal both read alike (C with probability x, D with probability y, TFT never consulted), so the family is
continuous there. Where one move has probability 1, or TFT (or its dual) alone plays, no random number is drawn,
as in the Axelrod library (its ``joss_ann_wrapper`` draws only when no option has probability 1).
"""

from __future__ import annotations

import random
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from harness.game.rules import Action, PayoffMatrix
from harness.players.strategies.base import Strategy


class AshlockParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    x: float = Field(0.25, ge=0.0, le=1.0, description="the probe point's x: below the diagonal, P(C) outright")
    y: float = Field(0.25, ge=0.0, le=1.0, description="the probe point's y: below the diagonal, P(D) outright")


class AshlockProbe(Strategy):
    name = "ASHLOCK"
    display_name = "Ashlock probe"
    description = (
        "The Ashlock fingerprint's probe at (x, y): if x + y < 1, C with probability x, D with probability y, else "
        "Tit for Tat; if x + y >= 1, D with probability 1 - x, C with probability 1 - y, else the opposite of Tit "
        "for Tat (D first). As the Axelrod library's fingerprints build it (pdbench fingerprint)."
    )
    emoji = "🔬"
    memory_depth = 1
    stochastic = True
    Params: ClassVar[type[BaseModel]] = AshlockParams
    params: AshlockParams

    __slots__ = ("dual", "p_c", "p_d")

    dual: bool
    p_c: float  # probability of C outright
    p_d: float  # probability of D outright

    def __init__(self, params: BaseModel, game: PayoffMatrix, rng: random.Random) -> None:
        super().__init__(params, game, rng)
        x, y = self.params.x, self.params.y
        self.dual = x + y >= 1
        self.p_c, self.p_d = (1 - y, 1 - x) if self.dual else (x, y)

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if self.p_c >= 1.0:
            return "C"
        if self.p_d >= 1.0:
            return "D"
        if self.p_c > 0.0 or self.p_d > 0.0:
            r = self.rng.random()
            if r < self.p_c:
                return "C"
            if r < self.p_c + self.p_d:
                return "D"
        tft: Action = opp[-1] if opp else "C"
        if not self.dual:
            return tft
        return "D" if tft == "C" else "C"


STRATEGIES: tuple[type[Strategy], ...] = (AshlockProbe,)
