"""EXTORT2 (Stewart & Plotkin's Extort-2) through real matches: its vector written out from the published one, its
moves worked by hand from listed uniform draws, and its play matched move for move with the Axelrod library's
ZDExtort2 fed the same draws (tests/fixtures/axelrod_zd_extort2.json, made by
tests/axelrod_reference/generate_zd_fixture.py)."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Self

import pytest

from harness.errors import ConfigError
from harness.game.rules import PayoffMatrix
from harness.players.strategies import get_strategy, make_spec
from tests.unit.strategies.versus import build, versus

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "axelrod_zd_extort2.json"


class Draws(random.Random):
    """A stream that returns the listed uniform numbers, in order, and fails past their end."""

    def __init__(self, draws: list[float]) -> None:
        super().__init__(0)
        self.draws, self.i = list(draws), 0

    def random(self) -> float:
        assert self.i < len(self.draws), "drew more numbers than listed"
        self.i += 1
        return self.draws[self.i - 1]

    def __copy__(self) -> Self:
        twin = type(self)(self.draws)
        twin.i = self.i
        return twin


def test_extort2_vector_is_stewart_and_plotkins_at_the_conventional_payoffs() -> None:
    # Stewart & Plotkin (2012), PNAS 109:10134: Extort-2 = (8/9, 1/2, 1/3, 0) at (R, S, T, P) = (3, 0, 5, 1).
    vector = build("EXTORT2", seed=1).vector  # type: ignore[attr-defined]
    assert vector == pytest.approx((8 / 9, 1 / 2, 1 / 3, 0), abs=1e-15)
    # It enforces s_X - P = 2 (s_Y - P): p~ = (p1 - 1, p2 - 1, p3, p4) = phi_PD [(S_X - P) - 2 (S_Y - P)] with
    # S_X = (R, S, T, P) = (3, 0, 5, 1), S_Y = (R, T, S, P) = (3, 5, 0, 1), phi_PD = 1/18, in exact fractions.
    s_x, s_y, phi = (3, 0, 5, 1), (3, 5, 0, 1), Fraction(1, 18)
    assert [phi * ((x - 1) - 2 * (y - 1)) for x, y in zip(s_x, s_y, strict=True)] == [
        Fraction(8, 9) - 1,
        Fraction(1, 2) - 1,
        Fraction(1, 3),
        0,
    ]


def test_extort2_moves_follow_its_vector_and_the_draws() -> None:
    # Round 1: C. Then after CC p = 8/9: draw 0.95 -> D; after DC p = 1/3: draw 0.2 -> C; after CD p = 1/2: draw
    # 0.7 -> D; after DD p = 0: D with no draw; after DC: draw 0.5 -> D (not < 1/3); after DD: D.
    me = make_spec("EXTORT2").build(PayoffMatrix(), Draws([0.95, 0.2, 0.7, 0.5]))
    versus(me, "CCDDCD", "CC DC CD DD DC DD")


def test_extort2_is_axelrods_zdextort2() -> None:
    assert get_strategy("ZDExtort2") is get_strategy("EXTORT2")
    assert get_strategy("EXTORT2").axelrod_name == "ZDExtort2"


def test_extort2_plays_as_axelrods_zdextort2_fed_the_same_draws() -> None:
    fixture = json.loads(FIXTURE.read_text())
    assert fixture["game"] == {"R": 3, "S": 0, "T": 5, "P": 1}
    spec = make_spec("EXTORT2")
    assert list(spec.build(PayoffMatrix(), Draws([])).vector) == fixture["four_vector"]  # type: ignore[attr-defined]
    for m in fixture["matches"]:
        me = spec.build(PayoffMatrix(), Draws(m["draws"]))
        opponent = build(m["opponent"])
        played = versus(me, opponent, " ".join(a + b for a, b in zip(m["moves_a"], m["moves_b"], strict=True)))
        assert len(played.moves_a) == fixture["turns"]
    assert {m["opponent"] for m in fixture["matches"]} == {"ALLC", "ALLD", "TFT", "WSLS", "ALT", "GRIM"}


def test_extort2_refuses_a_scale_that_leaves_0_to_1() -> None:
    with pytest.raises(ConfigError, match=r"EXTORT2\(chi=2, phi=0.5\) gives cooperation probabilities"):
        make_spec("EXTORT2", {"phi": 0.5}).build(PayoffMatrix(), random.Random(0))
    with pytest.raises(ConfigError, match=r"EXTORT2.chi: Input should be greater than or equal to 1"):
        make_spec("EXTORT2", {"chi": 0.5})


def test_a_config_whose_payoffs_take_extort2_out_of_0_to_1_is_refused_before_it_runs() -> None:
    from harness.config.loading import parse_experiment

    def problems(phi: float, payoffs: list[int]) -> str:
        """The error parsing the config raises (its problems, one a line), or "" if it parses."""
        try:
            parse_experiment(
            {
                "game": {"payoff_matrix": {"C": {"C": [payoffs[0]] * 2, "D": [payoffs[1], payoffs[2]]},
                                           "D": {"C": [payoffs[2], payoffs[1]], "D": [payoffs[3]] * 2}}},
                "experiment": {"conditions": [{"agent_a": {"policy": "TFT"}, "agent_b": {"policy": "EXTORT2",
                                                                                         "phi": phi}}]},
            }
            )  # fmt: skip
        except ConfigError as exc:
            return str(exc)
        return ""

    assert problems(1 / 9, [3, 0, 5, 1]) == ""
    # R, S, T, P = 3, 0, 5, 1 and phi = 0.3: p2 = 1 - 0.3 (0.5 * 1 + 4) = -0.35.
    assert "has 1 problem" in (refused := problems(0.3, [3, 0, 5, 1]))
    assert "experiment.conditions[0].agent_b: EXTORT2(chi=2, phi=0.3) gives cooperation probabilities" in refused
    # The same scale at payoffs twice as large: p2 = 1 - (1/9)(0.5 * 2 + 8) = 0, still allowed; at three times, not.
    assert problems(1 / 9, [6, 0, 10, 2]) == "" and "EXTORT2" in problems(1 / 9, [9, 0, 15, 3])
