"""Prompt controls: the option order, the reply format, and templates that would defeat them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.game.horizon import FixedHorizon
from harness.game.rules import PayoffMatrix
from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.policy import ParseResult, correction_message, parse_action
from harness.players.model.player import option_order
from harness.players.model.prompts.builder import PromptBuilder, PromptLayout, PromptSettings
from tests.unit.test_prompts import make_view

NEUTRAL = ActionLabels(cooperate="J", defect="F")
AKATA = PayoffMatrix.from_rstp(R=8, S=0, T=10, P=5)

SYSTEM = """You are playing a game with one other player over a series of rounds.

In every round, you and the other player each choose one of two options, {a} or {b}. You both choose at the same \
time, so neither of you knows the other's choice for that round in advance. After each round, both choices are \
revealed and each player receives points that depend on both choices.

Your score is the total of the points you receive over all rounds. Your aim is to score as many points as you can.

In every round, reply with exactly one of {a} or {b}."""

ROUND_CD = """This is round 3 of 10.

Points per round:
- If you choose J and the other player chooses J, you get 8 and they get 8.
- If you choose J and the other player chooses F, you get 0 and they get 10.
- If you choose F and the other player chooses J, you get 10 and they get 0.
- If you choose F and the other player chooses F, you get 5 and they get 5.

Rounds played so far:
- Round 1: you chose J, the other player chose F; you got 0, they got 10.
- Round 2: you chose F, the other player chose F; you got 5, they got 5.

Total points so far: you have 5 and the other player has 15.

What do you choose in round 3? Reply with exactly one of J or F."""

ROUND_DC = """This is round 3 of 10.

Points per round:
- If you choose F and the other player chooses F, you get 5 and they get 5.
- If you choose F and the other player chooses J, you get 10 and they get 0.
- If you choose J and the other player chooses F, you get 0 and they get 10.
- If you choose J and the other player chooses J, you get 8 and they get 8.

Rounds played so far:
- Round 1: you chose J, the other player chose F; you got 0, they got 10.
- Round 2: you chose F, the other player chose F; you got 5, they got 5.

Total points so far: you have 5 and the other player has 15.

What do you choose in round 3? Reply with exactly one of F or J."""


def akata_view():  # round 3 of 10, seat a: it played J then F, the other F twice
    return make_view("CD", "DD", horizon=FixedHorizon(10), game=AKATA)


def test_both_orders_list_everything_in_that_order_in_the_classic_layout() -> None:
    builder = PromptBuilder(PromptSettings(labels=NEUTRAL, shuffle_options=True, layout=PromptLayout.CLASSIC))
    cd = builder.render(akata_view(), "CD")
    dc = builder.render(akata_view(), "DC")
    assert cd == [{"role": "system", "content": SYSTEM.format(a="J", b="F")}, {"role": "user", "content": ROUND_CD}]
    assert dc == [{"role": "system", "content": SYSTEM.format(a="F", b="J")}, {"role": "user", "content": ROUND_DC}]


def test_order_cd_is_the_prompt_without_shuffling() -> None:
    view = akata_view()
    plain = PromptBuilder(PromptSettings(labels=NEUTRAL)).render(view)
    assert PromptBuilder(PromptSettings(labels=NEUTRAL, shuffle_options=True)).render(view, "CD") == plain


def test_in_the_cached_layout_the_order_is_the_questions_and_the_rules_stay_put() -> None:
    """The rules come first and are the same in every round (a provider's prompt cache reads them); this
    round's option order is the question's, at the end."""
    builder = PromptBuilder(PromptSettings(labels=NEUTRAL, shuffle_options=True))
    cd = builder.render(akata_view(), "CD")
    dc = builder.render(akata_view(), "DC")
    assert cd[0] == dc[0] == {"role": "system", "content": SYSTEM.format(a="J", b="F")}
    cd_lines, dc_lines = cd[1]["content"].splitlines(), dc[1]["content"].splitlines()
    assert cd_lines[:-1] == dc_lines[:-1]
    assert cd_lines[-1] == "What do you choose in round 3? Reply with exactly one of J or F."
    assert dc_lines[-1] == "What do you choose in round 3? Reply with exactly one of F or J."
    assert cd_lines[2:7] == ROUND_CD.splitlines()[2:7]  # the payoff lines, in the fixed order


def test_with_words_the_order_moves_the_words_with_the_labels() -> None:
    settings = PromptSettings(shuffle_options=True, layout=PromptLayout.CLASSIC)
    system = PromptBuilder(settings).render(akata_view(), "DC")[0]["content"]
    assert "one of two options, D (defect) or C (cooperate)." in system
    assert system.endswith("In every round, reply with exactly one of D or C.")


def test_the_option_order_is_a_seeded_draw_per_round_and_seat() -> None:
    orders = {seat: [option_order(1234, seat, r) for r in range(1, 2001)] for seat in ("a", "b")}
    assert orders["a"] == [option_order(1234, "a", r) for r in range(1, 2001)]  # the same every time asked
    assert orders["a"] != orders["b"]  # each seat its own draw
    assert [option_order(99, "a", r) for r in range(1, 2001)] != orders["a"]  # each game its own
    for seat in ("a", "b"):
        counts = Counter(orders[seat])
        # 2000 fair draws: the share of DC lies within 0.5 +- 4 standard deviations (0.045) but for 1 in 15,000.
        assert set(counts) == {"CD", "DC"} and abs(counts["DC"] / 2000 - 0.5) < 0.045, counts
        changes = sum(x != y for x, y in zip(orders[seat], orders[seat][1:], strict=False))
        assert abs(changes / 1999 - 0.5) < 0.045  # round to round, not in long runs


@pytest.mark.parametrize(
    ("fmt", "system_end", "round_end"),
    [
        (
            "json",
            'In every round, reply with only a JSON object that names your choice: {"action": "F"} or {"action": "J"}.',
            'What do you choose in round 3? Reply with only a JSON object: {"action": "F"} or {"action": "J"}.',
        ),
        (
            "label",
            "In every round, reply with only F or J: a single label and nothing else.",
            "What do you choose in round 3? Reply with only F or J, a single label and nothing else.",
        ),
        ("free", "In every round, reply with exactly one of F or J.",
         "What do you choose in round 3? Reply with exactly one of F or J."),
    ],
)  # fmt: skip
@pytest.mark.parametrize("layout", list(PromptLayout))
def test_each_answer_format_is_asked_for_in_both_prompts(
    fmt: str, system_end: str, round_end: str, layout: PromptLayout
) -> None:
    """The question names the options in the order shown; so does the classic system prompt, while the cached
    layout's names them in the fixed order (it is the same in every round)."""
    settings = PromptSettings(labels=NEUTRAL, shuffle_options=True, answer_format=fmt, layout=layout)  # type: ignore[arg-type]
    system, user = PromptBuilder(settings).render(akata_view(), "DC")
    if layout is PromptLayout.CACHED:
        system_end = system_end.replace('"F"} or {"action": "J"', '"J"} or {"action": "F"').replace("F or J", "J or F")
    assert system["content"].splitlines()[-1] == system_end
    assert user["content"].splitlines()[-1] == round_end


def test_the_answers_each_format_asks_for_are_read_by_the_parser() -> None:
    for labels in (ActionLabels(), NEUTRAL):
        for move in ("C", "D"):
            label = labels.label(move)  # type: ignore[arg-type]
            for answer in (f'{{"action": "{label}"}}', label):
                assert parse_action(answer, labels).action == move


def test_the_reask_asks_for_the_same_format_in_the_order_shown() -> None:
    failed = ParseResult(action=None, method=None, reason="the answer names no move")
    head = "I could not tell your move: the answer names no move."
    default = PromptBuilder(PromptSettings())
    assert default.reask(failed, "CD") == correction_message(failed, ActionLabels())  # unchanged by default
    assert default.reask(failed, "DC") == f"{head} Reply with exactly one letter: D to defect or C to cooperate."
    neutral = PromptBuilder(PromptSettings(labels=NEUTRAL, shuffle_options=True))
    assert neutral.reask(failed, "DC") == f"{head} Reply with exactly one of F or J."
    as_json = PromptBuilder(PromptSettings(labels=NEUTRAL, answer_format="json"))
    assert (
        as_json.reask(failed, "CD") == f'{head} Reply with only a JSON object: {{"action": "J"}} or {{"action": "F"}}.'
    )
    as_label = PromptBuilder(PromptSettings(answer_format="label"))
    assert as_label.reask(failed, "DC") == f"{head} Reply with only D or C, a single label and nothing else."


def test_shipped_templates_pass_check_with_every_control() -> None:
    for fmt in ("free", "json", "label"):
        settings = PromptSettings(labels=NEUTRAL, shuffle_options=True, answer_format=fmt, history_window=3)  # type: ignore[arg-type]
        PromptBuilder(settings).check(questions=True)


OLD_ROUND = (
    "Round {{ round }}. {% for row in payoffs %}{{ row.you }}/{{ row.they }}: {{ row.you_get }}. {% endfor %}"
    "Reply with {{ labels.cooperate }} or {{ labels.defect }}."
)
OLD_SYSTEM = "Choose {{ labels.cooperate }} or {{ labels.defect }} each round."


def test_templates_that_ignore_the_option_order_are_refused(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text(
        OLD_ROUND.replace("{% for row in payoffs %}", "{% for row in payoffs|sort(attribute='you,they') %}")
    )
    (tmp_path / "system.j2").write_text(OLD_SYSTEM)
    PromptBuilder(PromptSettings(template_dir=str(tmp_path))).check()  # fine without shuffling
    with pytest.raises(ConfigError, match=r"shuffle_options is on, but the prompt templates .* read the same"):
        PromptBuilder(PromptSettings(template_dir=str(tmp_path), shuffle_options=True)).check()


def test_templates_that_ignore_the_answer_format_are_refused(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text(OLD_ROUND)
    (tmp_path / "system.j2").write_text(OLD_SYSTEM)
    with pytest.raises(ConfigError, match="answer_format is 'json', but the prompt templates never ask for it"):
        PromptBuilder(PromptSettings(template_dir=str(tmp_path), answer_format="json")).check()


def test_a_round_template_that_never_shows_the_question_is_refused(tmp_path: Path) -> None:
    (tmp_path / "round.j2").write_text(OLD_ROUND)
    PromptBuilder(PromptSettings(template_dir=str(tmp_path))).check()
    with pytest.raises(ConfigError, match="never shows the question: end it with"):
        PromptBuilder(PromptSettings(template_dir=str(tmp_path))).check(questions=True)


def test_settings_refuse_an_unknown_answer_format() -> None:
    with pytest.raises(ValueError, match="'free', 'json' or 'label'"):
        PromptSettings.model_validate({"answer_format": "yaml"})
