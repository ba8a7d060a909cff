"""Zero-determinant strategies (Press & Dyson 2012): memory-one strategies that enforce a linear relation between
their own long-run payoff and the opponent's, whatever the opponent does.

Extort-2 (Stewart & Plotkin 2012, "Extortion and cooperation in the Prisoner's Dilemma", PNAS 109:10134) is the
extortionate one with extortion factor chi = 2 and baseline l = P: against any opponent, in the long run,
``s_X - P = 2 (s_Y - P)``. Its four cooperation probabilities after CC, CD, DC, DD are written as the Axelrod
library's ``LRPlayer`` writes them (Hilbe, Nowak & Sigmund 2013, PNAS 110:6913, eq. 14), with slope s = 1/chi
and l = P::

    p1 = 1 - phi (1 - s)(R - l)       p2 = 1 - phi (s (l - S) + (T - l))
    p3 = phi ((l - S) + s (T - l))    p4 = phi (1 - s)(l - P)

so that with the Axelrod library's defaults (phi = 1/9, s = 1/2) and payoffs (R, S, T, P) = (3, 0, 5, 1) the vector
is (8/9, 1/2, 1/3, 0), Stewart & Plotkin's Extort-2. (That phi is Hilbe et al.'s scale; Press & Dyson's phi, the
factor of their eq. ``p~ = phi [(S_X - l) - chi (S_Y - l)]``, is phi * s = 1/18.) It cooperates in round 1.
"""

from __future__ import annotations

import random
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from harness.errors import ConfigError
from harness.game.rules import Action, PayoffMatrix
from harness.players.strategies.base import Strategy


class ExtortParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chi: float = Field(2.0, ge=1.0, description="extortion factor: s_X - P = chi (s_Y - P) in the long run")
    phi: float = Field(
        1 / 9, gt=0.0, description="scale of the vector (Hilbe et al. 2013's phi, as the Axelrod library's)"
    )


def extortion_vector(game: PayoffMatrix, chi: float, phi: float) -> tuple[float, float, float, float]:
    """P(C) after CC, CD, DC, DD (own move first) of the extortionate ZD strategy with factor ``chi``, scale ``phi``
    and baseline P, for ``game``'s payoffs (seat a's: the strategy's own). A ConfigError if a probability falls
    outside [0, 1]: no strategy enforces that relation at this scale for these payoffs."""
    R, S, T, P = game.R, game.S, game.T, game.P
    s, base = 1.0 / chi, P
    vector = (
        1 - phi * (1 - s) * (R - base),
        1 - phi * (s * (base - S) + (T - base)),
        phi * ((base - S) + s * (T - base)),
        phi * (1 - s) * (base - P),
    )
    if not all(0.0 <= p <= 1.0 for p in vector):
        shown = ", ".join(f"{p:.4g}" for p in vector)
        raise ConfigError(
            f"EXTORT2(chi={chi:g}, phi={phi:g}) gives cooperation probabilities ({shown}) after CC, CD, DC, DD for "
            f"the payoffs R={R:g}, S={S:g}, T={T:g}, P={P:g}, and each must lie in [0, 1]: choose a smaller phi"
        )
    return vector


class Extort2(Strategy):
    name = "EXTORT2"
    display_name = "ZD Extort-2"
    description = (
        "Extortionate zero-determinant strategy (Stewart & Plotkin 2012): enforces s_X - P = chi (s_Y - P), "
        "chi = 2; (8/9, 1/2, 1/3, 0) after CC, CD, DC, DD at 3-0-5-1."
    )
    emoji = "🦈"
    memory_depth = 1
    stochastic = True
    axelrod_name = "ZDExtort2"
    Params: ClassVar[type[BaseModel]] = ExtortParams
    params: ExtortParams

    __slots__ = ("vector",)

    vector: tuple[float, float, float, float]  # read once: move() is called millions of times

    def __init__(self, params: BaseModel, game: PayoffMatrix, rng: random.Random) -> None:
        super().__init__(params, game, rng)
        self.vector = extortion_vector(game, self.params.chi, self.params.phi)

    def move(self, own: list[Action], opp: list[Action]) -> Action:
        if not own:
            return "C"
        return self.random_choice(self.vector[(own[-1] == "D") * 2 + (opp[-1] == "D")])


STRATEGIES: tuple[type[Strategy], ...] = (Extort2,)
