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


def test_the_t_quantile_is_scipys_to_the_last_bit() -> None:
    """The quantile comes from scipy.special (cheap to import) rather than scipy.stats (most of a second): it must
    be exactly the value scipy.stats.t.ppf gives, over every degree of freedom a report can meet (1 to 10^7
    replicates) and the levels anyone asks for."""
    from scipy import stats

    from harness.analysis.stats import t_quantile

    dfs = [*range(1, 301), 500, 999, 1000, 4096, 10**4, 12_345, 10**5, 10**6, 9_999_999]
    for q in (0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995):
        for df in dfs:
            assert t_quantile(q, df) == float(stats.t.ppf(q, df)), (q, df)


def test_t_quantiles_of_textbook_tables() -> None:
    # Two-sided 95% critical values of Student's t as printed in statistics tables (e.g. NIST/SEMATECH
    # e-Handbook, table 1.3.6.7.2), to the 3 decimals they give.
    table = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042, 100: 1.984}
    from harness.analysis.stats import t_quantile

    for df, value in table.items():
        assert round(t_quantile(0.975, df), 3) == value


def test_a_collapse_round_interval_never_reaches_below_round_1() -> None:
    """Time to collapse is a round number (1 or more): a t interval around a small mean with a wide spread
    would reach below it (here 2 ± 12.7: down to -10.7), where no game can be. The interval is cut at round 1."""
    from harness.analysis.report import COLLAPSE_BOUNDS

    unbounded = mean_ci([1, 3])  # mean 2, sd sqrt(2), t(0.975, 1) = 12.7062 -> 2 ± 12.7062
    assert unbounded.low == pytest.approx(2 - 12.7062, abs=1e-3)
    est = mean_ci([1, 3], bounds=COLLAPSE_BOUNDS)
    assert est.low == 1.0 and est.high == pytest.approx(2 + 12.7062, abs=1e-3)
    assert est.fmt(1) == "2.0 [1.0, 14.7]"
