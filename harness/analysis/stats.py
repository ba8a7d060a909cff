"""Confidence intervals over replicates."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean with a two-sided confidence interval (Student t over independent replicates).

    ``low``/``high`` are None when fewer than two values exist; ``n`` counts the values used
    (NULL metrics, such as retaliation when the opponent never defected, are left out).
    """

    mean: float | None
    low: float | None
    high: float | None
    n: int

    def fmt(self, digits: int = 2, pct: bool = False) -> str:
        """``12.5% ± 3.1``, or ``95.0% [88.2, 100.0]`` for an interval cut at a bound; the mean alone without one."""
        mean, interval = self.parts(digits, pct)
        return f"{mean} {interval}" if interval else mean

    def parts(self, digits: int = 2, pct: bool = False) -> tuple[str, str]:
        """The mean and the interval of :meth:`fmt` apart (the interval is "" when there is none), for tables
        that put them on two lines."""
        if self.mean is None:
            return "—", ""
        scale, unit = (100.0, "%") if pct else (1.0, "")
        m = f"{self.mean * scale:.{digits}f}{unit}"
        if self.low is None or self.high is None:
            return m, ""
        if math.isclose(self.mean - self.low, self.high - self.mean, rel_tol=1e-9, abs_tol=1e-12):
            return m, f"± {(self.high - self.mean) * scale:.{digits}f}"
        return m, f"[{self.low * scale:.{digits}f}, {self.high * scale:.{digits}f}]"


def mean_ci(values: Iterable[float | None], level: float = 0.95, bounds: tuple[float, float] | None = None) -> Estimate:
    """Mean and Student-t interval; ``bounds`` clips the interval to a metric's range (see :func:`t_interval`)."""
    xs = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    n = len(xs)
    if n == 0:
        return Estimate(None, None, None, 0)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n >= 2 else None
    return t_interval(n, mean, sd, level, bounds)


def t_interval(
    n: int, mean: float | None, sd: float | None, level: float = 0.95, bounds: tuple[float, float] | None = None
) -> Estimate:
    """:func:`mean_ci` from the sample's size, mean and standard deviation (``n - 1`` in its denominator),
    for samples summed where they are stored (SQL) rather than read into memory value by value.

    ``bounds`` is the range the quantity can take (rates: 0 to 1; time to collapse: round 1 and on). A t
    interval is symmetric around the mean, so with few values and a wide spread it reaches past such a bound
    (a mean collapse round of 2 from rounds 1 and 3 gives 2 ± 12.7, down to round -10.7). No mean lies out
    there, so the interval is cut at the bound: it still holds the true mean whenever the symmetric one does
    (the coverage is unchanged) and never shows an impossible value.
    """
    if n == 0 or mean is None:
        return Estimate(None, None, None, 0)
    if n < 2 or sd is None:
        return Estimate(mean, None, None, n)
    half = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Estimate(mean, low, high, n)


@lru_cache(maxsize=1024)
def t_quantile(q: float, df: int) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom: ``scipy.stats.t.ppf(q, df)``.

    It is the routine ``scipy.stats.t.ppf`` itself calls (``scipy.special.stdtrit``, so the value is the same
    to the last bit; tests/unit/test_stats.py checks it over degrees of freedom 1 to 10,000,000), imported
    from ``scipy.special`` only when an interval is computed: importing ``scipy.stats`` took most of a second,
    paid by every command (`pdbench --help` too) before any of them printed a line.
    """
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


@dataclass(frozen=True, slots=True)
class Difference:
    """The difference of two players' means (the second's minus the first's) with its 95% interval and the
    two-sided p-value of the test that fits the design: ``paired`` (a t test on the differences of games matched
    by opponent and replicate) or ``welch`` (Welch's unequal-variance t test). ``n``: pairs, or games of each."""

    mean: float | None
    low: float | None
    high: float | None
    p: float | None
    test: str
    n: tuple[int, int]


def _known(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def _clean(values: Iterable[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(v)]


def paired_difference(pairs: Iterable[tuple[float | None, float | None]], level: float = 0.95) -> Difference:
    """``y - x`` over pairs where both are known: the mean difference, its Student-t interval and the paired
    t test's p-value (``scipy.stats.ttest_rel``); no interval or p below two pairs or when every difference is
    the same (then the test has no variance to weigh it by)."""
    diffs = [float(y) - float(x) for x, y in pairs if x is not None and y is not None and _known(x) and _known(y)]
    n = len(diffs)
    if n == 0:
        return Difference(None, None, None, None, "paired", (0, 0))
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) if n >= 2 else 0.0
    if n < 2 or sd == 0:
        return Difference(mean, None, None, None, "paired", (n, n))
    se = sd / math.sqrt(n)
    half = t_quantile(0.5 + level / 2, n - 1) * se
    return Difference(mean, mean - half, mean + half, two_sided_p(mean / se, n - 1), "paired", (n, n))


def welch_difference(xs: Iterable[float | None], ys: Iterable[float | None], level: float = 0.95) -> Difference:
    """``mean(ys) - mean(xs)`` with Welch's interval (Welch-Satterthwaite degrees of freedom) and the p-value of
    Welch's t test (``scipy.stats.ttest_ind(equal_var=False)``); no interval or p below two values a side or
    when both sides have no spread."""
    a, b = _clean(xs), _clean(ys)
    if not a or not b:
        return Difference(None, None, None, None, "welch", (len(a), len(b)))
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    mean = mb - ma
    if len(a) < 2 or len(b) < 2:
        return Difference(mean, None, None, None, "welch", (len(a), len(b)))
    va = sum((v - ma) ** 2 for v in a) / (len(a) - 1) / len(a)
    vb = sum((v - mb) ** 2 for v in b) / (len(b) - 1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return Difference(mean, None, None, None, "welch", (len(a), len(b)))
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = t_quantile_real(0.5 + level / 2, df) * se
    return Difference(mean, mean - half, mean + half, two_sided_p(mean / se, df), "welch", (len(a), len(b)))


def two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom (``scipy.special.stdtr``, as scipy.stats)."""
    from scipy.special import stdtr

    return float(2.0 * stdtr(df, -abs(t)))


def t_quantile_real(q: float, df: float) -> float:
    """:func:`t_quantile` for degrees of freedom that need not be whole (Welch's)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def holm(pvalues: list[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of ``pvalues`` (None left as None and not counted): each adjusted p is at
    least the one before it in ascending order, capped at 1 (``statsmodels``' ``multipletests(method="holm")``)."""
    known = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m = len(known)
    adjusted: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted
