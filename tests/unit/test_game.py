"""Payoff matrices, horizons and noise."""

from __future__ import annotations

import random
import statistics

import pytest

from harness.game.rules import Horizon, PayoffMatrix


def test_default_matrix_is_the_classic_pd() -> None:
    m = PayoffMatrix()
    assert (m.T, m.R, m.P, m.S) == (5, 3, 1, 0)
    assert m.warnings() == []
    assert m.table()[("C", "D")] == (0, 5)


def test_matrix_from_config_mapping_round_trips() -> None:
    data = {"C": {"C": [4, 4], "D": [0, 6]}, "D": {"C": [6, 0], "D": [1, 1]}}
    m = PayoffMatrix.from_mapping(data)
    assert m.to_mapping() == data
    assert (m.R, m.S, m.T, m.P) == (4, 0, 6, 1)


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ({"C": {"C": [3, 3], "D": [0, 5]}}, "exactly the rows C and D"),
        ({"C": {"C": [3, 3]}, "D": {"C": [5, 0], "D": [1, 1]}}, "payoff_matrix.C must have exactly"),
        ({"C": {"C": [3], "D": [0, 5]}, "D": {"C": [5, 0], "D": [1, 1]}}, "payoff_matrix.C.C"),
        ({"C": {"C": ["x", 3], "D": [0, 5]}, "D": {"C": [5, 0], "D": [1, 1]}}, "pair of numbers"),
        ({"C": {"C": [True, 3], "D": [0, 5]}, "D": {"C": [5, 0], "D": [1, 1]}}, "pair of numbers"),
        ({"C": {"C": [float("nan"), 3], "D": [0, 5]}, "D": {"C": [5, 0], "D": [1, 1]}}, "pair of numbers"),
        ({"C": {"C": [10**400, 3], "D": [0, 5]}, "D": {"C": [5, 0], "D": [1, 1]}}, "pair of numbers"),
        ([[3, 3], [0, 5]], "exactly the rows C and D"),
    ],
)
def test_malformed_matrices_are_refused(bad: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        PayoffMatrix.from_mapping(bad)  # type: ignore[arg-type]


def test_a_game_that_is_not_a_pd_warns() -> None:
    stag_hunt = PayoffMatrix.from_rstp(R=5, S=0, T=3, P=1)
    assert any("T > R > P > S" in w for w in stag_hunt.warnings())
    alternation_pays = PayoffMatrix.from_rstp(R=3, S=0, T=7, P=1)
    assert any("2R > T + S" in w for w in alternation_pays.warnings())


def test_fixed_horizon() -> None:
    h = Horizon(kind="fixed", n_rounds=7)
    assert h.draw_length(random.Random(0)) == 7
    info = h.known_to_players()
    assert (info.kind, info.n_rounds, info.continuation_prob) == ("fixed", 7, None)


def test_geometric_horizon_has_the_right_mean_and_hides_the_end() -> None:
    h = Horizon(kind="geometric", n_rounds=None, stop_prob=0.1)
    rng = random.Random(1)
    lengths = [h.draw_length(rng) for _ in range(20_000)]
    assert min(lengths) >= 1
    assert statistics.fmean(lengths) == pytest.approx(10.0, rel=0.03)
    info = h.known_to_players()
    assert info.n_rounds is None and info.continuation_prob == pytest.approx(0.9)


def test_geometric_horizon_cap_and_expected_length() -> None:
    h = Horizon(kind="geometric", n_rounds=None, stop_prob=0.01, max_rounds=20)
    rng = random.Random(2)
    assert max(h.draw_length(rng) for _ in range(1000)) == 20
    assert h.expected_length() == pytest.approx((1 - 0.99**20) / 0.01)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kind": "fixed", "n_rounds": 0},
        {"kind": "geometric", "n_rounds": None, "stop_prob": 0.0},
        {"kind": "geometric", "n_rounds": None, "stop_prob": 1.5},
        {"kind": "spiral"},
    ],
)
def test_invalid_horizons(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        Horizon(**kwargs)
