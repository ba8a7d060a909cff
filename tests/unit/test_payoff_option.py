"""``--payoff-matrix T,R,P,S`` or a preset: read in the order it is written, refused in one paragraph."""

from __future__ import annotations

import pytest

from harness.config.presets.payoffs import PAYOFF_PRESETS, payoff_matrix_of, payoff_matrix_option, rstp
from harness.errors import ConfigError
from harness.game.rules import PayoffMatrix


def test_four_numbers_are_temptation_reward_punishment_sucker() -> None:
    m = payoff_matrix_option(" 7, 4 ,1,-2")
    assert (m.T, m.R, m.P, m.S) == (7, 4, 1, -2)
    assert m.to_mapping() == {"C": {"C": [4, 4], "D": [-2, 7]}, "D": {"C": [7, -2], "D": [1, 1]}}
    assert m.warnings() == []


def test_presets_are_the_dashboards_two_games() -> None:
    assert payoff_matrix_option("axelrod") == PayoffMatrix()  # PDBench's default game
    trust = payoff_matrix_option("Trust")
    cost, gift = 1, 3  # The Evolution of Trust: cooperating costs you 1 coin and gives the other 3
    assert (gift - cost, -cost, gift, 0) == (trust.R, trust.S, trust.T, trust.P)
    assert {name: rstp(m) for name, m in PAYOFF_PRESETS.items()} == {"axelrod": "5,3,1,0", "trust": "3,2,0,-1"}


def test_a_game_that_is_not_a_dilemma_is_read_and_warned_of_by_its_rules() -> None:
    assert payoff_matrix_option("1,2,3,4").warnings() == [
        "T > R > P > S does not hold (T=1, R=2, P=3, S=4)",
        "2R > T + S does not hold (2R=4, T+S=5): taking turns to exploit pays more than mutual cooperation",
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("5,3,1", "--payoff-matrix '5,3,1': give four numbers T,R,P,S"),
        ("prisoner", "or a preset: axelrod (5,3,1,0), trust (3,2,0,-1)"),
        ("5,3,x,0", "'x' is not a number"),
        ("5,3,inf,0", "--payoff-matrix '5,3,inf,0': P (punishment) = inf is not a finite number"),
        ("1e16,3,1,0", "T (temptation) = 1e+16 is too large: a payoff's size must stay below 1e+15"),
    ],
)
def test_bad_matrices_are_refused(text: str, says: str) -> None:
    with pytest.raises(ConfigError, match=None) as info:
        payoff_matrix_option(text)
    assert says in str(info.value)


def test_the_dashboards_four_inputs_are_checked_as_the_option_is() -> None:
    assert payoff_matrix_of(3, 2, 0, -1, option="Payoffs") == PAYOFF_PRESETS["trust"]
    with pytest.raises(ConfigError, match=r"^Payoffs: S \(sucker's payoff\) = -2e\+15 is too large"):
        payoff_matrix_of(5, 3, 1, -2e15, option="Payoffs")
    with pytest.raises(ConfigError, match=r"^Payoffs: R \(reward\) = nan is not a finite number"):
        payoff_matrix_of(5, float("nan"), 1, 0, option="Payoffs")
