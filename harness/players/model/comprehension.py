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
from typing import Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from harness.game.horizon import FixedHorizonInfo, GeometricHorizonInfo
from harness.game.view import RoundView
from harness.players.model.parsing.policy import ActionLabels, parse_action
from harness.players.model.prompts.context import Ask, OptionOrder, number_text, payoff_outcomes

QuestionKind = Literal["payoff", "horizon", "last_move"]
KINDS: tuple[QuestionKind, ...] = ("payoff", "horizon", "last_move")
MAX_CHECK_ROUND = 1_000_000


class ComprehensionSettings(BaseModel):
    """``comprehension: {rounds: [1, 25, 50], questions: [payoff, horizon, last_move]}`` on a model agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rounds: tuple[StrictInt, ...] = Field(min_length=1, description="rounds before whose move the questions are asked")
    questions: tuple[QuestionKind, ...] = Field(KINDS, min_length=1, description="which kinds of question to ask")

    @field_validator("rounds")
    @classmethod
    def _rounds(cls, rounds: tuple[int, ...]) -> tuple[int, ...]:
        bad = [r for r in rounds if not 1 <= r <= MAX_CHECK_ROUND]
        if bad:
            raise ValueError(f"rounds are numbered from 1 (1 = before the first move); got {bad[0]}")
        twice = sorted({r for r in rounds if rounds.count(r) > 1})
        if twice:
            raise ValueError(f"round {twice[0]} is listed twice; list each round once")
        return tuple(sorted(rounds))

    @field_validator("questions")
    @classmethod
    def _questions(cls, questions: tuple[QuestionKind, ...]) -> tuple[QuestionKind, ...]:
        if len(set(questions)) != len(questions):
            raise ValueError("a kind of question is listed twice; list each once")
        return tuple(k for k in KINDS if k in questions)  # always asked in the same order


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


_NUMBER = re.compile(r"(?<![\w.])[-−]?\d+(?:\.\d+)?(?!\w)\s*%?")
_ROUND_REF = re.compile(r"\bround\s+\d+\b", re.IGNORECASE)
_JSON = re.compile(r"\{[^{}]*\}")


def read_answer(question: Question, text: str | None, labels: ActionLabels) -> str | None:
    """The answer ``text`` gives to ``question``, canonical, or None if it cannot be read.

    A JSON object with the asked-for key (``you`` and ``they``, ``rounds``, ``probability``, ``action``)
    is read first. Otherwise: for a payoff question, the first two numbers (not counting round numbers,
    "round 3"); for the horizon, the first number (a percentage is divided by 100); for the last move,
    the parser's reading of a move (:func:`~harness.players.model.parsing.policy.parse_action`).
    """
    if text is None:
        return None
    kind = question.kind
    if kind == "last_move":
        parsed = parse_action(text, labels)
        return parsed.action if parsed.ok else None
    obj = _json_object(text)
    if kind == "payoff":
        you, they = (None, None) if obj is None else (obj.get("you"), obj.get("they"))
        if _is_number(you) and _is_number(they):
            return f"{_num(float(you))},{_num(float(they))}"
        numbers = _numbers(_ROUND_REF.sub(" ", text))
        return f"{_num(numbers[0])},{_num(numbers[1])}" if len(numbers) >= 2 else None
    value = None if obj is None else obj.get("rounds", obj.get("probability"))
    if _is_number(value):
        return _num(float(value))
    numbers = _numbers(_ROUND_REF.sub(" ", text))
    return _num(numbers[0]) if numbers else None


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


def _numbers(text: str) -> list[float]:
    out = []
    for match in _NUMBER.finditer(text):
        token = match.group(0).strip().replace("−", "-")
        percent = token.endswith("%")
        value = float(token.rstrip("%").strip())
        out.append(value / 100 if percent else value)
    return out
