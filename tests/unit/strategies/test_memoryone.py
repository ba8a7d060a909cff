"""WSLS (Pavlov, and as Payne & Alloui-Cros code it) through real matches against scripted opponents."""

from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.players.strategies import make_spec
from tests.unit.strategies.versus import noise_flips, versus


def test_wsls_stays_after_r_or_t_and_shifts_after_p_or_s() -> None:
    # CC (R: stay C), CD (S: shift to D), DC (T: stay D), DD (P: shift to C), CC, CC
    versus("WSLS", "CDCDCC", "CC CD DC DD CC CC")


def test_wsls_recovers_mutual_cooperation_after_a_noisy_defection() -> None:
    # noise 0.2, stream 5: seat a flipped in rounds 4 and 9, seat b in round 6.
    # Round 4 DC (T): stay D; round 5 DC: stay D; round 6 DD (the script's C flipped, P): shift to C.
    assert noise_flips(5, 0.2, 9) == ("...x....x", ".....x...")
    versus("WSLS", "C", "CC CC CC DC DC DD CC CC DC", noise=0.2, noise_seed=5, intended="CCCCDDCCC")


# Payne & Alloui-Cros (2025), github.com/HCSS-Data-Lab/Strategic-LLM-IPD, evolutionary_PD_expanded.py,
# WinStayLoseShiftAgent.make_move: C first; if (own, opp) was (C,C) or (D,D), "win": repeat own move;
# else "lose": switch. That is WSLS(win=CC_or_DD).


def test_wsls_as_payne_codes_it_stays_after_cc_or_dd_and_shifts_after_cd_or_dc() -> None:
    # Round 1: C. Then after each round: CC stay C; CD shift to D; DC shift to C; CC stay C; CD shift to D;
    # DD stay D; DC shift to C.
    versus("WSLS", "CDCCDDCC", "CC CD DC CC CD DD DC CC", params={"win": "CC_or_DD"})
    # Pavlov on the same script differs after DC (stays D) and DD (shifts to C):
    # C; then CC stay C; CD shift to D; DC stay D; DC stay D; DD shift to C; CD shift to D; DC stay D.
    versus("WSLS", "CDCCDDCC", "CC CD DC DC DD CD DC DC")


def test_wsls_as_payne_codes_it_plays_tit_for_tats_moves() -> None:
    # Staying after a match and shifting after a mismatch always lands on the opponent's last move.
    for script in ("CDCCDDCC", "DDDCDCDD", "DCDCDCDC"):
        wsls = versus("WSLS", script, _tft_rounds(script), params={"win": "CC_or_DD"})
        assert wsls.moves_a == versus("TFT", script, _tft_rounds(script)).moves_a


def _tft_rounds(script: str) -> str:
    """The rounds Tit for Tat plays against ``script``, written from its rule: C, then the script's last move."""
    mine = "C" + script[:-1]
    return " ".join(m + s for m, s in zip(mine, script, strict=True))


def test_wsls_win_rule_refuses_an_unknown_name() -> None:
    with pytest.raises(ConfigError, match=r"WSLS\.win: Value error, must be one of R_or_T, CC_or_DD"):
        make_spec("WSLS", {"win": "CC"})
