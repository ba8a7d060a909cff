"""The record of one model call: the type both the call path (which makes it) and the store
(which writes it to the ``calls`` table) take, so neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from harness.states import CallOutcome


class Reader(StrEnum):
    """What decided a model's move in a round (the ``reader`` of the ``move_readers`` view). The first four
    also name what read a call's move (``calls.reader``): a round's reader is its deciding call's, but
    ``re-ask`` when that call answered a re-ask, and ``fallback`` when no call gave a move."""

    PARSER = "parser"
    """The free-text parser read the reply."""
    LAST_LINE = "last_line"
    """The strict last-line reader read the reply (``parse.reader: last_line``, Payne & Alloui-Cros's rule)."""
    STRUCTURED = "structured"
    """The move was the structured reply's ``action`` field (``answer_format: structured``)."""
    JUDGE = "judge"
    """A judge model said which option a reply the parser refused had chosen (``parse.judge``)."""
    REASK = "re-ask"
    """The move was read from the answer to a re-ask (by the parser or from its structured field)."""
    FALLBACK = "fallback"
    """No reply gave a move: the harness played the fallback move (a flagged round)."""


@dataclass(slots=True)
class CallRecord:
    """One row of the ``calls`` table."""

    game_id: int
    round: int
    player: str
    attempt: int
    provider: str
    model: str
    request_json: str
    response_text: str | None
    action: str | None
    outcome: CallOutcome
    error: str | None
    duration_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cached: bool
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC).replace(tzinfo=None))
    purpose: str = "move"  # move | comprehension (see harness.players.model.comprehension) | judge (see parse.judge)
    option_order: str | None = None  # CD | DC: the order the two options were shown in; None when not shuffled
    answer_format: str | None = None  # free | json | label | structured: how the reply was asked for
    reader: str | None = None  # parser | last_line | structured | judge: what read this call's move; None: none
    # Among input_tokens, those the provider read from its prompt cache and wrote to it; None when it said nothing
    # of its cache, and on a response-cache hit (nothing was sent, so the provider's cache was not asked).
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None
    prompt_layout: str | None = None  # the prompt layout (template version) the request was built with; None: unset
    # The service tier (standard, flex) the attempt was sent at, its price tier; None when nothing was bought: a
    # response-cache hit, an offline (mock) answer, and every row written before the tier was recorded.
    service_tier: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer already paid for, as the call path takes it again (from the cache, memory or the results
    file): its text and, when the provider withheld the answer, why (``refusal``, the ``calls.error`` of a
    ``refused`` call), so that a refusal taken again is recorded as a refusal, not as an empty answer."""

    text: str
    refusal: str | None = None
