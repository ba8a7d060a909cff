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
