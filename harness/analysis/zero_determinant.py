"""The zero-determinant test: does a memory-one vector, within its intervals, fit a ZD strategy, and which kind?

Press & Dyson (2012, PNAS 109:10409): a memory-one player X with cooperation probabilities p = (p1, p2, p3, p4)
after CC, CD, DC, DD (own move first) enforces the linear relation alpha s_X + beta s_Y + gamma = 0 between the
two long-run payoffs, against any opponent, exactly when

    p~ = (p1 - 1, p2 - 1, p3, p4) = alpha S_X + beta S_Y + gamma 1,   S_X = (R, S, T, P), S_Y = (R, T, S, P).

Written as Press & Dyson and Stewart & Plotkin (2013, PNAS 110:15348) do, p~ = phi [(S_X - kappa) - chi (S_Y -
kappa)]: s_X - kappa = chi (s_Y - kappa), so phi = alpha, chi = -beta / alpha and kappa = -gamma / (alpha + beta).
The kinds tested (phi > 0 throughout, as for any valid ZD vector in a Prisoner's Dilemma):

* extortionate: kappa = P, chi >= 1 (p4 = 0): X gets chi times Y's surplus over mutual defection (Extort-2: 2);
* generous: kappa = R, chi >= 1 (p1 = 1): X loses chi times what Y loses below mutual cooperation;
* fair: chi = 1 (s_X = s_Y for any kappa; Tit for Tat, (1, 0, 1, 0));
* equalizer: alpha = 0, X sets Y's payoff alone (s_Y = -gamma / beta).

The rule, over the box the four intervals make. Each kind is a set of vectors linear in its parameters (with
u = phi and v = phi chi, extortion is u (S_X - P) - v (S_Y - P) with v >= u > 0), so whether some vector of a kind
lies in the box is a linear program (:func:`scipy.optimize.linprog`, HiGHS), solved exactly rather than from a
point estimate and a tolerance. Then: some interval missing (an outcome never reached in two games) ->
``undetermined``; no ZD vector of any kind in the box -> ``not ZD``; a fair one in the box -> ``fair`` (chi = 1
cannot be excluded, and chi = 1 is the boundary where extortion and generosity meet: Tit for Tat is all three at
once, so it is called fair); else the one kind among extortionate, generous and equalizer whose vectors reach
the box, ``ZD (other)`` when none does (a baseline kappa strictly between P and R, Stewart & Plotkin's general
case), ``ZD (ambiguous)`` when several do. The estimates reported are the least-squares projection of the point
vector onto the ZD vectors (chi, phi, kappa, and its distance from them), and for an extortionate or generous
label the range of chi over that kind's vectors in the box (a linear-fractional program, made linear by Charnes
and Cooper's change of variables).

Generous Tit for Tat, (1, g, 1, g), is ZD for g > 0 only when T + S = R + P (the donation game, R = b - c, S = -c,
T = b, P = 0): then it is generous with chi = (b - c + g c) / (b - c - g b), 2 at b = 4, c = 1, g = 1/3. At the
conventional (R, S, T, P) = (3, 0, 5, 1) the vectors orthogonal to S_X, S_Y and 1 are multiples of
w = (-3, 2, 2, -1), and w . p~ = g: Generous Tit for Tat is ZD there only at g = 0, Tit for Tat.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_EPS = 1e-9  # phi > 0 and beta < 0 as linear constraints; intervals are widened by as much against rounding


class ZdKind(enum.StrEnum):
    EXTORTIONATE = "extortionate"
    GENEROUS = "generous"
    FAIR = "fair"
    EQUALIZER = "equalizer"
    OTHER = "ZD (other)"
    AMBIGUOUS = "ZD (ambiguous)"
    NOT_ZD = "not ZD"
    UNDETERMINED = "undetermined"


@dataclass(frozen=True, slots=True)
class Payoffs:
    """The player's own payoffs: reward, sucker's, temptation, punishment."""

    R: float
    S: float
    T: float
    P: float


@dataclass(frozen=True, slots=True)
class ZdResult:
    """The test's verdict on one vector (see the module docstring for the rule)."""

    kind: ZdKind
    fits: frozenset[ZdKind]  # the kinds (extortionate, generous, fair, equalizer) with a vector in the box
    chi: float | None  # of the least-squares ZD projection of the point vector; None where alpha = 0
    phi: float | None
    kappa: float | None  # None where chi = 1 (any baseline holds) or alpha = 0
    distance: float  # Euclidean distance of the point p~ from the ZD vectors
    chi_range: tuple[float, float] | None  # chi over the labelled kind's vectors in the box (extortion, generosity)
    reason: str = ""  # why the test is undetermined

    @classmethod
    def undetermined(cls, reason: str) -> ZdResult:
        return cls(ZdKind.UNDETERMINED, frozenset(), None, None, None, math.nan, None, reason)

    def summary(self) -> str:
        """One line: ``extortionate, chi 2.01 [1.62, 2.55], kappa 1.00``."""
        text = str(self.kind)
        if self.kind is ZdKind.UNDETERMINED:
            return f"{text}: {self.reason}" if self.reason else text
        if self.kind in (ZdKind.NOT_ZD, ZdKind.EQUALIZER):  # an equalizer's chi is no extortion factor
            return text
        if self.chi is not None:
            text += f", chi {self.chi:.2f}"
        if self.chi_range is not None:
            low, high = self.chi_range
            text += f" [{low:.2f}, {'inf' if math.isinf(high) else f'{high:.2f}'}]"
        if self.kappa is not None and self.kind is not ZdKind.FAIR:
            text += f", kappa {self.kappa:.2f}"
        return text


def zd_test(
    p: Sequence[float | None],
    low: Sequence[float | None],
    high: Sequence[float | None],
    payoffs: Payoffs,
) -> ZdResult:
    """Test the memory-one vector ``p`` (P(C) after CC, CD, DC, DD) with its interval bounds ``low``/``high``."""
    s_x, s_y = _vectors(payoffs)
    if any(v is None for v in (*p, *low, *high)):
        return ZdResult.undetermined("an outcome came up in fewer than two games")
    shift = np.array([1.0, 1.0, 0.0, 0.0])
    point = np.array([float(v) for v in p if v is not None]) - shift
    lo = np.array([float(v) for v in low if v is not None]) - shift - _EPS
    hi = np.array([float(v) for v in high if v is not None]) - shift + _EPS
    chi, phi, kappa, distance = _projection(point, s_x, s_y)
    one = np.ones(4)
    fits = {
        ZdKind.EXTORTIONATE: _reaches(lo, hi, np.column_stack([s_x - payoffs.P, -(s_y - payoffs.P)]), _ORDERED),
        ZdKind.GENEROUS: _reaches(lo, hi, np.column_stack([s_x - payoffs.R, -(s_y - payoffs.R)]), _ORDERED),
        ZdKind.FAIR: _reaches(lo, hi, np.column_stack([s_x - s_y, one]), [(_EPS, None), (None, None)]),
        ZdKind.EQUALIZER: _reaches(lo, hi, np.column_stack([s_y, one]), [(None, -_EPS), (None, None)]),
    }
    found = frozenset(k for k, ok in fits.items() if ok)
    if not _reaches(lo, hi, np.column_stack([s_x, s_y, one]), [(None, None)] * 3):
        return ZdResult(ZdKind.NOT_ZD, found, chi, phi, kappa, distance, None)
    specials = found - {ZdKind.FAIR}
    if ZdKind.FAIR in found:
        kind = ZdKind.FAIR
    elif len(specials) == 1:
        (kind,) = specials
    else:
        kind = ZdKind.OTHER if not specials else ZdKind.AMBIGUOUS
    chi_range = None
    if kind in (ZdKind.EXTORTIONATE, ZdKind.GENEROUS):
        base = payoffs.P if kind is ZdKind.EXTORTIONATE else payoffs.R
        chi_range = _chi_range(lo, hi, s_x - base, s_y - base)
    return ZdResult(kind, found, chi, phi, kappa, distance, chi_range)


# u > 0 and v >= u (chi >= 1): v - u >= 0 is written as an inequality in _reaches.
_ORDERED: list[tuple[float | None, float | None]] = [(_EPS, None), (None, None)]


def _vectors(payoffs: Payoffs) -> tuple[np.ndarray, np.ndarray]:
    R, S, T, P = payoffs.R, payoffs.S, payoffs.T, payoffs.P
    return np.array([R, S, T, P], dtype=float), np.array([R, T, S, P], dtype=float)


def _projection(
    point: np.ndarray, s_x: np.ndarray, s_y: np.ndarray
) -> tuple[float | None, float | None, float | None, float]:
    """chi, phi, kappa of the least-squares ZD fit of ``point`` (= p~), and the fit's distance from it."""
    basis = np.column_stack([s_x, s_y, np.ones(4)])
    (alpha, beta, gamma), *_ = np.linalg.lstsq(basis, point, rcond=None)
    distance = float(np.linalg.norm(point - basis @ np.array([alpha, beta, gamma])))
    scale = float(np.abs(basis).max())
    if abs(alpha) * scale < 1e-9:
        return None, None, None, distance
    chi = float(-beta / alpha)
    kappa = None if abs(alpha + beta) * scale < 1e-9 else float(-gamma / (alpha + beta))
    return chi, float(alpha), kappa, distance


def _reaches(
    lo: np.ndarray, hi: np.ndarray, basis: np.ndarray, bounds: list[tuple[float | None, float | None]]
) -> bool:
    """Whether some ``basis @ theta`` within ``bounds`` lies in the box [lo, hi]; an extortion or generosity basis
    (two columns whose bounds are _ORDERED) also needs theta[1] >= theta[0] (chi >= 1)."""
    from scipy.optimize import linprog

    rows = [basis, -basis]
    limits = [hi, -lo]
    if bounds is _ORDERED:
        rows.append(np.array([[1.0, -1.0]]))
        limits.append(np.array([0.0]))
    result = linprog(
        np.zeros(basis.shape[1]), A_ub=np.vstack(rows), b_ub=np.concatenate(limits), bounds=bounds, method="highs"
    )
    return bool(result.status == 0)


def _chi_range(lo: np.ndarray, hi: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The least and greatest chi = v / u with u a - v b in [lo, hi], u > 0, v >= u. With t = 1/u, y = v/u:
    lo t <= a - y b <= hi t, t >= 0, y >= 1, a linear program in (y, t) for each end."""
    from scipy.optimize import linprog

    # a - y b <= hi t  ->  -b y - hi t <= -a ;  a - y b >= lo t  ->  b y + lo t <= a
    a_ub = np.vstack([np.column_stack([-b, -hi]), np.column_stack([b, lo])])
    b_ub = np.concatenate([-a, a])
    bounds = [(1.0, None), (0.0, None)]
    ends = []
    for sign in (1.0, -1.0):
        result = linprog(np.array([sign, 0.0]), A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
        if result.status == 3:  # unbounded: chi can grow without end
            ends.append(math.inf)
        else:
            ends.append(float(result.x[0]) if result.status == 0 else math.nan)
    return ends[0], ends[1]
