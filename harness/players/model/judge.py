"""A judge model for replies the parser refused (``parse: {judge: provider/model}``, off by default).

The parser refuses what it would have to guess at; a refused reply costs a re-ask and, when re-asks fail, a
fallback move the model did not choose. A judge reads such a reply as a person would: it is shown the two
labels (in the order the player saw them) and the reply, nothing of the game, and answers ``first``,
``second`` or ``unclear``. A move it names decides the round (reader ``judge``); ``unclear``, or an answer that
is none of the three, leads to the re-ask as before. Each judgment is a call of its own (``calls.purpose =
'judge'``), sent through the call path like any other: cached, costed, rate-limited and recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from harness.calls.limits import EndpointLimiter
from harness.calls.path import Reading
from harness.calls.record import Reader
from harness.game.rules import Action
from harness.providers.base import Message, PromptFacts, Provider, SamplingParams
from harness.providers.mock import JUDGING

JUDGE_PARAMS = SamplingParams(temperature=0.0, max_tokens=16)
"""A judgment is one word: asked deterministically, with room for a model that adds a full stop."""


class Verdict(StrEnum):
    FIRST = "first"
    SECOND = "second"
    UNCLEAR = "unclear"


@dataclass(frozen=True, slots=True)
class Judge:
    """The judge model of a player: its name (``provider/model``), provider and endpoint limiter."""

    name: str
    provider: Provider
    limiter: EndpointLimiter
    params: SamplingParams = JUDGE_PARAMS


def judge_messages(reply: str, first: str, second: str) -> list[Message]:
    """What the judge is shown: the two labels and the reply, and the three answers it may give."""
    return [
        {
            "role": "system",
            "content": "You read one reply of a player who had to choose one of two options, and say which option "
            "the reply chose. Answer with one word: first, second or unclear.",
        },
        {
            "role": "user",
            "content": f'The options were labelled "{first}" (the first) and "{second}" (the second).\n\n'
            f'The reply:\n"""\n{reply}\n"""\n\n'
            f"Which option does the reply choose for this round? Answer first (for {first}), second (for {second}), "
            "or unclear (if it does not clearly choose one, hedges, or chooses both).",
        },
    ]


def judge_facts(first: str, second: str) -> PromptFacts:
    """The facts a stand-in judge gets: the labels in the order shown (see the mock)."""
    return PromptFacts(
        cooperate=first, defect=second, option_order="CD", answer_format=JUDGING, own_moves=(), opponent_moves=()
    )


_WORD = re.compile(r"[^\W\d_]+")
_NEGATIONS = frozenset({"not", "no", "neither", "nor", "never", "isn", "t"})


def read_verdict(text: str, shown: tuple[Action, Action]) -> Reading[Verdict | None]:
    """The judgment a judge's answer gives: the move it names (``shown``: the moves in the order the labels were
    shown), or none for ``unclear``; an answer whose words are not exactly one of the three is unreadable."""
    words = {w.casefold() for w in _WORD.findall(text)}
    named = [v for v in Verdict if v.value in words]
    # "first." or "**Second**" or "The answer: first"; not a paragraph, both, or a negation ("not first").
    if len(named) != 1 or len(words) > 4 or words & _NEGATIONS:
        return Reading(None, unreadable="the judge's answer is not one of first, second or unclear")
    verdict = named[0]
    if verdict is Verdict.UNCLEAR:
        return Reading(verdict)
    move = shown[0] if verdict is Verdict.FIRST else shown[1]
    return Reading(verdict, action=move, reader=Reader.JUDGE)
