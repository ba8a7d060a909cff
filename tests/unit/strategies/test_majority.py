"""SMAJ and HMAJ through real matches against scripted opponents."""

from __future__ import annotations

import random

from harness.game.rules import PayoffMatrix
from harness.players.strategies.registry import make_spec
from tests.unit.strategies.versus import versus


def test_soft_majority_cooperates_on_a_tie() -> None:
    # the opponent's D count against its C count before each round: 0-0, 1-0, 1-1, 2-1, 3-1
    versus("SMAJ", "DCDDC", "CD DC CD DD DC")


def test_hard_majority_defects_on_a_tie() -> None:
    # before each round: 0-0 (tie: D), 0-1, 1-1 (tie: D), 1-2, 1-3
    versus("HMAJ", "CDCCD", "DC CD DC CC CD")


def test_the_running_count_answers_as_a_recount_whatever_history_it_is_handed() -> None:
    """SMAJ and HMAJ count the opponent's defections as the game's history grows; a player handed another
    list, a shorter one, or the same list grown by several rounds at once answers as a full recount would."""
    rng = random.Random(7)
    for name, rule in (
        ("SMAJ", lambda d, n: "D" if d > n - d else "C"),
        ("HMAJ", lambda d, n: "D" if d >= n - d else "C"),
    ):
        player = make_spec(name).build(PayoffMatrix.from_rstp(), random.Random(0))
        grown: list[str] = []
        for _ in range(300):
            kind = rng.random()
            if kind < 0.6:  # the match's own list, one or a few rounds longer
                grown.extend(rng.choice("CD") for _ in range(rng.randint(1, 3)))
                history = grown
            elif kind < 0.8:  # an unrelated list
                history = [rng.choice("CD") for _ in range(rng.randint(0, 30))]
            else:  # the match's list, cut shorter (a new game reusing it)
                del grown[rng.randint(0, len(grown)) :]
                history = grown
            assert player.move([], history) == rule(history.count("D"), len(history)), (name, history)
