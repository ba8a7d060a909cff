"""The record of one model call: the type both the call path (which makes it) and the store
(which writes it to the ``calls`` table) take, so neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from harness.states import CallOutcome


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
    purpose: str = "move"  # move | comprehension (a question about the rules, see harness.players.model.comprehension)
    option_order: str | None = None  # CD | DC: the order the two options were shown in; None when not shuffled


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer already paid for, as the call path takes it again (from the cache, memory or the results
    file): its text and, when the provider withheld the answer, why (``refusal``, the ``calls.error`` of a
    ``refused`` call), so that a refusal taken again is recorded as a refusal, not as an empty answer."""

    text: str
    refusal: str | None = None
