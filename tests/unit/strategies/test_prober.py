"""PROBER through real matches against scripted opponents."""

from __future__ import annotations

from tests.unit.strategies.versus import versus


def test_prober_exploits_an_opponent_that_did_not_retaliate() -> None:
    # the opponent answered neither probe (C in rounds 2 and 3): defect for ever
    versus("PROBER", "CCCCCC", "DC CC CC DC DC DC")


def test_prober_plays_tft_against_one_that_retaliated() -> None:
    # D in round 2 answers the probe: from round 4 on, copy the opponent's last move
    versus("PROBER", "CDCDCC", "DC CD CC CD DC CC")
