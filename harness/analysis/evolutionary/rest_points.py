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
    return rest_points_of(table[None])[0]


def rest_points_of(tables: np.ndarray) -> list[RestPoints]:
    """:func:`rest_points` of each of a stack of tables (draws × k × k), worked out face by face for all of them at
    once: a bootstrap's thousand tables cost about what a few do one by one."""
    draws, k = tables.shape[0], tables.shape[1]
    tie = TIE * np.maximum(1.0, np.abs(tables).max(axis=(1, 2)))
    points: list[list[RestPoint]] = [[] for _ in range(draws)]
    degenerate: list[list[tuple[int, ...]]] = [[] for _ in range(draws)]
    for size in range(1, k + 1):
        for support in combinations(range(k), size):
            x, singular = _solve(tables, support)
            for d in np.flatnonzero(singular):
                degenerate[d].append(support)
            found = np.flatnonzero(~np.isnan(x[:, 0]))
            if len(found):
                for d, point in zip(found, _classify(tables[found], support, x[found], tie[found]), strict=True):
                    points[d].append(point)
    return [RestPoints(tuple(p), tuple(g)) for p, g in zip(points, degenerate, strict=True)]


def _solve(tables: np.ndarray, support: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per table, the shares of the rest point on the face ``support`` (NaN where it has none inside the face), and
    whether the face's system is singular."""
    draws, k = tables.shape[0], tables.shape[1]
    x = np.full((draws, k), np.nan)
    s = len(support)
    index = list(support)
    if s == 1:
        x[:] = 0.0
        x[:, index[0]] = 1.0
        return x, np.zeros(draws, dtype=bool)
    system = np.zeros((draws, s + 1, s + 1))
    system[:, :s, :s] = tables[:, index][:, :, index]
    system[:, :s, s] = -1.0
    system[:, s, :s] = 1.0
    values = np.linalg.svd(system, compute_uv=False)
    singular = values[:, -1] <= SINGULAR * values[:, 0]
    safe = np.where(singular[:, None, None], np.eye(s + 1), system)
    rhs = np.zeros((draws, s + 1, 1))
    rhs[:, s] = 1.0
    solution = np.linalg.solve(safe, rhs)[:, :s, 0]
    inside = ~singular & (solution > 1e-12).all(axis=1)
    x[inside] = 0.0
    x[np.ix_(inside, np.asarray(index))] = solution[inside]
    return x, singular


@cache
def tangent_basis(k: int) -> np.ndarray:
    """An orthonormal basis (k × (k - 1)) of the simplex's tangent space ``sum dx = 0`` (read-only: shared)."""
    q, _ = np.linalg.qr(np.eye(k) - 1.0 / k)
    basis = np.ascontiguousarray(q[:, : k - 1], dtype=np.float64)
    basis.setflags(write=False)
    return basis


def jacobian(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The Jacobian of ``x_i ((A x)_i - x.A x)`` at x (or of each of a stack of tables at each x)."""
    f = np.einsum("...ij,...j->...i", table, x)
    phi = np.einsum("...i,...i->...", x, f)[..., None]
    pulled = np.einsum("...ji,...j->...i", table, x) + f  # d(x.A x)/dx
    return np.asarray(
        (f - phi)[..., :, None] * np.eye(x.shape[-1]) + x[..., :, None] * (table - pulled[..., None, :]),
        dtype=np.float64,
    )


def _classify(tables: np.ndarray, support: tuple[int, ...], x: np.ndarray, tie: np.ndarray) -> list[RestPoint]:
    k = tables.shape[1]
    if k > 1:
        basis = tangent_basis(k)
        real = -np.sort(-np.linalg.eigvals(basis.T @ jacobian(tables, x) @ basis).real, axis=1)
    else:
        real = np.zeros((len(tables), 0))
    top = real[:, 0] if k > 1 else np.full(len(tables), -np.inf)
    stability = np.where(top > tie, 1, np.where(top < -tie, -1, 0))
    verdicts = _ess(tables, support, x, tie)
    shown = {1: Stability.unstable, -1: Stability.stable, 0: Stability.undecided}
    return [RestPoint(support, x[d], real[d], shown[int(stability[d])], verdicts[d]) for d in range(len(tables))]


def _ess(tables: np.ndarray, support: tuple[int, ...], x: np.ndarray, tie: np.ndarray) -> list[Ess]:
    k = tables.shape[1]
    t = tie[:, None]
    if len(support) == 1:
        i = support[0]
        first = tables[:, i, i][:, None] - tables[:, :, i]  # a_ii - a_ji
        second = tables[:, i, :] - np.einsum("djj->dj", tables)  # a_ij - a_jj
        holds = (first > t) | ((np.abs(first) <= t) & (second > t))
        holds[:, i] = True
        return [Ess.ess if h else Ess.not_ess for h in holds.all(axis=1)]
    f = np.einsum("dij,dj->di", tables, x)
    phi = np.einsum("di,di->d", x, f)[:, None]
    outside = [j for j in range(k) if j not in support]
    better = (f[:, outside] > phi + t).any(axis=1)  # not even a Nash equilibrium: a player outside earns more
    tied = (np.abs(f[:, outside] - phi) <= t).any(axis=1)
    index = list(support)
    face = tables[:, index][:, :, index]
    basis = tangent_basis(len(support))
    top = np.linalg.eigvalsh(basis.T @ ((face + np.swapaxes(face, 1, 2)) / 2) @ basis).max(axis=1)
    out = []
    for d in range(len(tables)):
        if better[d]:
            out.append(Ess.not_ess)
        elif tied[d]:
            out.append(Ess.undecided)
        elif top[d] < -tie[d]:
            out.append(Ess.ess)
        else:
            out.append(Ess.not_ess if top[d] > tie[d] else Ess.undecided)
    return out
