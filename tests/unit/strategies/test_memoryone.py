"""WSLS through real matches against scripted opponents."""

from __future__ import annotations

from tests.unit.strategies.versus import noise_flips, versus


def test_wsls_stays_after_r_or_t_and_shifts_after_p_or_s() -> None:
    # CC (R: stay C), CD (S: shift to D), DC (T: stay D), DD (P: shift to C), CC, CC
    versus("WSLS", "CDCDCC", "CC CD DC DD CC CC")


def test_wsls_recovers_mutual_cooperation_after_a_noisy_defection() -> None:
    # noise 0.2, stream 5: seat a flipped in rounds 4 and 9, seat b in round 6.
    # Round 4 DC (T): stay D; round 5 DC: stay D; round 6 DD (the script's C flipped, P): shift to C.
    assert noise_flips(5, 0.2, 9) == ("...x....x", ".....x...")
    versus("WSLS", "C", "CC CC CC DC DC DD CC CC DC", noise=0.2, noise_seed=5, intended="CCCCDDCCC")
