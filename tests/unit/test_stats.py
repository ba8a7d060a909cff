"""Confidence intervals."""

from __future__ import annotations

import pytest

from harness.analysis.stats import mean_ci


def test_student_t_interval_matches_hand_computation() -> None:
    # mean 2.5, sd 1.2910, t(0.975, 3) = 3.18245 -> half width 2.0543
    est = mean_ci([1, 2, 3, 4])
    assert est.mean == pytest.approx(2.5) and est.n == 4
    assert est.low == pytest.approx(2.5 - 2.05431, abs=1e-4)
    assert est.high == pytest.approx(2.5 + 2.05431, abs=1e-4)


def test_nulls_are_left_out_and_small_samples_have_no_interval() -> None:
    assert mean_ci([None, None]).mean is None
    one = mean_ci([None, 0.5])
    assert (one.mean, one.low, one.high, one.n) == (0.5, None, None, 1)
    assert mean_ci([]).fmt() == "—"


def test_rates_are_clipped_to_their_range() -> None:
    est = mean_ci([0.0, 1.0, 1.0], bounds=(0.0, 1.0))
    assert est.low == 0.0 and est.high == 1.0
    assert est.fmt(1, pct=True) == "66.7% [0.0, 100.0]"
    assert mean_ci([1.0, 3.0]).fmt(1).startswith("2.0 ± ")
