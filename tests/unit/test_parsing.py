"""Model free text -> move: what real models write, what must be refused, and the re-ask policy."""

from __future__ import annotations

import random

import pytest

from harness.game.rules import PayoffMatrix
from harness.players.model.parsing.fields import field_doubts
from harness.players.model.parsing.policy import (
    ActionLabels,
    ParsePolicy,
    ParseResult,
    correction_message,
    fallback_action,
    parse_action,
)

DEFAULT = ActionLabels()
NEUTRAL = ActionLabels(cooperate="J", defect="F")

REASONING_THEN_FINAL = (
    "Let me think. If I choose D and they choose C, I get 5, so D would be tempting, "
    "but they have cooperated every round. Final answer: C"
)
LONG_COT = """The other player defected in round 3 but returned to C afterwards.
Options:
- C: we both get 3 if they cooperate.
- D: I get 5 if they play C, but it risks a spiral of mutual D.

Considering the long horizon, cooperation seems best.

**Final Answer:** C"""

# (reply, expected canonical move or None) with the default C/D labels.
DEFAULT_CASES: list[tuple[str, str | None]] = [
    # bare labels
    ("C", "C"),
    ("D", "D"),
    ("c", "C"),
    ("d", "D"),
    (" D.\n", "D"),
    ("C!", "C"),
    ("**C**", "C"),
    ("`D`", "D"),
    ("*C*", "C"),
    ("_D_", "D"),
    ('"C"', "C"),
    ("[D]", "D"),
    ("(C)", "C"),
    ("### D", "D"),
    ("Cooperate", "C"),
    ("Defect.", "D"),
    ("I Cooperate", "C"),
    ("i defect", "D"),
    ("cooperation", "C"),
    # answer lines
    ("Action: C", "C"),
    ("Move: D", "D"),
    ("My choice: C", "C"),
    ("Answer: **D**", "D"),
    ("**Action:** C", "C"),
    ("**Move**: D", "D"),
    ("Decision: cooperate", "C"),
    ("Choice = D", "D"),
    ("Action: C (cooperate)", "C"),
    ("Action: D - they defected last round", "D"),
    ("1. Review the history.\n2. Action: D", "D"),
    ("Reasoning: they defected twice in a row.\nAction: D", "D"),
    ("Action: D\nAction: C", "C"),  # the last answer line wins
    ("Action: C/D\nAction: C", "C"),  # an echo of the format, then the answer
    ("Their last move: D\nMy move: C", "C"),
    ("Answer: I will defect.", "D"),
    ("Move: option C", "C"),
    # final answers
    (REASONING_THEN_FINAL, "C"),
    (LONG_COT, "C"),
    ("Final answer: D", "D"),
    ("FINAL ANSWER: c", "C"),
    ("**Final Answer:**\n\nD", "D"),
    ("My final answer is C.", "C"),
    ("My final decision is to defect.", "D"),
    ("The math says D.\nFinal choice: C\nAction: D", "D"),  # a later answer line revises (issue 8)
    ("Final answer: C\nFinal answer: C", "C"),
    ("$\\boxed{D}$", "D"),
    ("\\boxed{\\text{C}}", "C"),
    ("Final answer: D\n\nMy move: C", "C"),  # a later answer line revises (issue 8)
    # JSON
    ('{"action": "C"}', "C"),
    ('{"move":"D","reasoning":"they defected twice"}', "D"),
    ('```json\n{"action": "D"}\n```', "D"),
    ('Here is my answer:\n```json\n{\n  "reasoning": "trust builds",\n  "move": "C"\n}\n```', "C"),
    ('{"Action": "cooperate"}', "C"),
    ('{"choice": "**D**"}', "D"),
    ('{"response": {"action": "D"}}', "D"),
    ('{"reasoning": "I considered C", "final_answer": "D"}', "D"),
    ('{"action": "C"} Final answer: D', "D"),  # a later final-answer line revises the JSON (issue 8)
    ('{"note": "no move key"}\nD', "D"),  # JSON without a move key is ignored
    ('{"action": "C"}\n{"action": "C"}', "C"),
    # last / first line
    ("Let me think. They defected last round.\n\nD", "D"),
    ("They have cooperated 9 times out of 10.\nTrust seems warranted.\n\n**C**", "C"),
    ("Considering the history, mutual trust is best. C", "C"),
    ("C\n\nI want to keep building trust.", "C"),
    ("C - to keep building trust", "C"),
    ("**D** — they have defected three times in a row.", "D"),
    ("C. I will cooperate to build trust.", "C"),
    # choice statements
    ("I will cooperate", "C"),
    ("I choose to defect.", "D"),
    ("I'll cooperate this round.", "C"),
    ("I’ll defect.", "D"),
    ("I decide to cooperate.", "C"),
    ("I have decided to defect this time.", "D"),
    ("I choose C.", "C"),
    ("I'll play D again.", "D"),
    ("I'll go with C.", "C"),
    ("My move is D because they defected.", "D"),
    ("My choice is: C", "C"),
    ("I will continue to cooperate.", "C"),
    ("I'll keep cooperating.", "C"),
    ("I'm going to defect.", "D"),
    ("I am choosing C this round.", "C"),
    ("I will definitely cooperate.", "C"),
    ("I will not defect. I will cooperate.", "C"),
    ("I choose C, not D.", "C"),
    ("Their last move: D\nI'll cooperate anyway, to signal good faith.", "C"),
    ("If I choose D, they lose 3 points. I will cooperate.", "C"),
    ("If I defect, I get 5; if they defect too, we both get 1; I will cooperate.", "C"),
    ("Since they cooperated, I will cooperate too.", "C"),
    # refusals: ambiguous
    ("C or D", None),
    ("C/D", None),
    ("I will cooperate or defect", None),
    ("I choose C or D.", None),
    ("Action: C/D", None),
    ("Move: cooperate or defect", None),
    ("Answer: C, D", None),
    ('{"action": "C/D"}', None),
    ('{"action": "C or D"}', None),
    ('{"action": "X"}', None),
    ('{"action": ""}', None),
    ('{"action": 1}', None),
    ('{"action": null}', None),
    ('{"action": "C"}\n{"action": "D"}', None),
    ('{"action": "C/D"}\nFinal answer: C', None),  # an invalid JSON value is not rescued by weaker rules
    ("Final answer: C\nFinal answer: D", "D"),  # the last final answer wins (issue 8)
    ("Final answer: C or D", None),
    ("I will defect. Actually, I will cooperate.", "C"),  # "actually" revises (issue 8)
    ("D. That is what they played, so I will cooperate.", None),
    ("C\n\nOn reflection I choose to defect.", "D"),  # "on reflection" revises (issue 8)
    # refusals: nothing to read
    ("", None),
    ("   \n\t", None),
    ("**", None),
    ("Hello there", None),
    ("I'd rather not say.", None),
    ("Let me think about this carefully.", None),
    # false-positive traps
    ("Decision", None),
    ("Decision: I need more information.", None),
    ("CD", None),
    ("DC", None),
    ("C's", None),
    ("Cooperative", None),
    ("Defective", None),
    ("The payoff for D is higher.", None),
    ("If I choose D and they choose C, I get 5.", None),
    ("If they defect, I will defect.", None),
    ("Should I choose D?", None),
    ("Will I cooperate? Hard to say.", None),
    ("They played D.", None),
    ("Their last move: D", None),
    ("The options are C and D.", None),
    ("Round 3: C, D", None),
    ("I'd defect if they did.", None),
    ("I choose a move carefully.", None),
    ("I decided, cooperation makes sense in general, D makes sense sometimes.", None),
]

# (reply, expected canonical move or None) with neutral J/F labels (J = cooperate, F = defect).
NEUTRAL_CASES: list[tuple[str, str | None]] = [
    ("J", "C"),
    ("F", "D"),
    ("j", "C"),
    (" f.\n", "D"),
    ("**F**", "D"),
    ("`J`", "C"),
    ("Action: J", "C"),
    ("Answer: **F**", "D"),
    ("Final answer: F", "D"),
    ("Hmm, F is tempting... Final answer: J", "C"),
    ('{"action": "J"}', "C"),
    ('```json\n{"move": "f"}\n```', "D"),
    ("They played F twice.\n\nJ", "C"),
    ("I choose J.", "C"),
    ("I will play F.", "D"),
    ("My move is J.", "C"),
    # the words cooperate/defect name the moves under neutral labels too: J is the cooperative option
    ("I will cooperate", "C"),
    ("Defect", "D"),
    ("Action: cooperate", "C"),
    ('{"action": "defect"}', "D"),
    ("I'm going to betray them.", "D"),
    ('{"action": "C"}', None),
    ("C", None),
    ("D", None),
    # ambiguity and traps
    ("J or F", None),
    ("Action: J/F", None),
    ("Final answer: J\nFinal answer: F", "D"),  # the last final answer wins (issue 8)
    ("JF", None),
    ("Joy", None),
    ("Fine.", None),
    ("If I choose F, I get 5.", None),
    ("i choose j", "C"),  # a reply all in lower case keeps its one-letter labels
    ("I choose j", None),  # a lower-case one-letter label inside prose is ordinary English
    ("", None),
]


@pytest.mark.parametrize(("text", "expected"), DEFAULT_CASES)
def test_default_labels(text: str, expected: str | None) -> None:
    result = parse_action(text, DEFAULT)
    assert result.action == expected, result
    assert (result.reason is None) == (expected is not None)


@pytest.mark.parametrize(("text", "expected"), NEUTRAL_CASES)
def test_neutral_labels(text: str, expected: str | None) -> None:
    result = parse_action(text, NEUTRAL)
    assert result.action == expected, result
    assert (result.reason is None) == (expected is not None)


@pytest.mark.parametrize(
    ("text", "method"),
    [
        ('{"action": "C"}', "json"),
        ("Final answer: C", "final_answer"),
        ("Action: C", "answer_line"),
        ("C", "bare"),
        ("Thinking...\nC", "last_line"),
        ("C\nBecause trust.", "first_line"),
        ("I will cooperate.", "statement"),
    ],
)
def test_method_names_the_rule_that_decided(text: str, method: str) -> None:
    assert parse_action(text, DEFAULT).method == method


def test_multi_character_labels() -> None:
    labels = ActionLabels(cooperate="Blue", defect="Red")
    assert parse_action("**BLUE**", labels).action == "C"
    assert parse_action("I choose red.", labels).action == "D"
    assert parse_action("Blueberry", labels).action is None
    assert parse_action("Blue or Red", labels).action is None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("Hello", "names neither C nor D"),
        ("C or D", "mentions both C and D"),
        ("The payoff for D is higher.", "mentions D"),
        ("Final answer: C or D", "both C and D as its final answer"),
        ('{"action": "X"}', "JSON field 'action' holds neither C nor D"),
        ("Action: C/D", "answer line names both C and D"),
    ],
)
def test_failure_reasons_say_what_went_wrong(text: str, fragment: str) -> None:
    result = parse_action(text, DEFAULT)
    assert not result.ok
    assert result.reason is not None and fragment in result.reason


@pytest.mark.parametrize(
    "kwargs",
    [
        {"cooperate": "C", "defect": "C"},
        {"cooperate": "J", "defect": "j"},
        {"cooperate": "", "defect": "D"},
        {"cooperate": "  ", "defect": "D"},
        {"cooperate": " C", "defect": "D"},
        {"cooperate": "C", "defect": "*D*"},
        {"cooperate_words": ("cooperate", "defect")},
        {"defect_words": ("",)},
    ],
)
def test_invalid_labels_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ActionLabels(**kwargs)  # type: ignore[arg-type]


def test_words_apply_only_to_the_default_labels() -> None:
    assert DEFAULT.uses_words
    assert ActionLabels("c", "d").uses_words
    assert not NEUTRAL.uses_words


def test_correction_message_default_labels() -> None:
    msg = correction_message(parse_action("C or D", DEFAULT), DEFAULT)
    assert msg.startswith("I could not tell your move: the reply mentions both C and D")
    assert msg.endswith("Reply with exactly one letter: C to cooperate or D to defect.")


def test_correction_message_neutral_labels_never_says_cooperate_or_defect() -> None:
    for text in ("", "I will cooperate", "J or F", '{"action": "defect"}', "Final answer: J or F"):
        msg = correction_message(parse_action(text, NEUTRAL), NEUTRAL)
        assert "cooperat" not in msg.lower() and "defect" not in msg.lower(), msg
        assert msg.endswith("Reply with exactly one of J or F.")


def test_correction_message_without_reason() -> None:
    msg = correction_message(ParseResult(None), DEFAULT)
    assert msg.startswith("I could not tell your move.")


@pytest.mark.parametrize(("mode", "expected"), [("defect", "D"), ("cooperate", "C"), ("fail", None)])
def test_fallback_action(mode: str, expected: str | None) -> None:
    assert fallback_action(ParsePolicy(on_failure=mode), random.Random(0)) == expected  # type: ignore[arg-type]


def test_random_fallback_uses_the_given_rng() -> None:
    policy = ParsePolicy(on_failure="random")
    draws = [fallback_action(policy, random.Random(seed)) for seed in range(40)]
    assert set(draws) == {"C", "D"}
    assert draws == [fallback_action(policy, random.Random(seed)) for seed in range(40)]


def test_policy_defaults_and_validation() -> None:
    policy = ParsePolicy()
    assert (policy.max_retries, policy.on_failure) == (2, "defect")
    assert ParsePolicy(max_retries=0).max_retries == 0
    for bad in ({"max_retries": -1}, {"max_retries": True}, {"on_failure": "skip"}):
        with pytest.raises(ValueError):
            ParsePolicy(**bad)  # type: ignore[arg-type]


# --- issue 8: revisions, what is not a decision, new shapes, other languages -----------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: C\n\nWait, they defected last round, so I will defect instead.", "D"),
        ("Answer: C ... Wait, they defected last round, so I will defect instead", "D"),  # mid-line
        ("I'll defect. On second thought, I'll cooperate.", "C"),
        ("I'll cooperate. Actually, D.", "D"),
        ("C\n\nHmm, no. D.", "D"),
        ("I will defect, but given their history I'll cooperate.", "C"),
        ("Answer: D. I misread the history; I will cooperate instead.", "C"),  # "instead" after it
        ("Final answer: C\nAnswer: D", "D"),  # a later answer line needs no marker
        ("Action: C\nThey defected twice. So, my move: D", "D"),  # an answer line mid-line
        ("D\n\nActually C.\n\nActually D.", "D"),  # each revision replaces the one before
        ("I'll play C, or rather D.", "D"),
        ("I'll defect. Just kidding, C.", "C"),
    ],
)
def test_the_last_decision_wins_when_it_revises(text: str, expected: str) -> None:
    assert parse_action(text, DEFAULT).action == expected


@pytest.mark.parametrize(
    "text",
    [
        "Answer: D\n\nI'll cooperate to rebuild trust.",  # no revision marker: two decisions disagree
        "I'll cooperate. Actually, D. C.",  # after the revision a plain C disagrees with it
        "Answer: C\n\nI'd defect.",  # a would-statement never revises
        "C\nD",  # two labels on separate lines, nothing to choose between them
        "**C**\n\n**D**",
        "D. That is what they played, so I will cooperate.",
        "I'll go with D. Or maybe C.",
    ],
)
def test_disagreeing_decisions_without_a_revision_are_refused(text: str) -> None:
    result = parse_action(text, DEFAULT)
    assert result.action is None and result.reason is not None, result


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I will cooperate if you cooperate.", None),
        ("I'd defect if they had defected.", None),
        ("I'm going to defect, unless you want me to cooperate.", None),
        ("Defect? No, cooperate.", "C"),
        ("C or D?", None),
        ("Should I defect? I'll cooperate.", "C"),
        ("If they defect, I will defect. They cooperated, so I will cooperate.", "C"),
        ("Even if they defect, I will cooperate.", "C"),  # concessive, not a condition
        ("In a one-shot game I would defect, but this game is repeated, so I will cooperate.", "C"),
        ("Next round I'll defect.", None),  # a plan for a later round
        ("Answer: C. But next round I'll defect.", "C"),
        ("They expect that I will defect. I will cooperate.", "C"),  # someone else's belief
        ('Answer: C. A defector would say "I will defect".', "C"),  # quoted
        ("Answer: C. But if they defect again, I'll defect.", "C"),
        ("I choose not to defect.", None),
        ("Réponse : D. Mais au prochain tour, je coopérerai.", "D"),  # later rounds, in any language
        ("Respuesta: D. Pero la próxima ronda cooperaré.", "D"),
        ("Antwort: D. Aber in der nächsten Runde werde ich kooperieren.", "D"),
        ("Resposta: D. Mas na próxima rodada vou cooperar.", "D"),
        ("答案：D。但是下一轮我会合作。", "D"),
        ("In round 10, I will defect.", "D"),  # a numbered round counts ...
        ("Answer: C. However, in round 10 I'll defect.", None),  # ... but cannot revise: it may not be this one
        ("However, if I defect they retaliate, so I will cooperate.", "C"),  # the condition is another clause's
        ("No coopero; traiciono.", "D"),  # a negated first person is dropped
        ("Ich kooperiere nicht. Ich defektiere.", "D"),
        ("C:", None),  # a heading, not an answer
    ],
)
def test_questions_hypotheticals_and_negations_decide_nothing(text: str, expected: str | None) -> None:
    assert parse_action(text, DEFAULT).action == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("C (cooperate)", "C"),
        ("**D** (defect)", "D"),
        ("C (defect)", None),  # the gloss names the other move
        ("Answer: Cooperate (not defect)", "C"),  # ... but only to reject it
        ("<answer>D</answer>", "D"),
        ("<answer>C or D</answer>", None),
        ("The answer is D.", "D"),
        ("I'd cooperate.", "C"),
        ("So, my move: D", "D"),
        ("```xml\n<response>\n  <action>C</action>\n</response>\n```", "C"),
        ('```json\n{"move": "D"}\n```\nBecause they defected.', "D"),
        ("{'action': 'C'}", "C"),  # a Python dict, not JSON
        ('{"action": "D",}', "D"),  # a trailing comma
        ('{"action": "C or D"}\nFinal answer: C', None),  # a broken JSON field refuses the reply
        ("<think>I'll cooperate... no.</think>\nD", "D"),  # the draft is not read
        ("They defected four times. I'll defect.\n</think>\n\nD", "D"),  # a lone closing tag
        ("<think>I'll defect.</think>", "D"),  # nothing after the block: the block is read
        ("C, not D.", "C"),
        ("D it is.", "D"),
        ("答案：Ｃ", "C"),  # full-width colon and letter
    ],
)
def test_shapes_models_write(text: str, expected: str | None) -> None:
    assert parse_action(text, DEFAULT).action == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Elijo cooperar.", "C"),
        ("Voy a traicionar.", "D"),
        ("Cooperaré esta ronda.", "C"),
        ("Respuesta final: D", "D"),
        ("Je coopère.", "C"),
        ("Je vais faire défection.", "D"),
        ("Réponse : C", "C"),
        ("Ich werde kooperieren.", "C"),
        ("Deshalb verrate ich.", "D"),
        ("Endgültige Antwort: D", "D"),
        ("Vou cooperar.", "C"),
        ("Eu escolho trair.", "D"),
        ("Minha resposta é C.", "C"),
        ("我选择合作。", "C"),
        ("我决定背叛。", "D"),
        ("最终答案：C", "C"),
        ("El oponente cooperó.", None),  # he cooperated: accents keep it apart from "coopero"
        ("L'autre joueur coopère.", None),  # "coopère" needs "je" to be mine
        ("Si traiciono, gano 5.", None),
        ("如果我背叛，我得5分。", None),
    ],
)
def test_other_languages_with_the_default_labels(text: str, expected: str | None) -> None:
    assert parse_action(text, DEFAULT).action == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Coopero.", "C"), ("合作", "C"), ("Je coopère.", "C"), ("Ich kooperiere.", "C"), ("Vou cooperar.", "C"),
     ("背叛", "D"), ("İşbirliği yapıyorum.", "C"), ("Zdradzam.", "D"), ("C", None), ("I choose D.", None)],
)  # fmt: skip
def test_neutral_labels_read_move_words_in_any_language(text: str, expected: str | None) -> None:
    """Under J/F the move's meaning names it (J is the cooperative option); the other game's letters do not."""
    assert parse_action(text, NEUTRAL).action == expected


@pytest.mark.parametrize(("text", "expected"), [("Elijo J.", "C"), ("我选择F。", "D"), ("Je choisis J.", "C")])
def test_neutral_labels_in_other_languages(text: str, expected: str) -> None:
    assert parse_action(text, NEUTRAL).action == expected


@pytest.mark.parametrize(
    ("text", "method"),
    [
        ("<answer>D</answer>", "xml"),
        ("They defected.\nD\nIt is the only safe reply.", "label_line"),
        ("Answer: C\n\nWait, I will defect instead.", "statement"),  # the method of the revision
    ],
)
def test_method_names_the_decision_in_force(text: str, method: str) -> None:
    assert parse_action(text, DEFAULT).method == method


def test_refusals_say_which_decisions_disagree() -> None:
    assert parse_action("Answer: D\n\nI'll cooperate.", DEFAULT).reason == "the reply gives both C and D as your move"
    assert parse_action('{"action": "C or D"}', DEFAULT).reason == "the JSON field 'action' holds both C and D"
    assert parse_action("<answer>C/D</answer>", DEFAULT).reason == "the answer tag names both C and D"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a change of mind in words the parser does not know is refused, never read as the old answer
        ('{"action": "C"}\n\nActually, I want to switch over to D.', None),
        ("Answer: C\n\nActually, D is better.", None),
        ("答案：C。其实背叛更好。", None),
        ("Answer: C\n\nWait, D?", None),  # the other move asked after a change-of-mind marker: doubt
        # ... but the other move discussed, asked about, supposed or said of the other player is not one
        ("Answer: C\n\nActually, defecting would be tempting, but no.", "C"),
        ("Answer: C\n\nOn second thought, they will probably choose D.", "C"),
        ("Answer: C\n\nActually, I'd consider D if they defect again.", "C"),
        ("Answer: D. Actually, I won't cooperate with a defector.", "D"),
        # and a change of mind it knows is read
        ('{"action": "C"}\n\nActually, I want to change my answer to D.', "D"),
        ("Answer: C\n\nI'm changing my answer to D.", "D"),
        ("Answer: C. They defected, so D instead.", "D"),
    ],
)
def test_a_change_of_mind_after_the_last_answer(text: str, expected: str | None) -> None:
    result = parse_action(text, DEFAULT)
    assert result.action == expected, result
    if expected is None:
        assert result.reason is not None


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [  # the replies issue 21 quotes, each read as the person who wrote it meant
        ("ok C", DEFAULT, "C"),
        ("d, obviously", DEFAULT, "D"),
        ("🤝 Cooperate!", DEFAULT, "C"),
        ("I won't defect this round.", DEFAULT, "C"),
        ('{"my_action": "C"}', DEFAULT, "C"),
        ('{"selected_option": "D"}', DEFAULT, "D"),
        ("=> D", DEFAULT, "D"),
        ("Selected: D", DEFAULT, "D"),
        ("Draft answer: C\nRevised answer: D", DEFAULT, "D"),
        ("Last round: me C, them D. This round: me D.", DEFAULT, "D"),
        ("Just to be safe this round: F.", NEUTRAL, "D"),
        ("Frankly, Option F.", NEUTRAL, "D"),
        (
            "Going with C this round — but one more defection from them and I'll defect for the rest of the game.",
            DEFAULT,
            "C",
        ),
        ("C. Although... D might be better. I'm not sure.", DEFAULT, None),
        ("My answer would be C.", DEFAULT, "C"),
        ("I choose to not defect.", DEFAULT, "C"),
        ("Not cooperating today.", DEFAULT, "D"),
    ],
)
def test_the_shapes_of_issue_21(text: str, labels: ActionLabels, expected: str | None) -> None:
    assert parse_action(text, labels).action == expected


AKATA = PayoffMatrix(cc=(8.0, 8.0), cd=(0.0, 10.0), dc=(10.0, 0.0), dd=(5.0, 5.0))


@pytest.mark.parametrize(
    ("text", "payoffs", "expected"),
    [
        # each of my four payoffs belongs to one move: R and S to C, T and P to D; mutual R is C, mutual P is D
        ("I'll take the option where we both get 8.", AKATA, "C"),
        ("I choose the one where we each get 5.", AKATA, "D"),
        ("Taking the 10-point option.", AKATA, "D"),
        ("I pick the option that gives me 0 if they defect.", AKATA, "C"),
        ("Let's both take the 3 points again.", PayoffMatrix(), "C"),
        ("I'll grab the 5 and leave them with 0.", PayoffMatrix(), "D"),
        ("I choose the option that can't leave me with 0 points.", PayoffMatrix(), "D"),
        # nothing read: no matrix, two payoffs offered, a question, a refusal, history, a number of no payoff
        ("I'll take the option where we both get 8.", None, None),
        ("I'll take 3 each or 1 each.", PayoffMatrix(), None),
        ("Should I take the 5 points?", PayoffMatrix(), None),
        ("I won't take the 5 points this time.", PayoffMatrix(), None),
        ("Last round I got 0 and they got 5.", PayoffMatrix(), None),
        ("I'll take the one with 4 points.", PayoffMatrix(), None),
        ("I'll take the option where we both get 8, but honestly I'm not sure.", AKATA, None),
        # a payoff avoided names the other move (each payoff follows one of my moves); a condition on the other
        # player's named move picks one cell; both on the same option restates a mutual payoff (third pass)
        ("I'll pick the option that can never give me 0 points.", AKATA, "D"),
        ("I'll take the option that doesn't give me 10.", AKATA, "C"),
        ("I go for the choice that earns me 10 if they stay on J.", AKATA, "D"),
        ("I'll take the 5 points if they cooperate.", PayoffMatrix(), "D"),
        ("I'll take the option that gives us both 3 if we both choose it.", PayoffMatrix(), "C"),
        ("The option where we each get 3.", PayoffMatrix(), "C"),
        ("I want the 8/8 outcome.", AKATA, "C"),
        ("Option with the payoff of 10 for me.", AKATA, "D"),
        # an option's profile (fourth pass): its worst payoff, a cell named by matching or not, both its payoffs
        ("The safe option: at worst I still get 5.", AKATA, "D"),
        ("I want the option that earns 0 at worst.", AKATA, "C"),
        ("I'll pick the one that pays me 10 if they choose the other one.", AKATA, "D"),
        ("I'll pick the one that pays me 0 if they choose the other one.", AKATA, "C"),
        ("I take the option that gives 5 each when we match.", AKATA, "D"),
        ("Going with the 8-or-0 option.", AKATA, "C"),
        ("Going with the 10-or-5 option.", AKATA, "D"),
        ("Going with the 10-or-8 option.", AKATA, None),
        ("I'll pick the one that pays me 8 if they choose the other one.", AKATA, None),
        # refused: a negation, condition, comparison or quantifier the reader does not fully understand
        ("I'll take whatever gives me at least 5.", AKATA, None),
        ("I'll go for the option that gives me 8 unless they switch.", AKATA, None),
        ("I'm not going for the 10.", AKATA, None),
        ("I'll take the 10 or nothing.", AKATA, None),
        ("The option that gets me 0 if they go the other way.", AKATA, None),
        ("I'll take the option that gives me 8 if they defect.", AKATA, None),  # 8 is no payoff of mine then
        ("I'll risk getting 0 for the 8.", AKATA, None),
        ("I'll take the 10/0 outcome.", AKATA, None),  # whose number is first is not said
        # a label or move word always wins over payoffs
        ("J, the one where we both get 8.", AKATA, "C"),
    ],
)
def test_the_option_named_by_its_payoffs(text: str, payoffs: PayoffMatrix | None, expected: str | None) -> None:
    assert parse_action(text, NEUTRAL, payoffs).action == expected


def test_payoffs_that_do_not_tell_the_moves_apart_name_none() -> None:
    """Two outcomes with the same payoff (not a prisoner's dilemma): a number may belong to either move."""
    flat = PayoffMatrix(cc=(3.0, 3.0), cd=(3.0, 5.0), dc=(5.0, 3.0), dd=(1.0, 1.0))
    assert parse_action("I'll take the option that gives me 3.", DEFAULT, flat).action is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DDDD", "D"),
        ("CCC!", "C"),
        ("🤝", "C"),
        ("🤝🏽", "C"),
        ("CD", None),
        ("CCD", None),
        ("ddd", None),
        ("🤝 D", "D"),
    ],
)
def test_shorthand(text: str, expected: str | None) -> None:
    assert parse_action(text, DEFAULT).action == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # doubt after the answer refuses it; doubt before it, about the other player or answered in its sentence not
        ("D. Not confident at all.", None),
        ("Draft: C\nFinal: (undecided)", None),
        ("I'm not sure what they will do. C.", "C"),
        ("C. I'm not sure they'll reciprocate, but it's worth a try.", "C"),
        ("D. I'm not sure it's kind, but it protects me.", "D"),
        ("C, I keep going back and forth.", None),
        ("C today. Tomorrow, who knows.", "C"),
        # late negation (German, French, Dutch) refuses the move it closes
        ("Ich kooperiere diesmal nicht.", "D"),
        ("Ich verrate sie heute nicht.", "C"),
        ("Je ne coopère pas.", "D"),
        ("Ich kooperiere nicht nur heute.", None),
        # both moves refused
        ("I won't defect, and I won't cooperate either.", None),
        ("Not C. Not D either.", None),
        # transitions and conditions around arrows
        ("C -> D", None),
        ("If they defect -> D", None),
        ("They defected -> D", "D"),
        ("C <- my move", "C"),
        # drafts marked in words, plans after a comma, hedges that offer the other move as just as good
        ("C (crossed out) D", "D"),
        ("D this round, C again once they cooperate.", "D"),
        ("C, though D works too.", None),
        ("Tentatively C.", None),
        ("Answer: C\nWait, let me reconsider.", None),
        # the languages added: Turkish and Polish; Cyrillic С typed for C
        ("D'yi seçiyorum.", "D"),
        ("Wybieram C.", "C"),
        ("Nie współpracuję.", "D"),
        ("Ответ: С", "C"),
        # chat slang ends a sentence; "jk" takes the answer back
        ("defect lol they had it coming", "D"),
        ("gonna be D this time ngl", "D"),
        ("C lol jk D", "D"),
        ("they are gonna be D lol", None),
        # a negation before the subject voids the statement, or refuses the move; a subjectless verb of the
        # other player is theirs
        ("No voy a traicionar.", "C"),
        ("Eu não vou trair.", "C"),
        ("Ich werde nicht mehr kooperieren.", "D"),
        ("İhanet etmeyeceğim.", "C"),
        ("今回は協力しません。", "D"),
        ("相手は協力しません。", None),
        ("我不背叛。", "C"),  # a refusal of one move chooses the other
        # a change of mind in a sentence of its own, a label repeated, an arrow from the other player's key
        ("D. Wait. C, definitely C.", "C"),
        ("D. Wait. Hmm, C?", None),
        ("Opponent → D", None),
        ("Draft → D\nFinal → ?", None),
        ("Jolly good, C it is.", "C"),
        # the option named by its character
        ("I'm going with the cooperative option.", "C"),
        ("The selfish choice.", "D"),
        ("They took the selfish option.", None),
        # the other move left open after the answer, or offered as making sense too
        ("Going with D for now, but I'm open to C.", None),
        ("C seems right, but D also makes sense.", None),
        ("hmm... C I guess", "C"),
        ("D... or not. C?", None),
        ("D. C? No, D.", "D"),
        ("I'm done picking C.", "D"),
        ("No, I will cooperate.", "C"),
    ],
)
def test_second_pass_shapes(text: str, expected: str | None) -> None:
    assert parse_action(text, DEFAULT).action == expected


@pytest.mark.parametrize(
    ("field", "value", "doubts"),
    [
        ("final", False, True),
        ("Final", "no", True),
        ("final", True, False),
        ("is_final", "false", True),
        ("tentative", True, True),
        ("draft", False, False),
        ("confidence", 0.3, True),
        ("confidence", 0.69, True),
        ("confidence", 0.7, False),
        ("confidence", "50%", True),
        ("confidence", "3/10", True),
        ("confidence", "8/10", False),
        ("confidence", 85, False),
        ("confidence", 6, True),
        ("Confidence level", "low", True),
        ("confidence", "high", False),
        ("status", "undecided", True),
        ("status", "final", False),
        ("reason", "no", False),
    ],
)
def test_a_field_beside_the_answer_doubts_it_on_any_scale(field: str, value: object, doubts: bool) -> None:
    """A confidence is read as a share of its own scale (0-1, per cent, out of N, 0-10, 0-100): below 0.7 it doubts
    the answer; a flag doubts it by its meaning ("final": false, "tentative": true); other fields say nothing."""
    assert field_doubts(field, value) is doubts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"move": "C", "move": "D"}', None),
        ('{"move": "D", "move": "D"}', "D"),
        ('{"action": "C?"}', None),
        ('{"action": "C", "notes": "may switch to D next time if they defect"}', "C"),
        ('{"reasoning": "not sure at first, but trust pays", "action": "C"}', "C"),
        ('{"action": "C", "reasoning": "not sure at all"}', None),
        ("move: D\nconfidence: 0.4", None),
        ("move: D\nconfidence: 0.9", "D"),
    ],
)
def test_structured_answers_with_doubting_or_conflicting_fields(text: str, expected: str | None) -> None:
    """Reasoning before the move may weigh doubts the move settles; after it, or in a note, doubt refuses the reply;
    a move field repeated with another value, or asked as a question, chooses nothing."""
    assert parse_action(text, ActionLabels()).action == expected
