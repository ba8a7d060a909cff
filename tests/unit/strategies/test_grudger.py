"""GRIM and GRADUAL through real matches against scripted opponents."""

from __future__ import annotations

from tests.unit.strategies.versus import noise_flips, versus


def test_grim_never_forgives() -> None:
    versus("GRIM", "CCDCCC", "CC CC CD DC DC DC")
    versus("GRIM", "CCCCC", "CC CC CC CC CC")


def test_grim_is_triggered_by_a_defection_noise_made() -> None:
    # noise 0.2, stream 4: seat a flipped in rounds 3 and 7, seat b in rounds 1, 2 and 7.
    # The script never defects, but noise makes its first move D: GRIM defects from round 2
    # on, and plays C only where noise flips its own D.
    assert noise_flips(4, 0.2, 8) == ("..x...x.", "xx....x.")
    versus("GRIM", "C", "CD DD CC DC DC DC CD DC", noise=0.2, noise_seed=4, intended="CDDDDDDD")


def test_gradual_punishes_the_nth_defection_n_times_then_calms() -> None:
    # 1st defection (round 2) -> 1 D, then C, C; 2nd defection (round 6) -> 2 Ds, then C, C.
    versus("GRADUAL", "CDCCCDCCCCC", "CC CD DC CC CC CD DC DC CC CC CC")


def test_gradual_counts_a_defection_made_during_the_calm() -> None:
    # The 2nd defection (round 4) comes during the calm: not answered, but counted, so the
    # 3rd (round 6) is punished with 3 Ds (rounds 7-9), then C, C.
    versus("GRADUAL", "CDCDCDCCCCC", "CC CD DC CD CC CD DC DC DC CC CC")
