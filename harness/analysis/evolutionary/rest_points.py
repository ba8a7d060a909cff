"""The rest points of the replicator dynamics on the measured table, their stability, and the ESS check.

``x_i' = x_i ((A x)_i - x.A x)`` on the simplex, A the table of payoffs per round (the dynamics of
:mod:`harness.evolution.replicator` at w = 1; w only rescales time). On every face (a support S, a non-empty set of
players) an isolated rest point is where every player of S earns the same: ``A_SS x_S = c 1``, ``sum x_S = 1``,
every ``x_i > 0`` on S; a face whose system is singular has a line of rest points or none, and is reported as
degenerate rather than guessed. Vertices (one player) are always rest points.

Stability: the eigenvalues of the Jacobian restricted to the simplex (its tangent space ``sum dx = 0``, which the
Jacobian maps to itself on the simplex): every real part negative, asymptotically stable; one positive, unstable;
else undecided at first order.

ESS (Maynard Smith & Price 1973): for a vertex i, Maynard Smith's conditions against every other player j as the
mutant, ``a_ii > a_ji``, or ``a_ii = a_ji`` and ``a_ij > a_jj``. For a mixed rest point x with support S, Haigh's
test (1975): x is a Nash equilibrium (no player outside S earns more than x.Ax) and ``z.A z < 0`` for every
``z != 0`` with support in S and ``sum z = 0`` (A's symmetric part negative definite on that face). When a player
outside S earns exactly x.Ax the test needs more than that and the answer is left undecided. Equal means within
:data:`TIE`, relative to the table's largest payoff.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from itertools import combinations

import numpy as np

TIE = 1e-9
SINGULAR = 1e-10  # smallest singular value, relative to the largest, of a face's system still solved


class Stability(StrEnum):
    stable = "stable"
    unstable = "unstable"
    undecided = "undecided"


class Ess(StrEnum):
    ess = "ESS"
    not_ess = "not ESS"
    undecided = "undecided"


@dataclass(frozen=True, slots=True)
class RestPoint:
    """A rest point: its support (player indices), its shares (over all players), the real parts of its
    eigenvalues on the simplex, its stability and its ESS verdict."""

    support: tuple[int, ...]
    shares: np.ndarray
    eigenvalues: np.ndarray
    stability: Stability
    ess: Ess


@dataclass(frozen=True, slots=True)
class RestPoints:
    points: tuple[RestPoint, ...]
    degenerate: tuple[tuple[int, ...], ...]  # faces whose system is singular (a continuum, or nothing)

    def on(self, support: tuple[int, ...]) -> RestPoint | None:
        return next((p for p in self.points if p.support == support), None)


def rest_points(table: np.ndarray) -> RestPoints:
    """Every isolated rest point of the replicator on the k×k ``table``, face by face (2^k - 1 faces)."""
    k = len(table)
    tie = TIE * max(1.0, float(np.abs(table).max()))
    points, degenerate = [], []
    for size in range(1, k + 1):
        for support in combinations(range(k), size):
            x = _solve(table, support)
            if x is SINGULAR_FACE:
                degenerate.append(support)
            elif x is not None:
                points.append(_classify(table, support, x, tie))
    return RestPoints(tuple(points), tuple(degenerate))


SINGULAR_FACE = np.full(0, np.nan)
"""What :func:`_solve` returns for a face whose system is singular."""


def _solve(table: np.ndarray, support: tuple[int, ...]) -> np.ndarray | None:
    """The shares of the rest point on the face ``support``; None if it has none inside the face;
    :data:`SINGULAR_FACE` if the face's system is singular."""
    s = len(support)
    x = np.zeros(len(table))
    if s == 1:
        x[support[0]] = 1.0
        return x
    system = np.zeros((s + 1, s + 1))
    index = list(support)
    system[:s, :s] = table[index][:, index]
    system[:s, s] = -1.0
    system[s, :s] = 1.0
    values = np.linalg.svd(system, compute_uv=False)
    if values[-1] <= SINGULAR * values[0]:
        return SINGULAR_FACE
    rhs = np.zeros(s + 1)
    rhs[s] = 1.0
    solution = np.linalg.solve(system, rhs)[:s]
    if (solution <= 1e-12).any():
        return None
    x[list(support)] = solution
    return x


@cache
def tangent_basis(k: int) -> np.ndarray:
    """An orthonormal basis (k × (k - 1)) of the simplex's tangent space ``sum dx = 0`` (read-only: shared)."""
    q, _ = np.linalg.qr(np.eye(k) - 1.0 / k)
    basis = np.ascontiguousarray(q[:, : k - 1], dtype=np.float64)
    basis.setflags(write=False)
    return basis


def jacobian(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The Jacobian of ``x_i ((A x)_i - x.A x)`` at x."""
    f = table @ x
    phi = x @ f
    return np.asarray(np.diag(f - phi) + np.outer(x, np.ones(len(x))) * (table - (table.T @ x + f)), dtype=np.float64)


def _classify(table: np.ndarray, support: tuple[int, ...], x: np.ndarray, tie: float) -> RestPoint:
    k = len(table)
    if k > 1:
        basis = tangent_basis(k)
        real = np.sort(np.linalg.eigvals(basis.T @ jacobian(table, x) @ basis).real)[::-1]
    else:
        real = np.zeros(0)
    if len(real) and real[0] > tie:
        stability = Stability.unstable
    elif not len(real) or real[0] < -tie:
        stability = Stability.stable
    else:
        stability = Stability.undecided
    return RestPoint(support, x, real, stability, _ess(table, support, x, tie))


def _ess(table: np.ndarray, support: tuple[int, ...], x: np.ndarray, tie: float) -> Ess:
    k = len(table)
    if len(support) == 1:
        i = support[0]
        for j in range(k):
            first = table[i, i] - table[j, i]
            if j == i or first > tie or (abs(first) <= tie and table[i, j] - table[j, j] > tie):
                continue
            return Ess.not_ess
        return Ess.ess
    f = table @ x
    phi = x @ f
    outside = [j for j in range(k) if j not in support]
    if any(f[j] > phi + tie for j in outside):
        return Ess.not_ess  # not even a Nash equilibrium: a player outside earns more
    if any(abs(f[j] - phi) <= tie for j in outside):
        return Ess.undecided
    s = len(support)
    face = table[list(support)][:, list(support)]
    basis = tangent_basis(s)
    top = float(np.linalg.eigvalsh(basis.T @ ((face + face.T) / 2) @ basis).max())
    if top < -tie:
        return Ess.ess
    return Ess.not_ess if top > tie else Ess.undecided
