"""``pdbench fingerprint``: one player (a model or a strategy) against a grid of probes, as an ordinary experiment.

The two fingerprints of the Axelrod library 4.14 (``axelrod.fingerprint``), with the player as player A (Axelrod's
player 0) and the probe as player B:

* Ashlock: the ``ASHLOCK`` probe (Tit for Tat with joint noise, its dual beyond the diagonal: see
  :mod:`harness.players.strategies.probes`) at each point (x, y) of a square grid of the unit square, Axelrod's
  ``_create_points``: ``int(1 / step) + 1`` values per axis, evenly spaced from 0 to 1;
* transitive: ``RAND(p)`` opponents, p evenly spaced from 0 to 1 (Axelrod's ``np.linspace(0, 1, n)``).

Each probe point is its own condition, named by the point alone (``ashlock(x=0.25,y=0.5)``, ``transitive(p=0.25)``),
so a game's seed (run seed, condition, replicate) and a model's sample identity (condition, replicate, seat) depend
on the point and not on the grid around it: a finer grid that contains a coarser one's points replays those games
(a model's answers from the response cache) and plays only the new points.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from harness.config import ExperimentConfig, GameOptions, options_config
from harness.errors import ConfigError
from harness.players.strategies.registry import setting_text

MAX_AXIS = 101
"""The most points per axis (Axelrod's finest usual step, 0.01); a finer grid is refused before anything runs."""
DIGITS = 6
"""A coordinate is rounded to this many decimals, so 1/3 computed on two grids names one point."""


class FingerprintKind(enum.StrEnum):
    ASHLOCK = "ashlock"
    TRANSITIVE = "transitive"

    @property
    def probe(self) -> str:
        """The probe strategy's short name."""
        return "ASHLOCK" if self is FingerprintKind.ASHLOCK else "RAND"


DEFAULT_AXIS = {FingerprintKind.ASHLOCK: 3, FingerprintKind.TRANSITIVE: 5}
"""Points per axis by default: Ashlock 3 x 3 (step 0.5), transitive 5 opponents (p = 0, 0.25, ..., 1): small enough
to afford against a paid API at the default rounds and repetitions."""
DEFAULT_ROUNDS = 20
DEFAULT_REPETITIONS = 3


@dataclass(frozen=True, slots=True)
class Grid:
    """The probe points of a fingerprint: ``axis`` values per axis (Ashlock: axis x axis points)."""

    kind: FingerprintKind
    axis: int

    @property
    def values(self) -> list[float]:
        """The axis's values, as ``np.linspace(0, 1, axis)`` gives them, rounded to :data:`DIGITS` decimals."""
        if self.axis == 1:
            return [0.0]
        return [round(i / (self.axis - 1), DIGITS) for i in range(self.axis)]

    @property
    def points(self) -> list[dict[str, float]]:
        """Each probe point's parameters, in Axelrod's order (x outer, y inner for Ashlock)."""
        if self.kind is FingerprintKind.ASHLOCK:
            return [{"x": x, "y": y} for x in self.values for y in self.values]
        return [{"p": p} for p in self.values]

    def describe(self) -> str:
        """The grid as a user reads it: ``3 x 3 points (step 0.5)``, ``5 opponents (p step 0.25)``."""
        step = f"step {setting_text(round(1 / (self.axis - 1), DIGITS))}" if self.axis > 1 else "one point"
        if self.kind is FingerprintKind.ASHLOCK:
            return f"{self.axis} x {self.axis} probe points ({step})"
        return f"{self.axis} opponents (p {step})"


def grid(kind: FingerprintKind, *, step: float | None, points: int | None) -> Grid:
    """The grid from ``--step`` (Axelrod's step: ``int(1 / step) + 1`` values per axis) or ``--grid N`` (N values
    per axis; for the transitive fingerprint, N opponents), else the default; a clear error for anything else."""
    if step is not None and points is not None:
        raise ConfigError("give either --step (the spacing of the probe points) or --grid N (N per axis), not both")
    if step is not None:
        if not 0 < step <= 1:
            raise ConfigError(f"--step is the spacing of the probe points, in (0, 1], e.g. 0.25; got {step:g}")
        axis = int((1 / step) // 1) + 1
    else:
        axis = DEFAULT_AXIS[kind] if points is None else points
    if not 2 <= axis <= MAX_AXIS:
        raise ConfigError(
            f"a fingerprint takes 2 to {MAX_AXIS} probe points per axis (--step 1 to --step 0.01, --grid 2 to "
            f"--grid {MAX_AXIS}); got {axis}"
        )
    return Grid(kind, axis)


def point_name(kind: FingerprintKind, point: dict[str, float]) -> str:
    """The condition of one probe point: ``ashlock(x=0.25,y=0.5)``, ``transitive(p=1)``; the point alone."""
    return f"{kind.value}({','.join(f'{k}={setting_text(v)}' for k, v in point.items())})"


def fingerprint_config(
    subject: dict[str, Any],
    the_grid: Grid,
    *,
    rounds: int = DEFAULT_ROUNDS,
    repetitions: int = DEFAULT_REPETITIONS,
    seed: int = 0,
) -> ExperimentConfig:
    """``subject`` (an agent: ``{"model": ...}`` or ``{"policy": ...}``) as player A against the probe at each point
    of ``the_grid`` as player B, ``repetitions`` games of ``rounds`` rounds each, no execution noise (the probes
    carry their own randomness, as Axelrod's fingerprints)."""
    conditions = [
        {
            "name": point_name(the_grid.kind, point),
            "agent_a": dict(subject),
            "agent_b": {"policy": the_grid.kind.probe, **point},
        }
        for point in the_grid.points
    ]
    options = GameOptions(rounds=rounds, replicates=repetitions, seed=seed)
    return options_config(
        "fingerprint",
        conditions,
        options,
        default_rounds=DEFAULT_ROUNDS,
        source="the fingerprint options",
        fix_hint="see `pdbench fingerprint --help`",
    )
