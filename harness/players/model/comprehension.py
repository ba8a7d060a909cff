"""The comprehension check: does the model know the rules it is playing by?

Following the meta-prompting of Fontana, Pierri & Aiello ("Nicer than humans", ICWSM 2025), a model
player can be asked, before its move in set rounds (round 1: before its first move), questions whose
answers the prompt states:

* ``payoff_XY``: the points it and the other player get when it plays X and the other Y (one
  question per joint outcome; X and Y canonical moves, asked with the labels the model sees);
* ``horizon``: how many rounds the game lasts (a fixed horizon) or the probability that it goes on
  after each round (a geometric one), as the prompt states it;
* ``last_move`` (from round 2): what it played in the previous round, as the prompt's history shows
  it (the move as played, after noise).

Each question is its own call, in a side conversation (the system prompt and the round's prompt with
the question in place of the request for a move) that never becomes part of the move's conversation.
Each answer is read (:func:`read_answer`), compared with the right one and stored as a
``comprehension`` row with the round. An answer that cannot be read counts as wrong.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TypeGuard

from harness.game.horizon import FixedHorizonInfo, GeometricHorizonInfo
from harness.game.view import RoundView
from harness.players.model.labels import ActionLabels
from harness.players.model.number_words import Number, numbers_in
from harness.players.model.parsing.policy import parse_action
from harness.players.model.prompts.context import Ask, OptionOrder, number_text, payoff_outcomes
from harness.players.model.settings import ComprehensionSettings, QuestionKind


@dataclass(frozen=True, slots=True)
class Question:
    """One question to ask: its id (``payoff_CD``, ``horizon``, ``last_move``), what the template needs,
    and the right answer, canonical (see :func:`read_answer`)."""

    id: str
    ask: Ask

    @property
    def kind(self) -> QuestionKind:
        return self.ask.kind

    @property
    def expected(self) -> str:
        return self.ask.expected


@dataclass(slots=True)
class ComprehensionAnswer:
    """One row of the ``comprehension`` table. ``attempt`` is the attempt number of the call that
    answered (calls with ``purpose = 'comprehension'`` are numbered 1, 2, ... within the player's round)."""

    game_id: int
    round: int
    player: str
    question: str
    kind: str
    expected: str
    answer: str | None
    correct: bool
    attempt: int


def questions(
    view: RoundView, settings: ComprehensionSettings, labels: ActionLabels, order: OptionOrder = "CD"
) -> list[Question]:
    """The questions for the player of ``view`` before its move: the payoffs in the order the options are
    shown, then the horizon, then (from round 2) its last move."""
    out: list[Question] = []
    if "payoff" in settings.questions:
        for mine, theirs, you, they in payoff_outcomes(view.payoffs, view.seat, order):
            ask = Ask(
                kind="payoff", you=labels.label(mine), they=labels.label(theirs), expected=f"{_num(you)},{_num(they)}"
            )
            out.append(Question(f"payoff_{mine}{theirs}", ask))
    if "horizon" in settings.questions:
        match view.horizon:
            case FixedHorizonInfo(n_rounds):
                expected = str(n_rounds)
            case GeometricHorizonInfo(continuation_prob):
                expected = _num(float(number_text(continuation_prob)))  # the probability exactly as the prompt shows it
        out.append(Question("horizon", Ask(kind="horizon", expected=expected)))
    if "last_move" in settings.questions and view.own_moves:
        out.append(Question("last_move", Ask(kind="last_move", round=view.round - 1, expected=view.own_moves[-1])))
    return out


def _num(x: float) -> str:
    """The canonical text of a number in an answer: 8 for 8.0, 0.95, -0.5."""
    if math.isfinite(x) and float(x).is_integer():
        return str(int(x))
    return repr(float(x))


_JSON = re.compile(r"\{[^{}]*\}")
# A round's number is no answer: "round 3", "in round three", "ronda 2", "第3轮", "3회차".
_ROUND_BEFORE = re.compile(
    r"(?:\b(?:round|rounds|ronda|tour|runde|rodada|turno|ronde|раунд\w*|राउंड)|第|#)\s*(?:no\.?\s*)?$", re.IGNORECASE
)
# "1 each", "We both get 1", "3 points apiece": one number for both players.
_BOTH = re.compile(
    r"\b(?:each|both|apiece|either\s+of\s+us|each\s+of\s+us|cada\s+uno|cada\s+una|cada\s+um|ambos|ambas"
    r"|los\s+dos|chacun|chacune|tous\s+les\s+deux|jeder|jede|beide|beiden|ciascuno|entrambi|tutti\s+e\s+due|elk|allebei"
    r"|beiden|каждый|каждому|оба|обоим|по)\b|各|都|ずつ|とも|각각|둘\s*다|모두|दोनों|प्रत्येक|كل|كلانا|لكل|كلا",
    re.IGNORECASE,
)
# Who a number is for: the nearest of these in its clause, before it ("I get 0", "they get 5") or
# just after it ("0 for me, 5 for them").
_ME = r"\b(?:i|me|my|myself|mine|yo|me|mí|je|moi|ich|mir|mich|eu|mim|io|ik|mij|я|мне|меня)\b|我|私|나|저|मैं|मुझे|मेरे|أنا|لي"
_THEM = (
    r"\b(?:they|them|their|he|she|him|her|opponent|other|partner|ellos|él|ella|otro|ils|elle|eux|autre|sie|ihm|ihnen"
    r"|andere|eles|ela|outro|loro|lui|lei|altro|zij|hij|hen|ander|они|он|она|им|ему|другой|другому|соперник\w*)\b"
    r"|对方|他|她|相手|상대|वह|उन्हें|उसे|दूसरे|الآخر|هو|هي|له"
)
_ROLE = re.compile(rf"(?P<me>{_ME})|(?P<them>{_THEM})", re.IGNORECASE)
_CLAUSE_CUT = re.compile(r"[,;.\n]|\b(?:and|while|but|y|et|und|e|en|и|а)\b|、|，|और|و", re.IGNORECASE)


def read_answer(question: Question, text: str | None, labels: ActionLabels) -> str | None:
    """The answer ``text`` gives to ``question``, canonical, or None if it cannot be read.

    Read as a person would score it. A JSON object with the asked-for key (``you`` and ``they``,
    ``rounds``, ``probability``, ``action``) is read first. Numbers may be digits or words in the
    languages the move parser reads (:mod:`harness.players.model.number_words`: "three rounds"), round
    numbers ("In round 3, ...") aside. For a payoff question: the number said of each player ("they
    get 5 and I get 0" is 0,5), else one number said of both ("1 each", "We both get 1 point." is 1,1),
    else the first two numbers in order. For the horizon, the first number (a percentage is divided by
    100). For the last move, the parser's reading of a move
    (:func:`~harness.players.model.parsing.policy.parse_action`), or of the answer told in the past
    ("In round 1 I chose C." is C; "In round 1 I chose D." is D, a wrong answer, not an unreadable one).
    """
    if text is None:
        return None
    kind = question.kind
    if kind == "last_move":
        parsed = parse_action(text, labels)
        if not parsed.ok:  # "In round 1 I chose C.": the past told as the move parser reads a present choice
            parsed = parse_action(_as_present(text), labels)
        return parsed.action if parsed.ok else None
    obj = _json_object(text)
    if kind == "payoff":
        you, they = (None, None) if obj is None else (obj.get("you"), obj.get("they"))
        if _is_number(you) and _is_number(they):
            return f"{_num(float(you))},{_num(float(they))}"
        return _payoff(text)
    value = None if obj is None else obj.get("rounds", obj.get("probability"))
    if _is_number(value):
        return _num(float(value))
    numbers = _numbers(text)
    return _num(numbers[0].value) if numbers else None


def _payoff(text: str) -> str | None:
    """Own points, then the other's: by who each number is said of ("they get 5, I get 0"), else one
    number said of both ("1 each", "We both get 1 point."), else the first two numbers in order."""
    numbers = _numbers(text)
    mine = [n for n in numbers if _role(text, n) == "me"]
    theirs = [n for n in numbers if _role(text, n) == "them"]
    if len(mine) == 1 and len(theirs) == 1:
        return f"{_num(mine[0].value)},{_num(theirs[0].value)}"
    if len({n.value for n in numbers}) == 1 and _BOTH.search(text):
        return f"{_num(numbers[0].value)},{_num(numbers[0].value)}"
    return f"{_num(numbers[0].value)},{_num(numbers[1].value)}" if len(numbers) >= 2 else None


def _role(text: str, n: Number) -> str | None:
    """Whose points ``n`` are: the last role word in its clause before it, else the first just after it."""
    cuts = [m.end() for m in _CLAUSE_CUT.finditer(text, 0, n.start)]
    before = list(_ROLE.finditer(text, cuts[-1] if cuts else 0, n.start))
    if before:
        return "me" if before[-1].group("me") else "them"
    cut = _CLAUSE_CUT.search(text, n.end)
    after = _ROLE.search(text, n.end, cut.start() if cut else len(text))
    if after:
        return "me" if after.group("me") else "them"
    return None


# The first person's past choice in the languages the parser reads, and its present: the last-move answer
# is a past choice, and the move parser reads present ones ("I chose C" -> "I choose C").
_PAST_TO_PRESENT = (
    (r"\bi\s+(?:had\s+|have\s+)?(?:chose|chosen)\b", "I choose"),
    (r"\bi\s+(?:had\s+|have\s+)?(?:played|picked|selected)\b", "I pick"),
    (r"\bi\s+went\s+(?:with|for)\b", "I go with"),
    (r"\bi\s+(?:had\s+|have\s+)?cooperated\b", "I cooperate"),
    (r"\bi\s+(?:had\s+|have\s+)?defected\b", "I defect"),
    (
        r"\bmy\s+(?:last\s+|previous\s+)?(?:move|choice|action|pick|answer)(?:\s+(?:in|for)\s+(?:round\s+\d+|that\s+round))?\s+was\b",
        "my move is",
    ),
    (r"\b(?:yo\s+)?(?:eleg[íi]|escog[íi]|jugu[ée])\b", "elijo"),
    (r"\b(?:yo\s+)?coopere\b|\b(?:yo\s+)?cooper[ée]\b", "coopero"),
    (r"\bj['’]ai\s+(?:choisi|jou[ée])\b", "je choisis"),
    (r"\bich\s+(?:habe|hatte)\s+(?=\S+\s+(?:gew[äa]hlt|gespielt))", "ich wähle "),
    (r"\bich\s+(?:w[äa]hlte|spielte)\b", "ich wähle"),
    (r"\b(?:eu\s+)?(?:escolhi|joguei)\b", "escolho"),
    (r"\b(?:io\s+)?ho\s+(?:scelto|giocato)\b|\bscelsi\b", "scelgo"),
    (r"\bik\s+(?:koos|speelde)\b", "ik kies"),
    (r"\bя\s+(?:выбрал[аи]?|сыграл[аи]?)\b", "я выбираю"),
    (r"我(?:选择了|选了|出了)", "我选择"),
    (r"を選びました|を選択しました", "を選びます"),
    (r"를\s*선택했습니다|을\s*선택했습니다|를\s*골랐습니다", "를 선택합니다"),
    (r"मैंने", "मैं"),
    (r"اخترت", "أختار"),
)
_PAST_RES = tuple((re.compile(pattern, re.IGNORECASE), present) for pattern, present in _PAST_TO_PRESENT)
_DROP_ROUND = re.compile(
    r"\b(?:in|for)\s+(?:round\s+\w+|the\s+(?:last|previous)\s+round|that\s+round)\b,?", re.IGNORECASE
)


def _as_present(text: str) -> str:
    """The answer with its first-person past choices in the present and "in round N" dropped."""
    text = _DROP_ROUND.sub(" ", text)
    for pattern, present in _PAST_RES:
        text = pattern.sub(present, text)
    return text


def is_correct(question: Question, answer: str | None) -> bool:
    """Whether ``answer`` (canonical, from :func:`read_answer`) is the right one. Numbers are compared
    as numbers (1e-9 apart at most), so "8" and "8.0" are the same answer."""
    if answer is None:
        return False
    if question.kind == "last_move":
        return answer == question.expected
    got, want = answer.split(","), question.expected.split(",")
    return len(got) == len(want) and all(abs(float(g) - float(w)) <= 1e-9 for g, w in zip(got, want, strict=True))


def _json_object(text: str) -> dict[str, object] | None:
    for match in _JSON.finditer(text):
        try:
            obj = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(obj, dict):
            return {str(k).strip().lower(): v for k, v in obj.items()}
    return None


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _numbers(text: str) -> list[Number]:
    """The numbers of an answer, in digits or words, without round numbers ("In round 3, ...") and
    without the words that say "each" ("3 puntos cada uno": no "uno")."""
    text = _BOTH.sub(lambda m: " " * len(m.group()), text)
    return [n for n in numbers_in(text) if not _ROUND_BEFORE.search(text, 0, n.start)]
