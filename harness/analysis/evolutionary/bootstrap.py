"""The uncertainty of every figure, from the games: a percentile bootstrap over games.

Each draw resamples every pair's games with replacement, as many as it has (:meth:`MeasuredTable.resample`), and
recomputes every figure on the resampled table; a figure's 95% interval is the 2.5th to 97.5th percentile of its
values over the K draws (Efron & Tibshirani 1993, ch. 13). The draws come from ``numpy``'s PCG64 seeded with the
given seed, so the same run, settings and seed give the same intervals. A verdict (i invades j; a rest point on a
face exists, is stable, is an ESS) is reported with the share of draws in which it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from harness.analysis.evolutionary.table import MeasuredTable

LEVEL = 0.95
T = TypeVar("T")


def draws(table: MeasuredTable, count: int, seed: int, compute: Callable[[np.ndarray], T]) -> list[T]:
    """``compute`` on ``count`` resampled tables."""
    rng = np.random.Generator(np.random.PCG64(seed))
    return [compute(table.resample(rng)) for _ in range(count)]


def percentile_interval(values: np.ndarray, level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """The low and high percentiles over the first axis (the draws), element by element (NaN where a draw is)."""
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(values, [tail, 100 - tail], axis=0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
