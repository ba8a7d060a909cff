"""The strategy registry: names, cards, parameters; and the long-run rates of the random strategies.

Move-by-move behaviour is in ``tests/unit/strategies/`` (one file per family, plus the
contract every registered strategy is held to).
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from harness.errors import ConfigError, UnknownStrategyError
from harness.game.rules import PayoffMatrix
from harness.players.strategies import STRATEGIES, known_names, make_spec
from harness.players.strategies.simple import RandomPlayer


def test_gtft_forgives_at_its_rate() -> None:
    player = make_spec("GTFT", {"generous_prob": 0.1}).build(PayoffMatrix(), random.Random(7))
    moves = Counter(player.move(["C"], ["D"]) for _ in range(20_000))
    assert moves["C"] / 20_000 == pytest.approx(0.1, abs=0.01)


def test_rand_cooperates_with_probability_p() -> None:
    player = make_spec("RAND", {"p": 0.8}).build(PayoffMatrix(), random.Random(3))
    moves = Counter(player.move([], []) for _ in range(20_000))
    assert moves["C"] / 20_000 == pytest.approx(0.8, abs=0.01)


def test_every_strategy_has_a_card() -> None:
    for name, cls in STRATEGIES.items():
        assert name == name.upper() == cls.name
        assert cls.display_name and cls.description and cls.emoji
    assert STRATEGIES["ALLC"].emoji == "🕊️"
    assert STRATEGIES["ALLD"].emoji == "😈"
    assert STRATEGIES["TFT"].emoji == "🪞"
    assert STRATEGIES["GRIM"].emoji == "💀"


def test_listing_order_puts_the_classic_panel_first() -> None:
    assert known_names()[:10] == ["ALLC", "ALLD", "TFT", "GRIM", "GTFT", "WSLS", "TF2T", "STFT", "ALT", "RAND"]
    assert sorted(known_names()) == sorted(STRATEGIES)


def test_unknown_strategy_lists_the_known_ones() -> None:
    with pytest.raises(UnknownStrategyError, match="known strategies: ALLC, ALLD, TFT"):
        make_spec("TIT4TAT")


def test_bad_parameters_are_named() -> None:
    with pytest.raises(ConfigError, match="GTFT has no parameter 'forgiveness'"):
        make_spec("GTFT", {"forgiveness": 0.3})
    with pytest.raises(ConfigError, match="generous_prob"):
        make_spec("GTFT", {"generous_prob": 1.5})
    with pytest.raises(ConfigError, match=r"DONCE\.round: Input should be greater than or equal to 1"):
        make_spec("DONCE", {"round": 0})
    with pytest.raises(ConfigError, match="RAND has no parameter 'q' \\(parameters: p\\)"):
        make_spec("RAND", {"q": 0.3})


def test_parameters_round_trip_under_their_names() -> None:
    assert make_spec("RAND", {"p": 0.3}).params_dict() == {"p": 0.3}
    assert make_spec("GTFT").params_dict() == {}  # the payoff-derived default is not a setting


def test_a_strategy_refuses_another_strategys_parameters() -> None:
    params = make_spec("DONCE", {"round": 2}).params
    with pytest.raises(TypeError, match="RandomPlayer takes parameters of type RandomParams, not DefectOnceParams"):
        RandomPlayer(params, PayoffMatrix(), random.Random(0))


def test_names_are_case_insensitive() -> None:
    assert make_spec("tft").name == "TFT"
    assert make_spec(" gtft ").name == "GTFT"


def test_a_strategy_written_on_one_line() -> None:
    from harness.players.strategies import parse_spec, spec_label

    assert parse_spec("tft") == make_spec("TFT")
    assert parse_spec(" GTFT(p=0.3) ") == make_spec("GTFT", {"generous_prob": 0.3})
    assert parse_spec("RAND(p=0.7)") == make_spec("RAND", {"p": 0.7})
    assert parse_spec("DONCE(round = 3)") == make_spec("DONCE", {"round": 3})
    assert parse_spec("GTFT()") == make_spec("GTFT")
    # the label keeps only settings that differ from the default, under the name a config uses; it reads back
    for text, label in [
        ("gtft(p=0.3)", "GTFT(generous_prob=0.3)"),
        ("RAND(p=0.5)", "RAND"),
        ("RAND(p=1)", "RAND(p=1)"),
    ]:
        assert spec_label(parse_spec(text)) == label
        assert parse_spec(label) == parse_spec(text)
    for bad, message in [
        ("TFT(", "is not a strategy as written on one line"),
        ("GTFT(p)", "must be key=value pairs separated by commas"),
        ("GTFT(p=0.1,p=0.2)", "gives the parameter 'p' twice"),
        ("GTFT(p=true)", "GTFT.p: Input should be a valid number"),
        ("GTFT(p=2)", "less than or equal to 1"),
        ("RAND(p=x)", "RAND.p: Input should be a valid number"),
    ]:
        with pytest.raises(ConfigError, match=re.escape(message)):
            parse_spec(bad)
    with pytest.raises(UnknownStrategyError):
        parse_spec("TIT4TAT(p=1)")


def test_gtft_takes_p_for_its_generosity_and_keeps_its_name() -> None:
    spec = make_spec("GTFT", {"p": 0.2})
    assert spec.params_dict() == {"generous_prob": 0.2}
    assert spec.params.model_dump(by_alias=True) == {"generous_prob": 0.2}  # condition names do not change
    with pytest.raises(ConfigError, match=re.escape("GTFT has no parameter 'q' (parameters: generous_prob (or p))")):
        make_spec("GTFT", {"q": 0.3})
