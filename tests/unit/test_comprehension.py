"""The comprehension check: its questions and right answers, how answers are read, the mock's answers,
and its settings."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from harness.config import parse_experiment
from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon, GeometricHorizon, Horizon
from harness.game.rules import PayoffMatrix
from harness.players.model.comprehension import Question, is_correct, questions, read_answer
from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.policy import parse_action
from harness.players.model.prompts.builder import Ask, PromptBuilder, PromptSettings
from harness.players.model.settings import ComprehensionSettings
from harness.providers.base import SamplingParams
from harness.providers.mock import MockProvider
from tests.unit.test_prompts import make_view

NEUTRAL = ActionLabels(cooperate="J", defect="F")
ALL = ComprehensionSettings(rounds=(1,))
# Asymmetric on purpose, so seat b's answers differ from seat a's: [A's points, B's points].
LOPSIDED = PayoffMatrix(cc=(3.0, 2.0), cd=(0.0, 6.0), dc=(7.0, 1.0), dd=(1.0, 0.5))


def asked(view: Any, settings: ComprehensionSettings = ALL, labels: ActionLabels = NEUTRAL,
          order: str = "CD") -> list[tuple[str, str]]:  # fmt: skip
    return [(q.id, q.expected) for q in questions(view, settings, labels, order)]  # type: ignore[arg-type]


def test_seat_a_payoffs_fixed_horizon_and_no_last_move_before_round_1() -> None:
    view = make_view(game=LOPSIDED, horizon=FixedHorizon(10))
    assert asked(view) == [("payoff_CC", "3,2"), ("payoff_CD", "0,6"), ("payoff_DC", "7,1"), ("payoff_DD", "1,0.5"),
                           ("horizon", "10")]  # fmt: skip


def test_seat_b_payoffs_are_its_own() -> None:
    # B plays C, A plays C: B gets 2, A 3. B plays C, A plays D (A's D/C cell, 7 to A, 1 to B): 1 and 7.
    # B plays D, A plays C (A's C/D cell, 0 to A, 6 to B): 6 and 0. Both D: 0.5 and 1.
    view = make_view("CD", "CC", seat="b", game=LOPSIDED, horizon=FixedHorizon(7))
    assert asked(view) == [("payoff_CC", "2,3"), ("payoff_CD", "1,7"), ("payoff_DC", "6,0"), ("payoff_DD", "0.5,1"),
                           ("horizon", "7"), ("last_move", "D")]  # fmt: skip


def test_a_geometric_horizon_asks_the_continuation_probability_as_shown() -> None:
    for stop, shown in ((0.05, "0.95"), (0.02, "0.98"), (0.5, "0.5")):
        view = make_view("C", "C", horizon=GeometricHorizon(stop))
        assert dict(asked(view))["horizon"] == shown
        prompt = PromptBuilder().render(view)[1]["content"]
        assert f"the game continues with probability {shown}." in prompt


def test_questions_follow_the_option_order_and_the_kinds_asked() -> None:
    view = make_view("DC", "CC", game=LOPSIDED)
    assert [q for q, _ in asked(view, order="DC")] == ["payoff_DD", "payoff_DC", "payoff_CD", "payoff_CC", "horizon",
                                                       "last_move"]  # fmt: skip
    only = ComprehensionSettings(rounds=(2,), questions=("last_move", "horizon"))
    assert asked(view, only) == [("horizon", "50"), ("last_move", "C")]
    payoffs = questions(view, ComprehensionSettings(rounds=(2,), questions=("payoff",)), NEUTRAL, "CD")
    assert [(q.ask.you, q.ask.they) for q in payoffs] == [("J", "J"), ("J", "F"), ("F", "J"), ("F", "F")]


def test_the_question_is_asked_in_place_of_the_move_and_in_the_format_asked() -> None:
    view = make_view("CD", "DD", game=LOPSIDED, horizon=FixedHorizon(10))
    builder = PromptBuilder(PromptSettings(labels=NEUTRAL, answer_format="json"))
    move = builder.render(view)
    payoff = questions(view, ALL, NEUTRAL)[1]
    system, user = builder.render_question(view, payoff.ask)
    assert system == move[0]  # the same rules
    head, _, tail = move[1]["content"].rpartition("\n\n")
    assert tail.startswith("What do you choose in round 3?")
    assert user["content"] == (
        f"{head}\n\nBefore you choose, answer a question about the game.\nIf you choose J and the other player chooses"
        " F, how many points do you get, and how many does the other player get?\nReply with only a JSON object: "
        '{"you": <your points>, "they": <their points>}.'
    )
    last = questions(view, ALL, NEUTRAL)[-1]
    assert builder.render_question(view, last.ask)[1]["content"].endswith(
        'What did you choose in round 2?\nReply with only a JSON object: {"action": "J"} or {"action": "F"}.'
    )


def q(kind: str, expected: str) -> Question:
    return Question(kind, Ask(kind=kind, expected=expected))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "text", "answer"),
    [
        ("payoff", '{"you": 8, "they": 0}', "8,0"),
        ("payoff", '```json\n{"You": 0.5, "They": 1}\n```', "0.5,1"),
        ("payoff", "I would get 8 points and the other player would get 0.", "8,0"),
        ("payoff", "In round 3, if I choose J and they choose F, I get 10 and they get 0.", "10,0"),
        ("payoff", "8, 0", "8,0"),
        ("payoff", "8,0", "8,0"),
        ("payoff", "-1 and 5", "-1,5"),
        ("payoff", "We would both get 8.", "8,8"),
        ("payoff", "I am not sure.", None),
        ("horizon", "10", "10"),
        ("horizon", "The game lasts 10 rounds in all.", "10"),
        ("horizon", '{"rounds": 10}', "10"),
        ("horizon", "This is round 3 of 10.", "10"),
        ("horizon", "95%", "0.95"),
        ("horizon", "It goes on with probability 0.95.", "0.95"),
        ("horizon", '{"probability": 0.98}', "0.98"),
        ("horizon", "No idea.", None),
        ("last_move", "F", "D"),
        ("last_move", '{"action": "J"}', "C"),
        ("last_move", "**J**", "C"),
        ("last_move", "J or F", None),
    ],
)
def test_answers_are_read(kind: str, text: str, answer: str | None) -> None:
    assert read_answer(q(kind, "0"), text, NEUTRAL) == answer


# Hand-written answers a person would score right, per kind of question, and answers a person reads
# but scores wrong: (kind, the right answer, the answer given, whether it is right). Mutual defection
# pays 1 to each player; the other outcome asked pays 0 to me and 5 to them; the game lasts three rounds
# (or goes on with probability 0.95); the last move was C.
SCORED = [
    ("payoff", "1,1", "1 each", True),
    ("payoff", "1,1", "We both get 1 point.", True),
    ("payoff", "1,1", "We both get one point.", True),
    ("payoff", "1,1", "One point each.", True),
    ("payoff", "1,1", "I get 1 and they get 1.", True),
    ("payoff", "1,1", "Cada uno obtiene un punto.", True),
    ("payoff", "1,1", "Nous obtenons chacun 1 point.", True),
    ("payoff", "1,1", "Jeder von uns bekommt einen Punkt.", True),
    ("payoff", "1,1", "我们各得1分。", True),
    ("payoff", "1,1", "3 points each", False),
    ("payoff", "1,1", "We both get three points.", False),
    ("payoff", "1,1", "I get 0 and they get 5.", False),
    ("payoff", "0,5", "I get 0 and they get 5.", True),
    ("payoff", "0,5", "They get 5, I get 0.", True),
    ("payoff", "0,5", "0 for me, 5 for them", True),
    ("payoff", "0,5", "Zero for me and five for the other player.", True),
    ("payoff", "0,5", "Ich bekomme null Punkte, der andere fünf.", True),
    ("payoff", "0,5", "I get 5 and they get 0.", False),
    ("payoff", "0,5", "5 for me, 0 for them.", False),
    ("payoff", "0,5", "3 each", False),
    ("horizon", "3", "The game lasts three rounds.", True),
    ("horizon", "3", "Three.", True),
    ("horizon", "3", "3 rounds in all.", True),
    ("horizon", "3", "This is round 1 of three.", True),
    ("horizon", "3", "Tres rondas.", True),
    ("horizon", "3", "Drei Runden.", True),
    ("horizon", "3", "Три раунда.", True),
    ("horizon", "3", "三轮。", True),
    ("horizon", "3", "The game lasts ten rounds.", False),
    ("horizon", "3", "Four.", False),
    ("horizon", "0.95", "Ninety-five percent.", True),
    ("horizon", "0.95", "It continues with probability 0.95.", True),
    ("horizon", "0.95", "95%", True),
    ("horizon", "0.95", "ninety percent", False),
    ("horizon", "0.95", "0.05", False),
    ("last_move", "C", "In round 1 I chose C.", True),
    ("last_move", "C", "C", True),
    ("last_move", "C", "I cooperated.", True),
    ("last_move", "C", "My move in round 2 was C.", True),
    ("last_move", "C", "Last round I played C and they played D.", True),
    ("last_move", "C", "En la ronda 1 elegí C.", True),
    ("last_move", "C", "In round 1 I chose D.", False),
    ("last_move", "C", "I defected.", False),
    ("last_move", "C", "They played C and I played D.", False),
]


@pytest.mark.parametrize(("kind", "right", "text", "correct"), SCORED)
def test_answers_are_scored_as_a_person_would(kind: str, right: str, text: str, correct: bool) -> None:
    question = q(kind, right)
    answer = read_answer(question, text, ActionLabels())
    assert answer is not None, "a readable answer, right or wrong, is never unreadable"
    assert is_correct(question, answer) is correct, answer


def test_a_past_move_with_neutral_labels_and_unreadable_answers() -> None:
    assert read_answer(q("last_move", "C"), "In round 2 I chose Option J.", NEUTRAL) == "C"
    assert read_answer(q("last_move", "C"), "In round 2 I chose F.", NEUTRAL) == "D"
    assert read_answer(q("last_move", "C"), "I don't remember.", NEUTRAL) is None
    assert read_answer(q("horizon", "3"), "Not sure, sorry.", NEUTRAL) is None
    assert read_answer(q("payoff", "1,1"), "Some points.", NEUTRAL) is None


def test_answers_are_compared_as_numbers_and_unreadable_ones_are_wrong() -> None:
    assert is_correct(q("payoff", "8,0"), "8,0") and is_correct(q("payoff", "8,0"), "8.0,0")
    assert not is_correct(q("payoff", "8,0"), "0,8") and not is_correct(q("payoff", "8,0"), None)
    assert is_correct(q("horizon", "0.95"), "0.95") and not is_correct(q("horizon", "0.95"), "0.9")
    assert is_correct(q("last_move", "D"), "D") and not is_correct(q("last_move", "D"), "C")


def mock_answer(provider: MockProvider, builder: PromptBuilder, view: Any, ask: Ask | None, order: str = "CD") -> str:
    messages = builder.render(view, order) if ask is None else builder.render_question(view, ask, order)  # type: ignore[arg-type]
    facts = builder.facts(view, order, ask)  # type: ignore[arg-type]
    return anyio.run(provider.generate, messages, SamplingParams(seed=3), 10.0, facts).text


@pytest.mark.parametrize("fmt", ["free", "json", "label"])
@pytest.mark.parametrize("horizon", [FixedHorizon(12), GeometricHorizon(0.1)])
def test_the_mock_answers_questions_in_the_format_asked_and_wrongly_when_confused(fmt: str, horizon: Horizon) -> None:
    builder = PromptBuilder(PromptSettings(labels=NEUTRAL, answer_format=fmt))  # type: ignore[arg-type]
    view = make_view("CD", "DD", seat="b", game=LOPSIDED, horizon=horizon)
    right, wrong = MockProvider("tft"), MockProvider("tft?confused=1")
    for question in questions(view, ALL, NEUTRAL):
        answer = read_answer(question, mock_answer(right, builder, view, question.ask), NEUTRAL)
        assert answer is not None and is_correct(question, answer), (question, answer)
        confused = read_answer(question, mock_answer(wrong, builder, view, question.ask), NEUTRAL)
        assert confused is not None and not is_correct(question, confused), (question, confused)


@pytest.mark.parametrize("fmt", ["json", "label"])
def test_the_mock_moves_in_the_format_asked(fmt: str) -> None:
    builder = PromptBuilder(PromptSettings(labels=NEUTRAL, answer_format=fmt, shuffle_options=True))  # type: ignore[arg-type]
    view = make_view("CC", "CD")  # the other defected last: TFT defects
    for order in ("CD", "DC"):
        text = mock_answer(MockProvider("tft"), builder, view, None, order)
        assert text == ('{"action": "F"}' if fmt == "json" else "F")
        assert parse_action(text, NEUTRAL).action == "D"


def test_the_mock_plays_from_the_facts_not_the_wording(tmp_path: Any) -> None:
    """A round template in other words (and another language) leaves mock/tft playing TFT."""
    (tmp_path / "round.j2").write_text(
        "Ronda {{ round }}. {% for r in history %}Tú: {{ r.you }}, el otro: {{ r.they }}. {% endfor %}"
        "¿{{ labels.cooperate }} o {{ labels.defect }}?"
    )
    builder = PromptBuilder(PromptSettings(template_dir=str(tmp_path), labels=NEUTRAL))
    provider = MockProvider("tft")
    for own, opp, move in (("", "", "C"), ("C", "D", "D"), ("CD", "DC", "C"), ("CDC", "DCD", "D")):
        text = mock_answer(provider, builder, make_view(own, opp), None)
        assert parse_action(text, NEUTRAL).action == move, (own, opp, text)


def test_the_mock_sees_only_the_rounds_the_prompt_shows() -> None:
    """mock/grim forgets a defection that the history window no longer shows, as a model that reads it would."""
    provider = MockProvider("grim")
    view = make_view("CCC", "DCC")
    assert parse_action(mock_answer(provider, PromptBuilder(), view, None), ActionLabels()).action == "D"
    windowed = PromptBuilder(PromptSettings(history_window=2))
    assert parse_action(mock_answer(provider, windowed, view, None), ActionLabels()).action == "C"


# ---- settings, checked with key paths -----------------------------------------------------------


def experiment(agent_a: dict[str, Any], agent_b: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    return {"experiment": {"conditions": [{"name": "x", "agent_a": agent_a, "agent_b": agent_b or {"policy": "TFT"}}]},
            **top}  # fmt: skip


def problems(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as failed:
        parse_experiment(data)
    return failed.value.problems


def test_a_comprehension_check_on_a_strategy_is_refused_clearly() -> None:
    found = problems(experiment({"model": "mock/tft"}, {"policy": "TFT", "comprehension": {"rounds": [1]}}))
    assert found == [
        "experiment.conditions[0].agent_b: a comprehension check asks a language model the rules of the game, and TFT "
        "is a classic strategy that reads no prompt: remove comprehension from this agent, or make it a model player "
        "(model: provider/name)"
    ]
    found = problems(experiment({"policy": "ALLD", "temperature": 0.0, "prompts": {}}))
    assert found == ["experiment.conditions[0].agent_a: temperature, prompts are settings of model players, and ALLD "
                     "is a classic strategy: remove them from this agent, or make it a model player (model: "
                     "provider/name)"]  # fmt: skip


def test_comprehension_rounds_are_checked_against_the_horizon() -> None:
    model = {"model": "mock/tft", "comprehension": {"rounds": [1, 12, 30]}}
    assert problems(experiment(model, horizon={"type": "fixed", "n_rounds": 10})) == [
        "experiment.conditions[0].agent_a.comprehension.rounds: round 12 is never reached, the game has 10 rounds; "
        "ask in rounds 1 to 10"
    ]
    capped = {"type": "geometric", "stop_prob": 0.1, "max_rounds": 20}
    assert problems(experiment(model, horizon=capped)) == [
        "experiment.conditions[0].agent_a.comprehension.rounds: round 30 is never reached, the game has at most 20 "
        "rounds (max_rounds); ask in rounds 1 to 20"
    ]
    parse_experiment(experiment(model, horizon={"type": "geometric", "stop_prob": 0.1}))  # uncapped: may be reached
    parse_experiment(experiment(model, horizon={"type": "fixed", "n_rounds": 30}))


@pytest.mark.parametrize(
    ("comprehension", "message"),
    [
        ({"rounds": [1, 3, 3]}, "comprehension.rounds: round 3 is listed twice"),
        ({"rounds": [0, 2]}, "comprehension.rounds: rounds are numbered from 1 (1 = before the first move); got 0"),
        ({"rounds": []}, "comprehension.rounds: "),
        (
            {"rounds": [1], "questions": ["payoff", "score"]},
            "comprehension.questions[1]: Input should be 'payoff', 'horizon' or 'last_move'",
        ),
        ({"round": [1]}, "comprehension.round: unknown key"),
    ],
)
def test_bad_comprehension_settings_are_named_with_their_key_path(comprehension: dict, message: str) -> None:
    found = problems(experiment({"model": "mock/tft", "comprehension": comprehension}))
    assert any(p.startswith(f"experiment.conditions[0].agent_a.{message}") for p in found), found


def test_an_unknown_answer_format_is_named_with_its_key_path() -> None:
    found = problems(experiment({"model": "mock/tft", "prompts": {"answer_format": "xml"}}))
    assert found == ["experiment.conditions[0].agent_a.prompts.answer_format: Input should be 'free', 'json' or "
                     "'label'"]  # fmt: skip


def test_comprehension_rounds_are_kept_in_order() -> None:
    config = parse_experiment(experiment({"model": "mock/tft", "comprehension": {"rounds": [25, 1, 10]}}))
    agent = config.experiment.conditions[0].agent_a
    assert agent.comprehension is not None and agent.comprehension.rounds == (1, 10, 25)  # type: ignore[union-attr]
    assert agent.resolved()["comprehension"] == {"rounds": [1, 10, 25], "questions": ["payoff", "horizon", "last_move"]}


def test_the_count_of_questions_the_plan_uses_is_what_the_check_asks() -> None:
    """``asked_at`` (the plan's, the live progress's and the estimate's count) against the questions the check
    really asks, in every round of a game, for each choice of kinds: 4 payoff questions, 1 on the horizon, 1 on
    the last move from round 2."""
    from harness.players.model.prompts.builder import game_views

    views = game_views(6)
    for kinds in (("payoff",), ("horizon", "last_move"), ("payoff", "horizon", "last_move")):
        settings = ComprehensionSettings(rounds=(1, 2, 5), questions=kinds)  # type: ignore[arg-type]
        for view in views:
            expected = len(questions(view, settings, NEUTRAL)) if view.round in settings.rounds else 0
            assert settings.asked_at(view.round) == expected, (kinds, view.round)
    assert [ALL.asked_at(r) for r in (1, 2)] == [5, 0] and ComprehensionSettings(rounds=(3,)).asked_at(3) == 6
