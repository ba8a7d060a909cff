"""Payoff matrices, horizons and noise."""

from __future__ import annotations

import random
import statistics

import pytest
from pydantic import ValidationError

from harness.config.sections import HorizonSection
from harness.game.horizon import (
    FixedHorizon,
    FixedHorizonInfo,
    GeometricHorizon,
    GeometricHorizonInfo,
    Horizon,
    HorizonKind,
)
from harness.game.rules import PayoffMatrix
from harness.game.seeds import stream


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
    h = FixedHorizon(7)
    assert h.game_length(0) == h.game_length(1) == h.longest == 7
    assert h.expected_length() == 7.0 and not h.random_length
    assert h.known_to_players() == FixedHorizonInfo(n_rounds=7)
    assert h.known_to_players().kind is HorizonKind.FIXED


def test_geometric_horizon_has_the_right_mean_and_hides_the_end() -> None:
    h = GeometricHorizon(0.1)
    rng = random.Random(1)
    lengths = [h.draw_length(rng) for _ in range(20_000)]
    assert min(lengths) >= 1
    assert statistics.fmean(lengths) == pytest.approx(10.0, rel=0.03)
    info = h.known_to_players()
    assert isinstance(info, GeometricHorizonInfo) and info.continuation_prob == pytest.approx(0.9)
    assert info.kind is HorizonKind.GEOMETRIC and not hasattr(info, "n_rounds")


def test_a_geometric_game_draws_its_length_from_its_own_horizon_stream() -> None:
    h = GeometricHorizon(0.05)
    assert h.random_length and h.longest is None
    assert [h.game_length(seed) for seed in range(50)] == [h.draw_length(stream(seed, "horizon")) for seed in range(50)]
    assert len({h.game_length(seed) for seed in range(50)}) > 1


def test_geometric_horizon_cap_and_expected_length() -> None:
    h = GeometricHorizon(0.01, 20)
    rng = random.Random(2)
    assert max(h.draw_length(rng) for _ in range(1000)) == 20 == h.longest
    assert h.expected_length() == pytest.approx((1 - 0.99**20) / 0.01)


def _rest_by_enumeration(h: GeometricHorizon, played: int, upto: int = 4000) -> float:
    """E[min(L, m) - r | L >= r] summed term by term from the length's distribution as ``draw_length`` defines
    it (L = 1 + floor(log u / log(1 - p)), so P(L = k) = w^(k-1) (1 - w), the cap taking the tail at m)."""
    w = 1.0 - h.stop_prob
    m = h.max_rounds if h.max_rounds is not None else upto
    law = {k: w ** (k - 1) * (1 - w) for k in range(1, m)} | {m: w ** (m - 1)}  # P(min(L, m) = k)
    at_least = sum(q for k, q in law.items() if k >= max(played, 1))
    if at_least == 0:
        return 0.0  # no game plays that long: none is left to expect
    return sum((k - played) * q for k, q in law.items() if k >= max(played, 1)) / at_least


def test_a_game_in_flight_expects_the_same_rest_whatever_it_has_played() -> None:
    """What the live progress adds for a geometric game still playing: round 1 is always played, then the game
    goes on with probability w after each round whatever came before, so after r >= 1 rounds w / (1 - w) more
    are expected, or w (1 - w^(m-r)) / (1 - w) under a cap m; checked by hand, against the length's distribution
    summed term by term, and against drawn lengths."""
    h = GeometricHorizon(0.25)  # w = 3/4: 3 more rounds expected after any round
    assert h.expected_remaining(0) == h.expected_length() == 4.0
    assert [h.expected_remaining(r) for r in (1, 2, 10, 500)] == [3.0] * 4
    capped = GeometricHorizon(0.25, max_rounds=4)
    # 1 + 3/4 + 9/16 + 27/64 before round 1; after round 2, rounds 3 and 4 with chances 3/4 and 9/16.
    assert capped.expected_remaining(0) == pytest.approx(2.734375)
    assert capped.expected_remaining(2) == pytest.approx(0.75 + 0.5625)
    assert capped.expected_remaining(4) == capped.expected_remaining(9) == 0.0
    for horizon in (h, capped, GeometricHorizon(0.1), GeometricHorizon(0.1, 30), GeometricHorizon(1.0)):
        for played in (0, 1, 2, 7, 29):
            expected = _rest_by_enumeration(horizon, played)
            assert horizon.expected_remaining(played) == pytest.approx(expected, abs=1e-9), (horizon, played)
    rng = random.Random(3)
    lengths = [h.draw_length(rng) for _ in range(40_000)]
    rest = [n - 5 for n in lengths if n >= 5]  # games still playing after round 5
    assert statistics.fmean(rest) == pytest.approx(3.0, rel=0.05)


def test_the_chance_a_round_is_played_given_the_rounds_played() -> None:
    h = GeometricHorizon(0.25, max_rounds=6)
    assert [h.reach(r, 0) for r in range(1, 8)] == [1.0, 0.75, 0.5625, 0.421875, 0.31640625, 0.2373046875, 0.0]
    assert [h.reach(r, 3) for r in (2, 3, 4, 5, 6, 7)] == [0.0, 0.0, 0.75, 0.5625, 0.421875, 0.0]
    fixed = FixedHorizon(3)
    assert [fixed.reach(r, 1) for r in (1, 2, 3, 4)] == [0.0, 1.0, 1.0, 0.0]
    assert [fixed.expected_remaining(r) for r in (0, 1, 3, 4)] == [3.0, 2.0, 0.0, 0.0]
    # The rest is the sum of the chances of the rounds after it, in both kinds.
    for horizon in (h, fixed, GeometricHorizon(0.5, 40)):
        for played in range(5):
            rest = sum(horizon.reach(r, played) for r in range(1, 60))
            assert horizon.expected_remaining(played) == pytest.approx(rest), (horizon, played)


@pytest.mark.parametrize(
    "section",
    [
        {"type": "fixed", "n_rounds": 0},
        {"type": "geometric", "stop_prob": 0.0},
        {"type": "geometric", "stop_prob": 1.5},
        {"type": "geometric"},
        {"type": "spiral"},
    ],
)
def test_invalid_horizons_are_refused_where_they_are_read(section: dict) -> None:
    with pytest.raises(ValidationError):
        HorizonSection.model_validate(section)


@pytest.mark.parametrize(
    ("section", "horizon", "dumped"),
    [
        ({}, FixedHorizon(50), {"type": "fixed", "n_rounds": 50, "stop_prob": None, "max_rounds": None}),
        (
            {"type": "geometric", "stop_prob": 0.1, "max_rounds": 40},
            GeometricHorizon(0.1, 40),
            {"type": "geometric", "n_rounds": None, "stop_prob": 0.1, "max_rounds": 40},
        ),
    ],
)
def test_a_horizon_section_makes_its_kind_and_is_stored_as_written(
    section: dict, horizon: Horizon, dumped: dict
) -> None:
    read = HorizonSection.model_validate(section)
    assert read.to_horizon() == horizon
    assert read.model_dump(mode="json") == dumped
    assert HorizonSection.of(horizon) == read
