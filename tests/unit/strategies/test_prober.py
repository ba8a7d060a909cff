"""PROBER through real matches against scripted opponents."""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.players.strategies import make_spec
from tests.unit.strategies.versus import versus


def test_prober_exploits_an_opponent_that_did_not_retaliate() -> None:
    # the opponent answered neither probe (C in rounds 2 and 3): defect for ever
    versus("PROBER", "CCCCCC", "DC CC CC DC DC DC")


def test_prober_plays_tft_against_one_that_retaliated() -> None:
    # D in round 2 answers the probe: from round 4 on, copy the opponent's last move
    versus("PROBER", "CDCDCC", "DC CD CC CD DC CC")


# Payne & Alloui-Cros (2025), github.com/HCSS-Data-Lab/Strategic-LLM-IPD, evolutionary_PD_expanded.py,
# ProberAgent.make_move: C, D, C; from move 4, D if opponent_history[1] == opponent_history[2] == "C"
# (the opponent's moves 2 and 3), else the opponent's last move. That is PROBER(opening=CDC).


def test_prober_as_payne_codes_it_exploits_an_opponent_that_cooperated_in_rounds_2_and_3() -> None:
    # The opponent's D in round 1 does not count: rounds 2 and 3 are C, so D from round 4 whatever it plays.
    versus("PROBER", "DCCDCC", "CD DC CC DD DC DC", params={"opening": "CDC"})


def test_prober_as_payne_codes_it_plays_tft_against_one_that_answered_the_probe() -> None:
    # The opponent answers round 2's D with a D in round 3: from round 4, its last move.
    versus("PROBER", "CCDCDDC", "CC DC CD DC CD DD DC", params={"opening": "CDC"})
    # A D in round 2 (played before the probe could be answered) also rules out exploiting: the rule reads
    # rounds 2 and 3 alike. TFT from round 4.
    versus("PROBER", "CDCCC", "CC DD CC CC CC", params={"opening": "CDC"})


def test_prober_opening_is_three_moves() -> None:
    with pytest.raises(ConfigError, match=r"PROBER.opening: String should match pattern"):
        make_spec("PROBER", {"opening": "CD"})
