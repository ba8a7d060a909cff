"""The replicator's rest points on tables whose rest points, stability and ESS are known in closed form: the
prisoner's dilemma, hawk-dove, a coordination game, rock-paper-scissors, a tie decided by Maynard Smith's second
condition, and a face with a continuum of rest points."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.evolutionary.rest_points import Ess, Stability, jacobian, rest_points, rest_points_of


def test_the_prisoners_dilemma_has_defection_as_its_only_stable_state_and_ess() -> None:
    found = rest_points(np.array([[3.0, 0.0], [5.0, 1.0]]))
    assert [p.support for p in found.points] == [(0,), (1,)]  # no mixture: ALLD always earns more
    allc, alld = found.points
    assert (allc.stability, allc.ess) == (Stability.unstable, Ess.not_ess)
    assert (alld.stability, alld.ess) == (Stability.stable, Ess.ess)
    # At a vertex i the eigenvalue towards j is a_ji - a_ii: 5 - 3 at ALLC, 0 - 1 at ALLD.
    assert allc.eigenvalues == pytest.approx([2.0]) and alld.eigenvalues == pytest.approx([-1.0])


def test_hawk_dove_has_a_stable_mixture_that_is_an_ess() -> None:
    # a = [[0, 3], [1, 2]]: hawks earn as much as doves at x = (b - d) / (b - d + c - a) = 1/2.
    found = rest_points(np.array([[0.0, 3.0], [1.0, 2.0]]))
    mix = found.on((0, 1))
    assert mix is not None and mix.shares == pytest.approx([0.5, 0.5])
    assert (mix.stability, mix.ess) == (Stability.stable, Ess.ess)
    # The replicator on the edge: x' = x (1 - x) (3 - 4x), whose derivative at 1/2 is -1/2 along the edge.
    assert mix.eigenvalues == pytest.approx([-0.5])
    assert all(found.on((i,)).stability is Stability.unstable for i in (0, 1))  # type: ignore[union-attr]


def test_a_coordination_game_has_two_stable_vertices_and_an_unstable_threshold() -> None:
    found = rest_points(np.array([[2.0, 0.0], [0.0, 1.0]]))
    threshold = found.on((0, 1))
    assert threshold is not None and threshold.shares == pytest.approx([1 / 3, 2 / 3])
    assert (threshold.stability, threshold.ess) == (Stability.unstable, Ess.not_ess)
    assert all(found.on((i,)).ess is Ess.ess for i in (0, 1))  # type: ignore[union-attr]


def test_rock_paper_scissors_has_a_centre_neither_stable_nor_unstable_at_first_order() -> None:
    rps = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    centre = rest_points(rps).on((0, 1, 2))
    assert centre is not None and centre.shares == pytest.approx([1 / 3] * 3)
    assert centre.eigenvalues == pytest.approx([0.0, 0.0], abs=1e-12)  # eigenvalues +-i/sqrt(3): a centre
    assert centre.stability is Stability.undecided and centre.ess is Ess.undecided


def test_maynard_smiths_second_condition_decides_a_tie() -> None:
    # Against 0, strategy 1 does as well (a_00 = a_10 = 1), but 0 does better against 1 than 1 does (1 > 0).
    found = rest_points(np.array([[1.0, 1.0], [1.0, 0.0]]))
    assert found.on((0,)).ess is Ess.ess  # type: ignore[union-attr]
    assert found.on((1,)).ess is Ess.not_ess  # type: ignore[union-attr]


def test_a_face_of_equal_payoffs_is_degenerate_not_a_guessed_point() -> None:
    # ALLC and TFT without noise: 3 a round whoever meets whom, so the whole edge is at rest.
    found = rest_points(np.array([[3.0, 3.0], [3.0, 3.0]]))
    assert found.degenerate == ((0, 1),) and found.on((0, 1)) is None


def test_the_jacobian_is_the_derivative_of_the_replicator() -> None:
    rng = np.random.default_rng(3)
    table, x = rng.uniform(0, 5, (4, 4)), rng.dirichlet(np.ones(4))

    def velocity(y: np.ndarray) -> np.ndarray:
        f = table @ y
        return y * (f - y @ f)

    h = 1e-6
    numeric = np.column_stack([(velocity(x + h * e) - velocity(x - h * e)) / (2 * h) for e in np.eye(4)])
    assert jacobian(table, x) == pytest.approx(numeric, abs=1e-7)


def test_a_stack_of_tables_has_the_rest_points_each_table_has_alone() -> None:
    rng = np.random.default_rng(1)
    stack = np.stack([rng.uniform(0, 5, (4, 4)) for _ in range(60)] + [np.full((4, 4), 3.0)])
    for table, found in zip(stack, rest_points_of(stack), strict=True):
        alone = rest_points(table)
        assert found.degenerate == alone.degenerate
        assert [(p.support, p.stability, p.ess) for p in found.points] == [
            (p.support, p.stability, p.ess) for p in alone.points
        ]
        for p, q in zip(found.points, alone.points, strict=True):
            assert p.shares == pytest.approx(q.shares) and p.eigenvalues == pytest.approx(q.eigenvalues)
