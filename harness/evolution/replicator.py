"""Replicator dynamics of an infinite population: the deterministic reference of the finite dynamics.

``x_i' = w x_i (f_i - phi)`` with ``f = A x`` and ``phi = x . f``, where ``A`` is the payoff table
per round (so a unit of time is on the scale of one round's payoffs whatever the horizon) and ``w`` the
selection intensity (a time scale: ``w = 0`` leaves the shares where they are; both fitness mappings
reduce to this for weak selection). Under the per-round score each cell of ``A`` is the mean of its
matches' payoffs per round; under match totals (runs stored before the per-round score), the mean match
payoff over the expected match length. Integrated by the classical fixed-step Runge-Kutta method (RK4);
the step is chosen so that ``h * w * (max A - min A) <= 0.05`` (at least 20 steps per unit of time),
which bounds the growth rate times the step. Row ``g`` of the trajectory holds the shares at time ``g``.
"""

from __future__ import annotations

import math

import numpy as np

from harness.errors import ConfigError
from harness.evolution.payoffs import Payoffs
from harness.evolution.settings import EvolutionSettings, Score
from harness.evolution.trajectory import OnGeneration, Trajectory

STEP_RATE = 0.05  # h * w * (max A - min A)
MIN_STEPS_PER_UNIT = 20
MAX_STEPS = 20_000_000


def run(settings: EvolutionSettings, payoffs: Payoffs, on_generation: OnGeneration | None) -> Trajectory:
    table = per_round(settings, payoffs)
    w = settings.selection
    steps = steps_per_unit(settings, table)
    h = 1.0 / steps
    x = settings.initial_shares.copy()
    rows = np.empty((settings.generations + 1, len(x)))
    rows[0] = x
    _report(on_generation, 0, rows[0])
    for t in range(1, settings.generations + 1):
        for _ in range(steps):
            x = rk4_step(table, w, x, h)
        rows[t] = x
        _report(on_generation, t, rows[t])
    rows.setflags(write=False)
    return Trajectory(tuple(settings.players), rows, None, None, payoffs.table())


def per_round(settings: EvolutionSettings, payoffs: Payoffs) -> np.ndarray:
    """The payoff table per round the settings' ``score`` reads (see the module)."""
    if settings.score == Score.per_round:
        return np.asarray(payoffs.rates, dtype=np.float64)
    return np.asarray(payoffs.base / settings.game_horizon.expected_length(), dtype=np.float64)


def steps_per_unit(settings: EvolutionSettings, table: np.ndarray) -> int:
    """RK4 steps per unit of time (see the module); refuses a run that would take more than
    ``MAX_STEPS`` steps in all."""
    spread = float(table.max() - table.min())
    steps = max(MIN_STEPS_PER_UNIT, math.ceil(settings.selection * spread / STEP_RATE))
    total = steps * settings.generations
    if total > MAX_STEPS:
        raise ConfigError(
            f"the replicator would take {total:,} integration steps (selection {settings.selection:g} on "
            f"payoffs that differ by up to {spread:g} a round, over {settings.generations} units of time); "
            f"at most {MAX_STEPS:,}: lower the selection intensity or the generations (under strong "
            "selection the shares settle within a few units of time)"
        )
    return steps


def velocity(table: np.ndarray, w: float, x: np.ndarray) -> np.ndarray:
    """``w x_i (f_i - phi)``."""
    f = table @ x
    return np.asarray(w * x * (f - x @ f), dtype=np.float64)


def rk4_step(table: np.ndarray, w: float, x: np.ndarray, h: float) -> np.ndarray:
    k1 = velocity(table, w, x)
    k2 = velocity(table, w, x + (h / 2) * k1)
    k3 = velocity(table, w, x + (h / 2) * k2)
    k4 = velocity(table, w, x + h * k3)
    return np.asarray(x + (h / 6) * (k1 + 2 * k2 + 2 * k3 + k4), dtype=np.float64)


def _report(on_generation: OnGeneration | None, t: int, row: np.ndarray) -> None:
    if on_generation is not None:
        view = row.view()
        view.setflags(write=False)
        on_generation(t, view)
