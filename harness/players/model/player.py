"""A language model as a player: render the prompt, ask through the call path, parse, re-ask.

The agent never sleeps, retries a request or counts tokens: the call path does. It hands the call
path a reader for each answer (:func:`read_move`, :func:`read_question`), so the call's record and
outcome are made in one place, with the move read or the reason none could be. It owns the
conversation of one round: the rendered prompt, and when the answer cannot be read, the
model's answer and a short corrective message, up to ``parse.max_retries`` times; after the
last failure the configured fallback move is played and the round is flagged.

With ``answer_format: structured`` the move is asked for through the provider's constrained output (a
:class:`~harness.providers.structured.ReplySchema` in the request) and read from the reply's ``action`` field
(:func:`read_structured`); a reply that breaks the schema is unreadable, like a free reply the parser refuses.
With a judge (``parse.judge``, :mod:`harness.players.model.judge`), a refused reply is first shown to the judge
model, and a move it names decides the round before any re-ask.

It also owns the round's prompt controls: the order the options are shown in (with
``prompts.shuffle_options``, drawn per round from the game's seed and the seat, so a resumed game
shows the same orders) and, in the rounds of a comprehension check, the questions about the rules,
each asked in a side conversation before the move (see :mod:`harness.players.model.comprehension`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TypeVar

from harness.calls.limits import EndpointLimiter
from harness.calls.path import CallFailed, CallPath, CallResult, CallTag, Reading
from harness.calls.record import CallRecord, Reader
from harness.game.rules import PayoffMatrix
from harness.game.seeds import derive_seed
from harness.game.view import Decision, RoundView
from harness.players.model.comprehension import (
    ComprehensionAnswer,
    Question,
    is_correct,
    questions,
    read_answer,
)
from harness.players.model.judge import Judge, Verdict, judge_facts, judge_messages, read_verdict
from harness.players.model.labels import ActionLabels
from harness.players.model.parsing.last_line import read_last_line
from harness.players.model.parsing.policy import ParseResult, fallback_action, parse_action
from harness.players.model.prompts.builder import OptionOrder, Prompt, PromptBuilder, RunningPrompt
from harness.players.model.prompts.context import option_moves
from harness.players.model.settings import ComprehensionSettings, ParsePolicy, ReplyReader
from harness.providers.base import CacheHints, FailureKind, Message, PromptFacts, Provider, Sample, SamplingParams
from harness.providers.structured import ReplySchema, ReplyViolation
from harness.providers.tiers import CacheTtl
from harness.states import CallOutcome

T = TypeVar("T")


def read_move(text: str, labels: ActionLabels, payoffs: PayoffMatrix | None = None) -> Reading[ParseResult]:
    """A move answer as the call path records it: the move read, or why none could be. ``payoffs`` is the game's
    matrix as the player sees it (its own payoffs first; :func:`as_seen_by`), so a reply that names its option
    by its payoffs ("the option where we both get 3") is read as the prompt meant it."""
    parsed = parse_action(text, labels, payoffs)
    return Reading(parsed, action=parsed.action, unreadable=None if parsed.ok else parsed.reason, reader=Reader.PARSER)


def read_move_last_line(text: str, labels: ActionLabels) -> Reading[ParseResult]:
    """A move answer read by the strict last-line rule (``parse.reader: last_line``; see
    :mod:`harness.players.model.parsing.last_line`), recorded as its own reader."""
    parsed = read_last_line(text, labels)
    return Reading(parsed, action=parsed.action, unreadable=parsed.reason, reader=Reader.LAST_LINE)


def as_seen_by(payoffs: PayoffMatrix, seat: str) -> PayoffMatrix:
    """The game's matrix from ``seat``'s side: its own move and payoff first in every cell, as its prompt shows
    them. The matrix is kept from player A's side, so seat B's view swaps each cell and the two unequal ones."""
    if seat == "a":
        return payoffs
    cc, cd, dc, dd = ((b, a) for a, b in (payoffs.cc, payoffs.dc, payoffs.cd, payoffs.dd))
    return PayoffMatrix(cc=cc, cd=cd, dc=dc, dd=dd)


def read_structured(text: str, reply: ReplySchema, labels: ActionLabels) -> Reading[ParseResult]:
    """A structured move answer: the label in its ``action`` field, or why the reply breaks its schema."""
    found = reply.read(text)
    if isinstance(found, ReplyViolation):
        parsed = ParseResult(None, found.reason, "structured")
    else:
        parsed = ParseResult("C" if found == labels.cooperate else "D", method="structured")
    return Reading(parsed, action=parsed.action, unreadable=parsed.reason, reader=Reader.STRUCTURED)


def read_question(question: Question, text: str, labels: ActionLabels) -> Reading[str | None]:
    """A comprehension answer as the call path records it: the answer read, or that none could be."""
    answer = read_answer(question, text, labels)
    unreadable = f"no answer to the {question.kind} question could be read" if answer is None else None
    return Reading(answer, unreadable=unreadable)


class GameFailed(Exception):
    """The game cannot go on: the model gave no readable move and ``on_failure`` is ``fail``. Asking
    again would ask the same, so the failure is permanent (``pdbench resume --retry-failed`` replays it)."""

    kind = FailureKind.PERMANENT

    def __init__(self, reason: str, records: list[CallRecord]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.records = records


@dataclass(frozen=True, slots=True)
class ModelPlayer:
    """Everything one model player needs, shared by all its games."""

    name: str
    provider: Provider
    limiter: EndpointLimiter
    prompts: PromptBuilder
    params: SamplingParams
    parse: ParsePolicy
    comprehension: ComprehensionSettings | None = None
    reply: ReplySchema | None = None  # answer_format: structured; None for a reply in free text
    judge: Judge | None = None  # parse.judge: reads a reply the parser refused, before any re-ask
    cache_ttl: CacheTtl = CacheTtl.FIVE_MINUTES  # how long Anthropic keeps the prompt's cached prefixes

    @property
    def answer_format(self) -> str:
        """How a move is asked for, as ``calls.answer_format`` records it."""
        return "structured" if self.reply is not None else self.prompts.settings.answer_format


def option_order(game_seed: int, seat: str, round_no: int) -> OptionOrder:
    """The order the options are shown in to ``seat`` in round ``round_no`` of the game seeded ``game_seed``
    when they are shuffled: a fair draw of its own, so it disturbs no other random stream of the game
    and is the same however often the game is played (a resume replays it)."""
    return "DC" if derive_seed(game_seed, "options", seat, round_no) & 1 else "CD"


class LLMAgent:
    """One model in one seat of one game."""

    def __init__(
        self,
        player: ModelPlayer,
        calls: CallPath,
        *,
        seat: str,
        game_id: int,
        game_seed: int,
        sample: Sample,
        rng: random.Random,
        sample_seed: int | None = None,
        on_question: Callable[[], object] | None = None,
    ) -> None:
        self.player = player
        self.on_question = on_question  # told of each comprehension question answered (the live progress)
        # Every seat of every game is its own draw (``sample``): its requests carry a sampling seed of
        # their own, so a provider that takes a seed draws them independently too (one without ignores it).
        self.params = replace(player.params, seed=sample_seed) if sample_seed is not None else player.params
        self.name = player.name
        self.calls = calls
        self.seat = seat
        self.game_id = game_id
        self.sample = sample
        self.rng = rng
        self.game_seed = game_seed  # the option order of each round derives from it (see option_order)
        self.records: list[CallRecord] = []
        self.answers: list[ComprehensionAnswer] = []
        self.running = RunningPrompt()  # this game's prompt so far, extended a round at a time
        # The provider cache key of this game and seat: a digest of the sample, so the same draw of the same game is
        # routed alike in every run, and nothing else is.
        digest = hashlib.sha256(f"{sample.condition}\x00{sample.replicate}\x00{sample.seat}".encode()).hexdigest()
        self.cache_key = f"pdbench-{digest[:24]}"

    def take_records(self) -> list[CallRecord]:
        """The calls made since the last take (to be written with their round)."""
        out, self.records = self.records, []
        return out

    def take_answers(self) -> list[ComprehensionAnswer]:
        """The comprehension answers given since the last take (to be written with their round)."""
        out, self.answers = self.answers, []
        return out

    async def act(self, view: RoundView) -> Decision:
        p = self.player
        settings = p.prompts.settings
        shuffled = settings.shuffle_options
        drawn_for = "both" if settings.shared_order else self.seat  # one order for both seats (Akata et al.)
        order = option_order(self.game_seed, drawn_for, view.round) if shuffled else "CD"
        recorded = order if shuffled else None  # calls.option_order: NULL when the order is not shuffled
        if p.comprehension is not None and view.round in p.comprehension.rounds:
            await self._check(view, order, recorded, p.comprehension)
        prompt = p.prompts.prompt(view, order, self.running)
        messages = prompt.messages
        cache = self._cache_hints(prompt)
        facts = p.prompts.facts(view, order)
        tag = CallTag(
            game_id=self.game_id,
            round=view.round,
            player=self.seat,
            sample=self.sample,
            option_order=recorded,
            answer_format=p.answer_format,
            prompt_layout=p.prompts.layout_name,
        )
        params = self.params if p.reply is None else replace(self.params, reply=p.reply)
        read = self._reader(view)
        attempt = 1
        judged = 0  # judge calls so far in this round: numbered 1, 2, ... apart from the move's
        for ask in range(p.parse.max_retries + 1):
            result = await self._ask(messages, tag, attempt, facts, read, params, cache)
            attempt += len(result.records)
            parsed = result.reading.value
            if parsed.action is not None:
                return Decision(parsed.action)
            if p.judge is not None and result.text.strip() and result.records[-1].outcome is CallOutcome.UNPARSEABLE:
                judgment = await self._judge(p.judge, result.text, view.round, order, judged + 1)
                judged += len(judgment.records)
                if judgment.reading.action is not None:
                    return Decision(judgment.reading.action)  # type: ignore[arg-type]
            if ask < p.parse.max_retries:
                messages = [
                    *messages,
                    {"role": "assistant", "content": result.text},
                    {"role": "user", "content": p.prompts.reask(parsed, order, p.parse.reader)},
                ]
        fallback = fallback_action(p.parse, self.rng)
        if fallback is None:
            raise GameFailed(
                f"{self.name} gave no readable move in round {view.round} after "
                f"{p.parse.max_retries + 1} tries (on_failure: fail)",
                self.take_records(),
            )
        return Decision(fallback, flagged=True)

    def _cache_hints(self, prompt: Prompt) -> CacheHints:
        """Where ``prompt``'s reusable prefixes end, with this game and seat's cache key and the player's TTL."""
        return CacheHints(key=self.cache_key, breaks=prompt.breaks, ttl=self.player.cache_ttl)

    def _reader(self, view: RoundView) -> Callable[[str], Reading[ParseResult]]:
        """What reads this player's move answers: the structured reply's field, or the free-text rule that
        ``parse.reader`` names (the parser, which may read an option by its payoffs, or the last-line rule)."""
        p = self.player
        labels = p.prompts.settings.labels
        if p.reply is not None:
            return partial(read_structured, reply=p.reply, labels=labels)
        if p.parse.reader is ReplyReader.LAST_LINE:
            return partial(read_move_last_line, labels=labels)
        return partial(read_move, labels=labels, payoffs=as_seen_by(view.payoffs, view.seat))

    async def _judge(
        self, judge: Judge, reply: str, round_no: int, order: OptionOrder, attempt: int
    ) -> CallResult[Verdict | None]:
        """Ask the judge which option ``reply`` chose, showing the labels in the order the player saw them; a
        call of its own (purpose ``judge``), in this seat's sample, so a second run is answered from the cache."""
        labels = self.player.prompts.settings.labels
        shown = option_moves(order)
        first, second = (labels.label(m) for m in shown)
        tag = CallTag(game_id=self.game_id, round=round_no, player=self.seat, sample=self.sample, purpose="judge")
        try:
            result = await self.calls.request(
                judge.provider,
                judge.limiter,
                judge_messages(reply, first, second),
                judge.params,
                tag,
                attempt,
                judge_facts(first, second),
                read=partial(read_verdict, shown=shown),
            )
        except CallFailed as failed:
            self.records.extend(failed.records)
            raise
        self.records.extend(result.records)
        return result

    async def _ask(
        self,
        messages: list[Message],
        tag: CallTag,
        attempt: int,
        facts: PromptFacts,
        read: Callable[[str], Reading[T]],
        params: SamplingParams | None = None,
        cache: CacheHints | None = None,
    ) -> CallResult[T]:
        """One request of this player; every attempt it made is kept for the round's record, failed or not.
        ``params``: the move's (with the reply schema of a structured answer); by default the player's own."""
        p = self.player
        try:
            result = await self.calls.request(
                p.provider, p.limiter, messages, params or self.params, tag, attempt, facts, read=read, cache=cache
            )
        except CallFailed as failed:
            self.records.extend(failed.records)
            raise
        self.records.extend(result.records)
        return result

    async def _check(
        self, view: RoundView, order: OptionOrder, recorded: str | None, settings: ComprehensionSettings
    ) -> None:
        """Ask each question of the comprehension check, one call each, in a side conversation that the
        move's conversation never sees; record each answer and whether it is right. The calls are numbered
        1, 2, ... within the player's round (apart from the move's), and an answer is not asked again."""
        p = self.player
        labels = p.prompts.settings.labels
        tag = CallTag(
            game_id=self.game_id,
            round=view.round,
            player=self.seat,
            sample=self.sample,
            purpose="comprehension",
            option_order=recorded,
            answer_format=p.prompts.settings.answer_format,
            prompt_layout=p.prompts.layout_name,
        )
        attempt = 1
        for question in questions(view, settings, labels, order):
            prompt = p.prompts.question_prompt(view, question.ask, order)
            facts = p.prompts.facts(view, order, question.ask)
            read = partial(read_question, question, labels=labels)
            result = await self._ask(prompt.messages, tag, attempt, facts, read, cache=self._cache_hints(prompt))
            attempt += len(result.records)
            final = result.records[-1]
            answer = result.reading.value
            self.answers.append(
                ComprehensionAnswer(
                    game_id=self.game_id,
                    round=view.round,
                    player=self.seat,
                    question=question.id,
                    kind=question.kind,
                    expected=question.expected,
                    answer=answer,
                    correct=is_correct(question, answer),
                    attempt=final.attempt,
                )
            )
            if self.on_question is not None:
                self.on_question()
