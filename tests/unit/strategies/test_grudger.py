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


# Payne & Alloui-Cros (2025), github.com/HCSS-Data-Lab/Strategic-LLM-IPD, evolutionary_PD_expanded.py,
# GradualAgent.make_move: C first. While retaliating, count the retaliation down and play D while it is
# above 0, then C once ("peace") and stop retaliating; the opponent's moves are not looked at meanwhile.
# Otherwise an opponent D adds 1 to defect_count and starts a retaliation of defect_count, played D now.
# That is GRADUAL(peace_moves=1, counts_all_defections=false).
PAYNE_GRADUAL = {"peace_moves": 1, "counts_all_defections": False}


def test_gradual_as_payne_codes_it_punishes_n_times_then_offers_one_peace_move() -> None:
    # 1st defection (round 2) -> D in round 3, peace C in round 4; 2nd defection (round 6) -> D, D in
    # rounds 7-8, peace C in round 9; then C while the opponent cooperates.
    versus("GRADUAL", "CDCCCDCCCC", "CC CD DC CC CC CD DC DC CC CC", params=PAYNE_GRADUAL)


def test_gradual_as_payne_codes_it_ignores_defections_during_a_punishment() -> None:
    # The 2nd defection (round 6) starts 2 Ds (rounds 7-8); the opponent's Ds in rounds 7 and 8 are played
    # while it retaliates: neither answered nor counted. Peace C in round 9. The opponent's D in round 9
    # (during the peace move) is read in round 10: counted as the 3rd, so 3 Ds (rounds 10-12), peace C (13).
    versus(
        "GRADUAL",
        "CDCCCDDDDCCCCC",
        "CC CD DC CC CC CD DD DD CD DC DC DC CC CC",
        params=PAYNE_GRADUAL,
    )
    # Axelrod's Gradual on the same script counts the Ds of rounds 7, 8 and 9 but answers none of them:
    # they are read in rounds 8 (its 2nd D), 9 and 10 (its two peace moves). Then C to the end.
    versus("GRADUAL", "CDCCCDDDDCCCCC", "CC CD DC CC CC CD DD DD CD CC CC CC CC CC")


def test_gradual_settings_change_one_thing_each() -> None:
    # The opponent defects in round 2 (1 D back, round 3), in round 6 (2 Ds back, rounds 7-8), during that
    # punishment (rounds 7 and 8), and in round 10, read in round 11 in each case below.
    # One peace move, every defection counted: rounds 7 and 8 count, so round 10's D is the 5th:
    # peace C in round 9, C in round 10 (round 9 was C), 5 Ds in rounds 11-15, peace C in round 16.
    versus(
        "GRADUAL",
        "CDCCCDDDCDCCCCCC",
        "CC CD DC CC CC CD DD DD CC CD DC DC DC DC DC CC",
        params={"peace_moves": 1},
    )
    # Two peace moves (rounds 9 and 10), only punished defections counted: round 10's D is the 3rd:
    # 3 Ds in rounds 11-13, peace Cs in rounds 14 and 15.
    versus(
        "GRADUAL",
        "CDCCCDDDCDCCCCCC",
        "CC CD DC CC CC CD DD DD CC CD DC DC DC CC CC CC",
        params={"counts_all_defections": False},
    )
