"""Replicator dynamics against scipy's ODE solver (an independent integrator, at rtol 1e-10), on payoff tables
worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from harness.evolution import EvolutionSettings, evolve

PLAYERS = ["TFT", "ALLD", "ALLC", "STFT"]
# 200 rounds, T=5 R=3 P=1 S=0, by hand (row against column):
#   TFT-STFT: STFT opens with D, then each copies the other: (C,D), (D,C), (C,D)... so each scores 100 x 5 = 500.
#   STFT-ALLC: 5, then C for ever: 5 + 199 x 3 = 602 (ALLC: 0 + 597 = 597). STFT-ALLD, STFT-STFT: all D, 200.
TABLE = np.array(
    [
        [600, 199, 600, 500],
        [204, 200, 1000, 200],
        [600, 0, 600, 597],
        [500, 200, 602, 200],
    ],
    dtype=float,
)


def reference(table: np.ndarray, w: float, x0: list[float], times: int) -> np.ndarray:
    """x_i' = w x_i (f_i - phi), f = A x, phi = x . f, with A the table per round (over 200 rounds)."""
    from scipy.integrate import solve_ivp  # here, not at the top: scipy costs every test process ~1 s to collect

    a = table / 200

    def rhs(_t: float, x: np.ndarray) -> np.ndarray:
        f = a @ x
        return w * x * (f - x @ f)

    solution = solve_ivp(rhs, (0, times), x0, method="DOP853", rtol=1e-10, atol=1e-12, t_eval=np.arange(times + 1))
    assert solution.success
    return np.asarray(solution.y.T)


@pytest.mark.parametrize(("w", "x0"), [(1.0, [0.3, 0.2, 0.3, 0.2]), (0.4, [0.1, 0.4, 0.4, 0.1])])
def test_replicator_agrees_with_scipy(w: float, x0: list[float]) -> None:
    s = EvolutionSettings(players=PLAYERS, shares=x0, dynamics="replicator", generations=30, selection=w)
    trajectory = evolve(s)
    assert trajectory.payoffs.values.tolist() == TABLE.tolist()
    assert trajectory.size is None and trajectory.fixation is None
    ours = trajectory.shares()
    assert ours.shape == (31, 4)
    expected = reference(TABLE, w, x0, 30)
    assert np.abs(ours - expected).max() < 1e-6
    assert np.abs(ours.sum(axis=1) - 1).max() < 1e-12
    # and something happened: ALLD first feeds on ALLC, then the reciprocators take over
    assert ours[-1, 1] < 0.01 and ours[-1, 2] > 0.0


def test_without_selection_the_shares_stay() -> None:
    s = EvolutionSettings(players=PLAYERS, shares=[0.1, 0.2, 0.3, 0.4], dynamics="replicator", selection=0.0)
    assert (evolve(s).shares() == np.array([0.1, 0.2, 0.3, 0.4])).all()


def test_a_supplied_table_and_a_live_view() -> None:
    # rock-paper-scissors (zero-sum, per round after dividing by 200): the replicator keeps x_R x_P x_S constant
    rps = 200 * np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], dtype=float)
    s = EvolutionSettings(
        players=["ALLC", "ALLD", "TFT"], shares=[0.5, 0.3, 0.2], dynamics="replicator", generations=50
    )
    seen: list[tuple[int, list[float]]] = []
    trajectory = evolve(s, payoffs=rps, on_generation=lambda g, x: seen.append((g, x.tolist())))
    assert trajectory.payoffs.source == "supplied"
    products = trajectory.shares().prod(axis=1)
    assert np.abs(products - 0.5 * 0.3 * 0.2).max() < 1e-9
    assert [g for g, _ in seen] == list(range(51))
    assert [x for _, x in seen] == trajectory.shares().tolist()
    assert np.abs(trajectory.shares() - reference(rps, 1.0, [0.5, 0.3, 0.2], 50)).max() < 1e-6
