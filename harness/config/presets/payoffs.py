"""The payoff matrix as the command line gives it (``--payoff-matrix T,R,P,S`` or a named preset), for
``pdbench eval``, ``tournament`` and ``evolve``: the teacher's lever, as changing the payoffs is The Evolution
of Trust's key chapter. The presets are the dashboard's Evolution view's two games."""

from __future__ import annotations

import math

from harness.errors import ConfigError
from harness.game.rules import MAX_PAYOFF, PayoffMatrix

PAYOFF_PRESETS: dict[str, PayoffMatrix] = {
    # Axelrod's tournaments: R=3, S=0, T=5, P=1 (PDBench's default).
    "axelrod": PayoffMatrix.from_rstp(R=3, S=0, T=5, P=1),
    # The Evolution of Trust's coins: cooperating costs you 1 and gives the other 3 (R=2, S=-1, T=3, P=0).
    "trust": PayoffMatrix.from_rstp(R=2, S=-1, T=3, P=0),
}
"""The named games ``--payoff-matrix`` takes, each a symmetric prisoner's dilemma."""
PAYOFF_MATRIX_HELP = (
    "The game's payoffs: four numbers T,R,P,S (temptation, reward, punishment, sucker's payoff), e.g. 5,3,1,0, "
    "or a preset: axelrod (5,3,1,0, the default) or trust (3,2,0,-1, The Evolution of Trust's coins)."
)


def rstp(matrix: PayoffMatrix) -> str:
    """``T,R,P,S`` as ``--payoff-matrix`` takes them: ``5,3,1,0``."""
    return ",".join(f"{v:g}" for v in (matrix.T, matrix.R, matrix.P, matrix.S))


def payoff_matrix_option(text: str, option: str = "--payoff-matrix") -> PayoffMatrix:
    """The symmetric game ``T,R,P,S`` or preset ``text`` names; a one-paragraph :class:`ConfigError` otherwise.
    A game that is not a prisoner's dilemma is allowed (the config's warnings say so: see
    :meth:`PayoffMatrix.warnings`)."""
    name = text.strip().lower()
    if name in PAYOFF_PRESETS:
        return PAYOFF_PRESETS[name]
    parts = [p.strip() for p in text.split(",")]
    presets = ", ".join(f"{n} ({rstp(m)})" for n, m in PAYOFF_PRESETS.items())
    if len(parts) != 4:
        raise ConfigError(
            f"{option} {text!r}: give four numbers T,R,P,S (temptation, reward, punishment, sucker's payoff), "
            f"e.g. {option} 5,3,1,0, or a preset: {presets}"
        )
    values = []
    for part in parts:
        try:
            values.append(float(part))
        except ValueError:
            raise ConfigError(
                f"{option} {text!r}: {part!r} is not a number; give four numbers T,R,P,S, e.g. {option} 5,3,1,0, "
                f"or a preset: {presets}"
            ) from None
    t, r, p, s = values
    return payoff_matrix_of(t, r, p, s, option=f"{option} {text!r}")


def payoff_matrix_of(t: float, r: float, p: float, s: float, option: str = "--payoff-matrix") -> PayoffMatrix:
    """The symmetric game of the four payoffs (as ``--payoff-matrix`` or the dashboard's inputs give them); a
    one-paragraph :class:`ConfigError` naming the payoff when one is not a finite number of a usable size."""
    for name, what, value in (
        ("T", "temptation", t),
        ("R", "reward", r),
        ("P", "punishment", p),
        ("S", "sucker's payoff", s),
    ):
        if not math.isfinite(value):
            raise ConfigError(f"{option}: {name} ({what}) = {value!r} is not a finite number; give e.g. 5,3,1,0")
        if abs(value) >= MAX_PAYOFF:
            raise ConfigError(
                f"{option}: {name} ({what}) = {value:g} is too large: a payoff's size must stay below {MAX_PAYOFF:g} "
                f"(larger numbers no longer add up exactly); give e.g. 5,3,1,0"
            )
    return PayoffMatrix.from_rstp(R=r, S=s, T=t, P=p)
