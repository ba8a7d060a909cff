"""The zero-determinant test on exact vectors: each verdict checked against the property it names, derived apart
from the test's algebra: the long-run payoffs of the Markov chain a memory-one player makes with random memory-one
opponents (Press & Dyson's theorem says the relation holds against every one of them)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from harness.analysis.zero_determinant import Payoffs, ZdKind, ZdResult, zd_test
from harness.game.rules import PayoffMatrix
from harness.players.strategies import make_spec
from tests.unit.strategies.versus import build

CONVENTIONAL = Payoffs(R=3, S=0, T=5, P=1)
DONATION = Payoffs(R=3, S=-1, T=4, P=0)  # b = 4, c = 1: T + S = R + P


def long_run(p: tuple[float, ...], q: tuple[float, ...], g: Payoffs) -> tuple[float, float]:
    """X's and Y's long-run payoffs per round when X plays ``p`` and Y plays ``q`` (each after CC, CD, DC, DD from
    its own side), from the stationary distribution of the chain over the outcomes (X's move first)."""
    q_seen = (q[0], q[2], q[1], q[3])  # Y reads outcome xy as yx
    m = np.array([[a * b, a * (1 - b), (1 - a) * b, (1 - a) * (1 - b)] for a, b in zip(p, q_seen, strict=True)])
    w, v = np.linalg.eig(m.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    pi /= pi.sum()
    return float(pi @ np.array([g.R, g.S, g.T, g.P])), float(pi @ np.array([g.R, g.T, g.S, g.P]))


def exact(p: tuple[float, ...], g: Payoffs = CONVENTIONAL) -> ZdResult:
    return zd_test(p, p, p, g)


OPPONENTS = [tuple(np.random.default_rng(s).uniform(0.05, 0.95, 4)) for s in range(6)]


def test_extort2_is_extortionate_with_chi_2_and_enforces_it() -> None:
    vector = build("EXTORT2", seed=1).vector  # type: ignore[attr-defined]
    got = exact(vector)
    assert got.kind is ZdKind.EXTORTIONATE and got.fits == {ZdKind.EXTORTIONATE}
    assert got.chi == pytest.approx(2.0) and got.kappa == pytest.approx(1.0) and got.distance == pytest.approx(0.0)
    assert got.chi_range == pytest.approx((2.0, 2.0), abs=1e-6)
    for q in OPPONENTS:
        s_x, s_y = long_run(vector, q, CONVENTIONAL)
        assert s_x - 1 == pytest.approx(2 * (s_y - 1))
    # chi = 3 (Press & Dyson's own example is chi = 3 too): the same relation with 3.
    three = make_spec("EXTORT2", {"chi": 3.0, "phi": 0.05}).build(PayoffMatrix(), random.Random(0))
    assert exact(three.vector).chi == pytest.approx(3.0)  # type: ignore[attr-defined]


def test_tit_for_tat_is_fair_chi_1_the_boundary_of_extortion_and_generosity() -> None:
    got = exact((1, 0, 1, 0))
    assert got.kind is ZdKind.FAIR and got.chi == pytest.approx(1.0) and got.kappa is None
    assert got.fits == {ZdKind.FAIR, ZdKind.EXTORTIONATE, ZdKind.GENEROUS}  # chi = 1 with kappa = P, and with R
    for q in OPPONENTS:
        s_x, s_y = long_run((1, 0, 1, 0), q, CONVENTIONAL)
        assert s_x == pytest.approx(s_y)


def test_generous_tit_for_tat_is_generous_zd_in_the_donation_game_only() -> None:
    # Donation game, g = 1/3: chi = (b - c + g c) / (b - c - g b) = (3 + 1/3) / (3 - 4/3) = 2, kappa = R.
    g = 1 / 3
    got = exact((1, g, 1, g), DONATION)
    assert got.kind is ZdKind.GENEROUS and got.chi == pytest.approx(2.0) and got.kappa == pytest.approx(3.0)
    for q in OPPONENTS:
        s_x, s_y = long_run((1, g, 1, g), q, DONATION)
        assert s_x - 3 == pytest.approx(2 * (s_y - 3))
    # At 3-0-5-1 the normal of the ZD vectors is w = (-3, 2, 2, -1) and w . p~ = g: not ZD for any g > 0.
    w = np.array([-3, 2, 2, -1])
    assert w @ np.array([3, 0, 5, 1]) == w @ np.array([3, 5, 0, 1]) == w.sum() == 0
    for g in (0.1, 1 / 3):
        got = exact((1, g, 1, g))
        assert got.kind is ZdKind.NOT_ZD and got.distance == pytest.approx(g / math.sqrt(18))


def test_an_equalizer_sets_the_opponents_payoff() -> None:
    # p~ = -0.1 S_Y + 0.2: s_Y = 0.2 / 0.1 = 2 whatever Y does.
    p = (0.9, 0.7, 0.2, 0.1)
    got = exact(p)
    assert got.kind is ZdKind.EQUALIZER and got.chi is None
    for q in OPPONENTS:
        assert long_run(p, q, CONVENTIONAL)[1] == pytest.approx(2.0)


def test_unconditional_and_pavlov_are_not_zd_and_missing_intervals_undetermined() -> None:
    for p in ((1, 1, 1, 1), (0, 0, 0, 0), (1, 0, 0, 1)):
        assert exact(p).kind is ZdKind.NOT_ZD, p
    assert zd_test((1, 0, 1, 0), (1, 0, None, 0), (1, 0, 1, 0), CONVENTIONAL).kind is ZdKind.UNDETERMINED


def test_intervals_decide_what_the_vector_may_be() -> None:
    # GTFT(1/3) at 3-0-5-1 has w . p~ = 1/3; within +-h on p2 and p4, w . p~ reaches down to 1/3 - (2 + 1) h:
    # h = 0.05 leaves it above 0 (not ZD), h = 0.2 reaches 0.
    g = 1 / 3
    tight = zd_test((1, g, 1, g), (1, g - 0.05, 1, g - 0.05), (1, g + 0.05, 1, g + 0.05), CONVENTIONAL)
    wide = zd_test((1, g, 1, g), (1, g - 0.2, 1, g - 0.2), (1, g + 0.2, 1, g + 0.2), CONVENTIONAL)
    assert tight.kind is ZdKind.NOT_ZD and wide.kind is not ZdKind.NOT_ZD
    # Extort-2's vector within +-0.05: extortionate still, chi between the ends the box allows.
    v = (8 / 9, 1 / 2, 1 / 3, 0)
    got = zd_test(v, [max(0, x - 0.05) for x in v], [min(1, x + 0.05) for x in v], CONVENTIONAL)
    assert got.kind is ZdKind.EXTORTIONATE and got.chi_range is not None
    assert got.chi_range[0] < 2 < got.chi_range[1]
