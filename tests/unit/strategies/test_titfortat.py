"""The tit-for-tat family through real matches against scripted opponents."""

from __future__ import annotations

import random

import pytest

from harness.game.rules import PayoffMatrix
from harness.players.strategies import parse_spec
from harness.players.strategies.titfortat import default_generosity
from tests.unit.strategies.versus import noise_flips, versus


def test_tft_opens_with_c_then_copies() -> None:
    versus("TFT", "CDDCCD", "CC CD DD DC CC CD")
    versus("TFT", "DDDD", "CD DD DD DD")


def test_tft_copies_the_move_noise_left_not_the_one_intended() -> None:
    # noise 0.2, stream 3: seat a flipped in round 4, seat b in rounds 3 and 8
    assert noise_flips(3, 0.2, 9) == ("...x.....", "..x....x.")
    # TFT in seat a: the script's C turns to D in rounds 3 and 8, so TFT intends D in rounds 4
    # and 9; noise turns its round-4 D back to C.
    versus("TFT", "C", "CC CC CD CC CC CC CC CD DC", noise=0.2, noise_seed=3, intended="CCCDCCCCD")
    # TFT in seat b: its own C turns to D in rounds 3 and 8; the script's C turns to D in
    # round 4, so TFT intends (and plays) D in round 5.
    versus("TFT", "C", "CC CC DC CD DC CC CC DC CC", noise=0.2, noise_seed=3, seat="b", intended="CCCCDCCCC")


def test_stft_opens_with_d_then_copies() -> None:
    versus("STFT", "CDCCD", "DC CD DC CC CD")


def test_tf2t_needs_two_defections_in_a_row() -> None:
    versus("TF2T", "DCDCDDC", "CD CC CD CC CD CD DC")
    versus("TF2T", "DDDC", "CD CD DD DC")


def test_ttft_answers_a_defection_twice() -> None:
    versus("TTFT", "CDDCCD", "CC CD DD DC DC CD")


def test_htft_remembers_three_rounds() -> None:
    versus("HTFT", "CDCCCCC", "CC CD DC DC DC CC CC")


def test_bully_opens_d_then_does_the_opposite() -> None:
    versus("BULLY", "CDDCC", "DC DD CD CC DC")


def test_gtft_default_generosity_is_axelrods() -> None:
    assert default_generosity(PayoffMatrix()) == pytest.approx(1 / 3)
    # (R, S, T, P) = (3, 0, 4, 1): min(1 - 1/3, 2/3) = 2/3
    assert default_generosity(PayoffMatrix.from_rstp(R=3, S=0, T=4, P=1)) == pytest.approx(2 / 3)
    # R = S: 1 - (T-R)/(R-S) is undefined, so no forgiveness
    assert default_generosity(PayoffMatrix.from_rstp(R=3, S=3, T=5, P=1)) == 0.0


def test_gtft_never_defects_unprovoked_and_forgives_at_its_rate() -> None:
    versus("GTFT", "CCCCC", "CC CC CC CC CC")
    versus("GTFT", "DDDDD", "CD DD DD DD DD", params={"generous_prob": 0.0})
    versus("GTFT", "DDDDD", "CD CD CD CD CD", params={"generous_prob": 1.0})


def test_gtft_draws_only_after_a_defection() -> None:
    # Random(2) draws 0.956 0.948 0.057 0.085 0.836 ...; after a D, C when below 1/3
    versus("GTFT", "DDDDDD", "CD DD DD CD CD DD", seed=2)
    # rounds 3 (after the script's C) draws nothing, so round 4 takes the second draw
    versus("GTFT", "DCDDC", "CD DC CD DD CC", seed=2)


def test_gtft_takes_its_default_from_the_payoffs() -> None:
    # (3, 0, 4, 1): forgiveness 2/3. Random(0) draws 0.844 0.758 0.421: D, D, then C
    game = PayoffMatrix.from_rstp(R=3, S=0, T=4, P=1)
    versus("GTFT", "DDDD", "CD DD DD CD", seed=0, game=game)


def test_gtft_under_noise_keeps_its_stream_apart_from_the_noise() -> None:
    # noise 0.2, stream 1: seat a flipped in rounds 1 and 5, seat b in rounds 5 and 7.
    # GTFT's own stream, Random(1), draws 0.134 (below 1/3: forgive) then 0.847 (punish).
    assert noise_flips(1, 0.2, 8) == ("x...x...", "....x.x.")
    versus("GTFT", "C", "DC CC CC CC DD CC CD DC", seed=1, noise=0.2, noise_seed=1, intended="CCCCCCCD")


def test_gtft_as_payne_codes_it_forgives_with_probability_one_tenth() -> None:
    # Payne & Alloui-Cros (2025), evolutionary_PD_expanded.py, GenerousTFTAgent(forgiveness_prob=0.1): after an
    # opponent's D, C if random.random() < 0.1, else D; that is GTFT(p=0.1), typed as such.
    # Random(4) draws 0.236 0.103 0.396 0.155 0.067 0.402: only 0.067 is below 0.1 (forgive in round 6);
    # with the default 1/3, 0.236, 0.103, 0.155 and 0.067 forgive (rounds 2, 3, 5, 6).
    versus(parse_spec("GTFT(p=0.1)").build(PayoffMatrix(), random.Random(4)), "DDDDDDD", "CD DD DD DD DD CD DD")
    versus("GTFT", "DDDDDDD", "CD CD CD DD CD CD DD", seed=4)
