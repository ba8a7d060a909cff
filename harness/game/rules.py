"""The rules of the iterated Prisoner's Dilemma: actions, payoffs and noise (horizons: :mod:`harness.game.horizon`).

Pure code, no I/O. Actions are the one-character strings ``"C"`` and ``"D"``
rather than an Enum: they are what the results database stores and what the
per-round hot loop compares, and plain strings keep that loop at native speed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

MAX_ROUNDS = 1_000_000  # one game's rounds are held in memory while it is played
MAX_PAYOFF = 1e15  # a payoff's size stays below this: larger floats no longer add small payoffs exactly

Action = Literal["C", "D"]
C: Action = "C"
D: Action = "D"
ACTIONS: tuple[Action, Action] = (C, D)
FLIP: dict[str, Action] = {C: D, D: C}


@dataclass(frozen=True, slots=True)
class PayoffMatrix:
    """A 2x2 bimatrix game: ``payoffs[(my, their)] = (mine, theirs)`` seen from player A.

    R, S, T, P are player A's reward, sucker's, temptation and punishment payoffs;
    strategies that depend on the game (GTFT's default generosity) read them.
    """

    cc: tuple[float, float] = (3.0, 3.0)
    cd: tuple[float, float] = (0.0, 5.0)
    dc: tuple[float, float] = (5.0, 0.0)
    dd: tuple[float, float] = (1.0, 1.0)

    @property
    def R(self) -> float:
        return self.cc[0]

    @property
    def S(self) -> float:
        return self.cd[0]

    @property
    def T(self) -> float:
        return self.dc[0]

    @property
    def P(self) -> float:
        return self.dd[0]

    @classmethod
    def from_rstp(cls, R: float = 3, S: float = 0, T: float = 5, P: float = 1) -> PayoffMatrix:
        """The symmetric game with the given reward, sucker, temptation and punishment."""
        return cls(cc=(R, R), cd=(S, T), dc=(T, S), dd=(P, P))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Mapping[str, Sequence[float]]]) -> PayoffMatrix:
        """Build from the config form ``{C: {C: [3, 3], D: [0, 5]}, D: {C: [5, 0], D: [1, 1]}}``.

        Raises ``ValueError`` naming the first cell that is missing or malformed.
        """
        if not isinstance(data, Mapping) or set(data) != {"C", "D"}:
            raise ValueError(
                "payoff_matrix must have exactly the rows C and D, "
                "e.g. {C: {C: [3, 3], D: [0, 5]}, D: {C: [5, 0], D: [1, 1]}}"
            )
        cells: dict[str, tuple[float, float]] = {}
        for row in ("C", "D"):
            cols = data[row]
            if not isinstance(cols, Mapping) or set(cols) != {"C", "D"}:
                raise ValueError(f"payoff_matrix.{row} must have exactly the columns C and D")
            for col in ("C", "D"):
                cell = cols[col]
                if (
                    isinstance(cell, (str, bytes))
                    or not isinstance(cell, Sequence)
                    or len(cell) != 2
                    or not all(_is_number(x) for x in cell)
                ):
                    raise ValueError(
                        f"payoff_matrix.{row}.{col} must be a pair of numbers [mine, theirs], got {cell!r}"
                    )
                cells[row + col] = (float(cell[0]), float(cell[1]))
        return cls(cc=cells["CC"], cd=cells["CD"], dc=cells["DC"], dd=cells["DD"])

    def to_mapping(self) -> dict[str, dict[str, list[float]]]:
        return {
            "C": {"C": list(self.cc), "D": list(self.cd)},
            "D": {"C": list(self.dc), "D": list(self.dd)},
        }

    def table(self) -> dict[tuple[str, str], tuple[float, float]]:
        """The lookup the match loop uses: ``(action_a, action_b) -> (payoff_a, payoff_b)``."""
        return {("C", "C"): self.cc, ("C", "D"): self.cd, ("D", "C"): self.dc, ("D", "D"): self.dd}

    def warnings(self) -> list[str]:
        """Why this game is not a standard Prisoner's Dilemma (empty when it is)."""
        out: list[str] = []
        if not (
            self.cd[1] == self.dc[0]
            and self.dc[1] == self.cd[0]
            and self.cc[0] == self.cc[1]
            and self.dd[0] == self.dd[1]
        ):
            out.append("the payoff matrix is not symmetric; R, S, T, P are read from player A's side")
        R, S, T, P = self.R, self.S, self.T, self.P
        if not (T > R > P > S):
            out.append(f"T > R > P > S does not hold (T={T:g}, R={R:g}, P={P:g}, S={S:g})")
        if not (2 * R > T + S):
            out.append(
                f"2R > T + S does not hold (2R={2 * R:g}, T+S={T + S:g}): "
                "taking turns to exploit pays more than mutual cooperation"
            )
        return out


def _is_number(x: object) -> bool:
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x) and abs(float(x)) < MAX_PAYOFF
    except OverflowError:
        return False
