"""The suites as data: each builds a valid eval config that follows its own protocol, also as stored."""

from __future__ import annotations

import pytest

from harness.config import parse_experiment
from harness.config.presets.suites import MIN_ANSWER_TOKENS, SUITES, check_options, get_suite
from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon
from harness.players.model.prompts.builder import OptionOrder, PromptBuilder, PromptSettings
from tests.unit.test_prompts import make_view


@pytest.mark.parametrize("name", sorted(SUITES))
def test_a_suite_config_follows_its_protocol_also_as_stored_and_read_back(name: str) -> None:
    suite = SUITES[name]
    asks = [1, 5] if suite.max_tokens >= MIN_ANSWER_TOKENS else None  # akata2023's one-token replies ask none
    config = suite.config("mock/tft", replicates=2, seed=7, comprehension=asks)
    assert config.suite == name and suite.deviations(config) == []
    stored = parse_experiment(config.resolved_dict())  # as `pdbench resume` reads a run's config
    assert stored.suite == name and stored.problems() == []
    assert [c.name for c in stored.experiment.conditions] == [c.name for c in config.experiment.conditions]


def test_fontana_opponents_are_eleven_rates_named_exactly() -> None:
    names = [c.name for c in SUITES["fontana2025"].config("mock/tft").experiment.conditions]
    assert names == [f"vs_RAND(p={p})" for p in ("0.0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8",
                                                 "0.9", "1.0")]  # fmt: skip


def test_suite_names_ignore_case_and_unknown_ones_list_the_suites() -> None:
    assert get_suite(" Akata2023 ").name == "akata2023"
    with pytest.raises(ConfigError, match=r"unknown suite 'akata'; the suites are: akata2023 \(Akata"):
        get_suite("akata")


# ---- each suite's prompt, worked by hand ------------------------------------------------------------------------

AKATA_RULES = """You are playing the same game again and again with one other player. In this game you choose either \
Option J or Option F. You play 10 rounds in all, always with the same player. These are the rules:
If you choose Option J and the other player chooses Option J, you win 8 points and the other player wins 8 points.
If you choose Option J and the other player chooses Option F, you win 0 points and the other player wins 10 points.
If you choose Option F and the other player chooses Option J, you win 10 points and the other player wins 0 points.
If you choose Option F and the other player chooses Option F, you win 5 points and the other player wins 5 points.
"""


def suite_builder(name: str) -> PromptBuilder:
    return PromptBuilder(PromptSettings.model_validate(SUITES[name].prompts))


@pytest.mark.parametrize(("order", "asked"), [("CD", "Option J or Option F"), ("DC", "Option F or Option J")])
def test_akata_is_one_user_message_and_the_order_shows_in_the_question_only(order: OptionOrder, asked: str) -> None:
    # Round 3 of 10 after (J, F) and (F, F): 0 and 10 points, then 5 and 5 (R=8, S=0, T=10, P=5).
    view = make_view("CD", "DD", horizon=FixedHorizon(10), game=SUITES["akata2023"].payoffs)
    assert suite_builder("akata2023").render(view, order) == [
        {
            "role": "user",
            "content": AKATA_RULES
            + """
In round 1, you chose Option J and the other player chose Option F. So you won 0 points and the other player won 10 \
points.
In round 2, you chose Option F and the other player chose Option F. So you won 5 points and the other player won 5 \
points.

You are now playing round 3.
Q: Which option do you choose, """
            + asked
            + "?\nA: Option",
        }
    ]


def test_akata_in_seat_b_reads_its_own_side_and_round_one_shows_no_history() -> None:
    game = SUITES["akata2023"].payoffs
    # Seat B played J against A's F: B won 0, A won 10; the prompt is told from B's side.
    view = make_view("C", "D", seat="b", horizon=FixedHorizon(10), game=game)
    text = suite_builder("akata2023").render(view)[0]["content"]
    assert "In round 1, you chose Option J and the other player chose Option F. So you won 0 points and the other " \
        "player won 10 points." in text  # fmt: skip
    first = suite_builder("akata2023").render(make_view(horizon=FixedHorizon(10), game=game))
    # No history yet: the rules, then two blank lines, as the paper's prompt puts an empty history between them.
    assert first == [{"role": "user", "content": AKATA_RULES + "\n\nYou are now playing round 1.\nQ: Which option do "
                      "you choose, Option J or Option F?\nA: Option"}]  # fmt: skip


def test_fontana_is_third_person_with_words_window_counts_totals_and_round() -> None:
    # 12 rounds played, the window shows rounds 3 to 12. A: D, D, then C x10; B: C, D, then C x10.
    # Points (3/0/5/1): round 1 D/C 5-0, round 2 D/D 1-1, rounds 3-12 C/C 3-3: A 5+1+30 = 36, B 0+1+30 = 31.
    view = make_view("DDCCCCCCCCCC", "CDCCCCCCCCCC", horizon=FixedHorizon(100))
    system, user = suite_builder("fontana2025").render(view)
    assert system["role"] == "system" and user["role"] == "user"
    assert (
        system["content"]
        == """Player A and player B play a game together over many rounds.
In every round, player A and player B each perform one of two actions at the same time: "Cooperate" or "Defect".
The points each pair of actions brings are:
If A plays "Defect" and B plays "Defect", A collects 1 points and B collects 1 points.
If A plays "Defect" and B plays "Cooperate", A collects 5 points and B collects 0 points.
If A plays "Cooperate" and B plays "Defect", A collects 0 points and B collects 5 points.
If A plays "Cooperate" and B plays "Cooperate", A collects 3 points and B collects 3 points.
They play 100 rounds of this game in all.
Each player's aim is to collect as many points as possible over the whole game."""
    )
    rounds = "".join(
        f'Round {n}: A played "Cooperate" and B played "Cooperate". A collected 3 points and B collected 3 points.\n'
        for n in range(3, 13)
    )
    assert user["content"] == (
        "The last 10 rounds of the game went as follows:\n"
        + rounds
        + 'Over the whole game, A has played "Cooperate" 10 times and "Defect" 2 times, and B has played "Cooperate" '
        '11 times and "Defect" 1 times.\n'
        "Over the whole game, A has collected 36 points and B has collected 31 points.\n"
        "Current round: 13.\n"
        'Reply with only a JSON object that names the action player A should play: {"action": "Cooperate"} or '
        '{"action": "Defect"}.'
    )
    first = suite_builder("fontana2025").render(make_view(horizon=FixedHorizon(100)))[1]["content"]
    assert first.startswith("This is the first round of the game.\n") and "Current round" not in first


@pytest.mark.parametrize("name", sorted(SUITES))
def test_suite_templates_pass_the_builders_checks_with_a_comprehension_check(name: str) -> None:
    suite_builder(name).check(questions=True)


# ---- what a suite refuses ---------------------------------------------------------------------------------------


def test_options_a_suite_fixes_are_refused_together_in_one_paragraph() -> None:
    with pytest.raises(ConfigError) as err:
        check_options(SUITES["akata2023"], ["--seed", "--answer-format", "--persona"])
    text = str(err.value)
    assert "\n" not in text and "--answer-format (the reply format), --persona (the prompt) cannot be given" in text
    check_options(SUITES["akata2023"], ["--seed", "--replicates", "--base-url"])  # engine options are the user's


def test_a_config_that_moves_the_model_or_its_reply_length_departs_from_akata() -> None:
    suite = SUITES["akata2023"]
    stored = suite.config("mock/tft").resolved_dict()
    conds = stored["experiment"]["conditions"]
    conds[3]["agent_a"], conds[3]["agent_b"] = conds[3]["agent_b"], conds[3]["agent_a"]  # ALLC_vs_model: swapped
    conds[6]["agent_b"]["max_tokens"] = 5
    with pytest.raises(ConfigError) as err:  # a config naming a suite is checked against it when read
        parse_experiment(stored)
    text = " ".join(str(err.value).split())
    assert "the config has model vs ALLC, model vs ALLD, model vs DONCE(round=1), model vs ALLC, ALLD vs model" in text
    assert "experiment.conditions[6].agent_b.max_tokens: suite akata2023 fixes 1, the config has 5" in text


def test_a_shared_order_without_shuffling_is_refused() -> None:
    with pytest.raises(ValueError, match=r"shared_order shares the shuffled option order .* shuffle_options is off"):
        PromptSettings.model_validate({"shared_order": True})


def test_a_comprehension_check_is_refused_where_the_reply_is_one_token() -> None:
    with pytest.raises(ConfigError, match=r"--suite akata2023 has the model reply in 1 token\(s\)"):
        check_options(SUITES["akata2023"], ["--comprehension", "--seed"])
    with pytest.raises(ConfigError, match="leave out --comprehension"):
        SUITES["akata2023"].config("mock/tft", comprehension=[1])
    check_options(SUITES["fontana2025"], ["--comprehension"])  # 128 tokens hold an answer
