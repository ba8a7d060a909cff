"""SMAJ and HMAJ through real matches against scripted opponents."""

from __future__ import annotations

from tests.unit.strategies.versus import versus


def test_soft_majority_cooperates_on_a_tie() -> None:
    # the opponent's D count against its C count before each round: 0-0, 1-0, 1-1, 2-1, 3-1
    versus("SMAJ", "DCDDC", "CD DC CD DD DC")


def test_hard_majority_defects_on_a_tie() -> None:
    # before each round: 0-0 (tie: D), 0-1, 1-1 (tie: D), 1-2, 1-3
    versus("HMAJ", "CDCCD", "DC CD DC CC CD")
