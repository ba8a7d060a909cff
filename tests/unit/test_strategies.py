"""Every strategy, move by move, against scripted opponents (Axelrod's versus_test style)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from harness.agents.strategies import STRATEGIES, make_spec
from harness.agents.strategies.titfortat import default_generosity
from harness.errors import ConfigError, UnknownStrategyError
from harness.game import PayoffMatrix
from tests.conftest import versus


def test_allc_and_alld_ignore_the_opponent() -> None:
    versus("ALLC", "DDCDC", "CCCCC")
    versus("ALLD", "CCCDC", "DDDDD")


def test_tft_opens_with_c_then_copies() -> None:
    versus("TFT", "CDDCCD", "CCDDCC")
    versus("TFT", "DDDD", "CDDD")


def test_stft_opens_with_d_then_copies() -> None:
    versus("STFT", "CDCCD", "DCDCC")


def test_grim_never_forgives() -> None:
    versus("GRIM", "CCDCCC", "CCCDDD")
    versus("GRIM", "CCCCC", "CCCCC")


def test_tf2t_needs_two_defections_in_a_row() -> None:
    versus("TF2T", "DCDCDDC", "CCCCCCD")
    versus("TF2T", "DDDC", "CCDD")


def test_ttft_answers_a_defection_twice() -> None:
    versus("TTFT", "DCCCDC", "CDDCCD")


def test_htft_remembers_three_rounds() -> None:
    versus("HTFT", "DCCCCC", "CDDDCC")


def test_wsls_stays_after_r_or_t_and_shifts_after_p_or_s() -> None:
    # rounds: CC (R: stay C), CD (S: shift to D), DC (T: stay D), DD (P: shift to C), CC
    versus("WSLS", "CDCDCC", "CCDDCC")


def test_alt_alternates_from_c() -> None:
    versus("ALT", "DDDDD", "CDCDC")


def test_bully_opens_d_then_does_the_opposite() -> None:
    versus("BULLY", "CDDCC", "DDCCD")


def test_prober_exploits_a_non_retaliator_and_plays_tft_otherwise() -> None:
    versus("PROBER", "CCCCCC", "DCCDDD")
    versus("PROBER", "CDCDCC", "DCCCDC")


def test_majorities_follow_the_opponents_majority() -> None:
    versus("SMAJ", "DCDDC", "CDCDD")
    versus("HMAJ", "CDCCD", "DCDCC")


def test_gradual_punishes_the_nth_defection_n_times_then_calms() -> None:
    # 1st defection (round 2) -> 1 D, then C, C; 2nd defection (round 6) -> 2 Ds, then C, C.
    versus("GRADUAL", "CDCCCDCCCCC", "CCDCCCDDCCC")
    # A defection during the calm is not answered, but counts: the next punishment (after the
    # opponent's 3rd defection, in round 7) is 3 Ds long.
    versus("GRADUAL", "DDCCCCDCCC", "CDCCCCCDDD")


def test_gtft_default_generosity_is_axelrods() -> None:
    assert default_generosity(PayoffMatrix()) == pytest.approx(1 / 3)
    # (R, S, T, P) = (3, 0, 4, 1): min(1 - 1/3, 2/3) = 2/3
    assert default_generosity(PayoffMatrix.from_rstp(R=3, S=0, T=4, P=1)) == pytest.approx(2 / 3)


def test_gtft_forgives_at_its_rate_and_never_defects_unprovoked() -> None:
    versus("GTFT", "CCCCC", "CCCCC")
    versus("GTFT", "DDDDD", "CDDDD", params={"generous_prob": 0.0})
    versus("GTFT", "DDDDD", "CCCCC", params={"generous_prob": 1.0})
    player = make_spec("GTFT", {"generous_prob": 0.1}).build(PayoffMatrix(), random.Random(7))
    moves = Counter(player.move(["C"], ["D"]) for _ in range(20_000))
    assert moves["C"] / 20_000 == pytest.approx(0.1, abs=0.01)


def test_rand_cooperates_with_probability_p() -> None:
    player = make_spec("RAND", {"p": 0.8}).build(PayoffMatrix(), random.Random(3))
    moves = Counter(player.move([], []) for _ in range(20_000))
    assert moves["C"] / 20_000 == pytest.approx(0.8, abs=0.01)
    versus("RAND", "CCCC", "CCCC", params={"p": 1.0})
    versus("RAND", "CCCC", "DDDD", params={"p": 0.0})


def test_donce_defects_in_its_round_only_whatever_the_opponent_does() -> None:
    versus("DONCE", "CCCCC", "DCCCC")  # default: round 1
    versus("DONCE", "DDDDD", "DCCCC")
    versus("DONCE", "DCDCD", "CCDCC", params={"round": 3})
    versus("DONCE", "CCC", "CCC", params={"round": 4})  # a round the game never reaches: it never defects
    with pytest.raises(ConfigError, match=r"DONCE\.round: Input should be greater than or equal to 1"):
        make_spec("DONCE", {"round": 0})


def test_every_strategy_has_a_card() -> None:
    for name, cls in STRATEGIES.items():
        assert name == name.upper()
        assert cls.display_name and cls.description and cls.emoji
    assert STRATEGIES["ALLC"].emoji == "🕊️"
    assert STRATEGIES["ALLD"].emoji == "😈"
    assert STRATEGIES["TFT"].emoji == "🪞"
    assert STRATEGIES["GRIM"].emoji == "💀"


def test_unknown_strategy_lists_the_known_ones() -> None:
    with pytest.raises(UnknownStrategyError, match="known strategies: ALLC, ALLD, TFT"):
        make_spec("TIT4TAT")


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ConfigError, match="GTFT has no parameter 'forgiveness'"):
        make_spec("GTFT", {"forgiveness": 0.3})
    with pytest.raises(ConfigError, match="generous_prob"):
        make_spec("GTFT", {"generous_prob": 1.5})


def test_names_are_case_insensitive() -> None:
    assert make_spec("tft").name == "TFT"
