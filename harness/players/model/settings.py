"""What a config file sets on a model player besides its prompts: how its replies are read when they cannot
be (``parse:``) and its comprehension check (``comprehension:``).

Kept apart from the parser (:mod:`harness.players.model.parsing`) and the check
(:mod:`harness.players.model.comprehension`), which use them, so that reading a config, which every command
does, does not load either: a tournament of classic strategies never parses a reply.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

FailureMode = Literal["defect", "cooperate", "random", "fail"]


class ReplyReader(StrEnum):
    """Which rule reads a free-text reply (``parse.reader``). A protocol that cites a paper must read replies as
    the paper's code did: a reply the free-text parser reads may be unreadable under the paper's rule."""

    FREE_TEXT = "free_text"
    """The free-text parser (:mod:`harness.players.model.parsing.policy`): labels, words, JSON, statements and
    revisions anywhere in the reply, in fifteen languages."""
    LAST_LINE = "last_line"
    """Payne & Alloui-Cros (2025)'s rule (:mod:`harness.players.model.parsing.last_line`): at least two non-empty
    lines, the last of which, stripped and upper-cased, is exactly one of the two labels; anything else is
    unreadable."""


class ParsePolicy(BaseModel):
    """How hard to try: ``max_retries`` re-asks after the first failed parse, then ``on_failure``.

    The default counts an unreadable reply as D and flags the round, which keeps a game
    going while letting analyses drop flagged rounds; ``fail`` stops the game instead.
    ``reader`` chooses the rule that reads a free-text reply (:class:`ReplyReader`). ``parse: {reader:
    last_line, max_retries: 0, on_failure: cooperate}`` is Payne & Alloui-Cros (2025)'s reading: an unreadable
    reply is C, with no re-ask (flagged here, as every fallback move is).
    The same type is a model player's ``parse:`` setting in a config file.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    max_retries: int = Field(2, ge=0, le=10)
    on_failure: FailureMode = "defect"
    # Left out of the dump at its default, so a model's stored settings (games.params_a) read as before it existed.
    reader: ReplyReader = Field(
        ReplyReader.FREE_TEXT, strict=False, exclude_if=lambda reader: reader is ReplyReader.FREE_TEXT
    )


QuestionKind = Literal["payoff", "horizon", "last_move"]
KINDS: tuple[QuestionKind, ...] = ("payoff", "horizon", "last_move")
MAX_CHECK_ROUND = 1_000_000
PAYOFF_OUTCOMES = 4  # CC, CD, DC, DD: one payoff question each


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

    def asked_at(self, round: int) -> int:
        """How many questions are asked before the move of ``round`` (one call each, before re-asks): a payoff
        question for each of the four outcomes, one on the horizon, and one on the last move from round 2, as
        :func:`harness.players.model.comprehension.questions` asks them. The plan, the live progress and the
        cost estimate count them from here, without loading the check itself."""
        if round not in self.rounds:
            return 0
        per_kind = {"payoff": PAYOFF_OUTCOMES, "horizon": 1, "last_move": 1 if round > 1 else 0}
        return sum(per_kind[kind] for kind in self.questions)
