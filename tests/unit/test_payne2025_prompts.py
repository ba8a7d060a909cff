"""The payne2025 templates (prompts/suites/payne2025/) show the facts Payne & Alloui-Cros's protocol fixes
(docs/protocols/payne2025.md): the last 20 rounds as (own move, opponent's move) pairs and the count of rounds
played, the per-round end probability as a whole percent, the reply's layout (reasoning, then the move alone on
the last line); and none of what it withholds: scores, per-round points, who the opponent is, the 30-round cap.

The suite is not registered yet, so its prompt settings are written here as the protocol fixes them."""

from __future__ import annotations

import re

import pytest

from harness.game.horizon import GeometricHorizon
from harness.players.model.prompts.builder import PromptBuilder, PromptSettings
from tests.unit.test_prompts import make_view

PAYNE_PROMPTS = {
    "system_template": "suites/payne2025/system.j2",
    "round_template": "suites/payne2025/round.j2",
    "history_window": 20,  # evolutionary_PD_expanded.py: own_history[-20:]
}
CAP = 30  # max_rounds=30 in their code; never told to the model


def builder() -> PromptBuilder:
    return PromptBuilder(PromptSettings.model_validate(PAYNE_PROMPTS))


def render(own: str, opp: str, stop_prob: float = 0.25, seat: str = "a") -> tuple[str, str]:
    system, user = builder().render(make_view(own, opp, seat=seat, horizon=GeometricHorizon(stop_prob, CAP)))
    assert (system["role"], user["role"]) == ("system", "user")
    return system["content"], user["content"]


# 23 rounds played. Rounds 1-3 are (D, D), (D, C), (D, D); rounds 4-22 (C, C); round 23 (C, D). The window of 20
# shows rounds 4 to 23: nineteen (C, C) then (C, D), and none of the first three rounds' Ds of ours.
# Scores at 5/3/1/0: ours 1 + 5 + 1 + 19 * 3 + 0 = 64, theirs 1 + 0 + 1 + 19 * 3 + 5 = 64.
OWN = "DDD" + "C" * 20
OPP = "DCD" + "C" * 19 + "D"


def test_the_window_shows_the_last_20_pairs_then_the_count_of_all_rounds_played() -> None:
    _, user = render(OWN, OPP)
    pairs = re.findall(r"\(([CD]), ([CD])\)", user)
    assert pairs == [("C", "C")] * 19 + [("C", "D")]
    assert "last 20 rounds" in user
    assert "Rounds played in all: 23." in user


def test_the_first_round_shows_no_pairs_and_a_count_of_zero() -> None:
    _, user = render("", "")
    assert re.findall(r"\([CD], [CD]\)", user) == []
    assert "Rounds played in all: 0." in user


@pytest.mark.parametrize(("stop_prob", "told"), [(0.10, "10%"), (0.25, "25%"), (0.75, "75%")])
def test_the_chance_that_the_match_ends_after_a_round_is_told_as_a_whole_percent(stop_prob: float, told: str) -> None:
    system, _ = render(OWN, OPP, stop_prob)
    assert f"stops after any given round is {told}." in system


def test_no_scores_points_per_round_or_cap_are_shown_only_the_rules_payoffs() -> None:
    system, user = render(OWN, OPP)
    assert not re.search(r"point|score|total", user, re.IGNORECASE)
    assert "64" not in system + user
    assert str(CAP) not in system + user
    # the rules' payoff lines, at 5/3/1/0, are the only numbers besides the percent
    assert re.findall(r"you get (\d) points? and they get (\d)", system) == [
        ("3", "3"),
        ("0", "5"),
        ("5", "0"),
        ("1", "1"),
    ]


def test_the_prompt_depends_on_the_moves_only_not_on_the_seat_or_who_the_opponent_is() -> None:
    # The round context carries no opponent identity; the seat is the one thing that differs between two
    # opponents playing the same moves in the two seats, and it must not show.
    assert render(OWN, OPP, seat="a") == render(OWN, OPP, seat="b")


def test_the_reply_is_reasoning_first_and_the_move_alone_on_the_last_line() -> None:
    system, user = render(OWN, OPP)
    assert "on the very last line and alone, your move: the single letter C or D" in system
    example = system.split("For example:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(example) == 3 and example[-1] == "C"  # reasoning lines, then the move alone
    assert user.splitlines()[-1] == (
        "Which move do you play now? Reason first, then give your move, C or D, alone on the last line."
    )


def test_the_templates_pass_the_builders_checks() -> None:
    builder().check(questions=True)
