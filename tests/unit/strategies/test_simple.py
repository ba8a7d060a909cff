"""ALLC, ALLD, ALT, RAND and DONCE through real matches against scripted opponents."""

from __future__ import annotations

from tests.unit.strategies.versus import noise_flips, versus


def test_allc_and_alld_ignore_the_opponent() -> None:
    versus("ALLC", "DDCDC", "CD CD CC CD CC")
    versus("ALLD", "CCCDC", "DC DC DC DD DC")


def test_allc_under_noise_intends_c_and_plays_what_noise_leaves() -> None:
    # noise 0.2, stream 1: seat a (ALLC) flipped in rounds 1 and 5, seat b in rounds 5, 7 and 10
    assert noise_flips(1, 0.2, 10) == ("x...x.....", "....x.x..x")
    versus("ALLC", "C", "DC CC CC CC DD CC CD CC CC CD", noise=0.2, noise_seed=1, intended="CCCCCCCCCC")


def test_alt_alternates_from_c() -> None:
    versus("ALT", "DDDDD", "CD DD CD DD CD")
    versus("ALT", "C", "CC DC CC DC", seat="b")


def test_alt_answers_its_own_move_as_played_not_as_intended() -> None:
    # noise 0.2, stream 2: both seats flipped in round 2, seat b again in round 6. ALT intends
    # D in round 2 but plays C, so it intends D again in round 3.
    assert noise_flips(2, 0.2, 8) == (".x......", ".x...x..")
    versus("ALT", "C", "CC CD DC CC DC CD DC CC", noise=0.2, noise_seed=2, intended="CDDCDCDC")


def test_rand_follows_its_stream() -> None:
    # Random(1) draws 0.134 0.847 0.764 0.255 0.495 0.450 0.652 0.789; C when below p = 0.5
    versus("RAND", "D", "CD DD DD CD CD CD DD DD", seed=1)
    # Random(0) draws 0.844 0.758 0.421 0.259 0.511 0.405 0.784 0.303; C when below p = 0.3
    versus("RAND", "C", "DC DC DC CC DC DC DC DC", params={"p": 0.3}, seed=0)


def test_rand_at_p_one_or_zero_never_draws() -> None:
    versus("RAND", "CDCD", "CC CD CC CD", params={"p": 1.0})
    versus("RAND", "CDCD", "DC DD DC DD", params={"p": 0.0})


def test_donce_defects_in_its_round_only_whatever_the_opponent_does() -> None:
    versus("DONCE", "CCCCC", "DC CC CC CC CC")  # default: round 1
    versus("DONCE", "DDDDD", "DD CD CD CD CD")
    versus("DONCE", "DCDCD", "CD CC DD CC CD", params={"round": 3})
    versus("DONCE", "CCC", "CC CC CC", params={"round": 4})  # a round the game never reaches


def test_donce_counts_rounds_not_moves_under_noise() -> None:
    # noise 0.2, stream 4: seat a flipped in rounds 3 and 7, seat b in rounds 1, 2 and 7
    assert noise_flips(4, 0.2, 8) == ("..x...x.", "xx....x.")
    versus("DONCE", "C", "CD CD CC CC CC CC DD CC", params={"round": 3}, noise=0.2, noise_seed=4, intended="CCDCCCCC")
