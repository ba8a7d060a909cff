"""One request of the call path and its records: what a caller asks, what it gets back, and the one
place where an attempt's ``calls`` row, and its outcome, is made.

A request is identified twice: by its ``request_json`` (the messages, the sampling parameters
really sent and the sample identity, as ``json.dumps`` writes them; the ``calls`` row keeps it) and
by its cache key (:func:`harness.calls.cache.keys.cache_key`, which also names the provider, model and base
URL). An attempt's outcome follows from the provider's fault when it failed, and from the caller's
reading of the answer when it answered (see :class:`Reading`).

No key leaves or is stored through a request: one whose messages hold a key this process knows
(:func:`harness.providers.keys.key_in`: the environment's provider keys, keys named by ``api_key_env``) is refused
when it is made (:class:`KeyInPrompt`, before any cache lookup or send), whatever put the key there (a
template, a persona, a file copied into one), and the answer and error of every row are scrubbed of keys.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Generic, TypeVar

from harness.calls.cache.keys import cache_key
from harness.calls.limits import EndpointLimiter
from harness.calls.record import CallRecord
from harness.providers.base import (
    CacheHints,
    FailureKind,
    Fault,
    Message,
    PromptFacts,
    Provider,
    Sample,
    SamplingParams,
)
from harness.providers.keys import key_in, scrub
from harness.providers.tiers import ServiceTier
from harness.states import CallOutcome

T = TypeVar("T", covariant=True)  # a Reading of a move is a Reading of an object


@dataclass(slots=True)
class CallStats:
    """Counters the live display shows; updated by every call."""

    calls: int = 0
    cached: int = 0
    retries: int = 0
    rate_limited: int = 0
    parse_failures: int = 0
    """Move answers that could not be read (each re-asked, or played as the fallback move)."""
    unreadable_other: int = 0
    """Answers to other questions (comprehension) that could not be read: scored as wrong, never a move."""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those the provider read from its prompt cache (never a response-cache hit)."""
    cache_saved_usd: float = 0.0
    """Dollars the provider's prompt cache saved against the same tokens at the input price (see
    :meth:`~harness.calls.pricing.PriceTable.cache_saving`): negative while writes cost more than reads saved."""
    cache_reported: bool = False
    """Whether any answer said anything of the provider's prompt cache: the counters show it only then."""


class CallFailed(Exception):
    """A request could not be completed (not retryable, or retries exhausted). ``records`` holds
    the attempts made, which were paid for or at least sent, and must be recorded all the same."""

    def __init__(
        self, reason: str, records: list[CallRecord] | None = None, kind: FailureKind = FailureKind.PERMANENT
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.records = records or []
        self.kind = kind


class KeyInPrompt(CallFailed):
    """The messages of a request hold an API key: nothing was sent or stored, and the game fails with the
    reason (a prompt that holds a key would hold it in every round)."""


class BudgetExhausted(CallFailed):
    """``--max-cost`` was reached: no new paid call may start."""


class Stopped(CallFailed):
    """The run was asked to stop (Ctrl-C): no new attempt is sent, no retry wait is sat out."""


@dataclass(frozen=True, slots=True)
class CallTag:
    """Where a call belongs (game, round, seat), which draw of the model it is (``sample``), what it is
    for (a move, a comprehension question or a judgment), in which order the prompt showed the options and
    how the reply was asked for (``answer_format``: free, json, label or structured); ``prompt_layout``: the
    layout (template version) the prompt was built with, recorded as ``calls.prompt_layout`` (None: unset)."""

    game_id: int
    round: int
    player: str
    sample: Sample
    purpose: str = "move"
    option_order: str | None = None
    answer_format: str | None = None
    prompt_layout: str | None = None


@dataclass(frozen=True, slots=True)
class Reading(Generic[T]):
    """What the caller made of an answer: ``value`` (a parsed move, a comprehension answer), the move
    to record in ``calls.action`` and what read it (``reader``, a :class:`~harness.calls.record.Reader`
    value: ``calls.reader``), and why nothing could be read (``unreadable``; the attempt's outcome is then
    ``unparseable``)."""

    value: T
    action: str | None = None
    unreadable: str | None = None
    reader: str | None = None


def take_as_is(text: str) -> Reading[str]:
    """The reading of a caller that takes any answer as it is."""
    return Reading(text)


def refusal_reason(kind: str) -> str:
    """What ``calls.error`` says of an answer the provider withheld (``kind``: its finish or stop reason)."""
    return f"the provider refused to answer ({kind})"


def refused(read: Callable[[str], Reading[T]], refusal: str) -> Reading[T]:
    """The reading of a withheld answer: no move and nothing read, whatever text came with the refusal (an
    answer cut short by a content filter is not the model's choice); the caller sees what it sees of an
    empty answer (a re-ask, then its fallback), and the record says it was refused."""
    return replace(read(""), action=None, unreadable=refusal, reader=None)


@dataclass(frozen=True, slots=True)
class CallResult(Generic[T]):
    text: str
    reading: Reading[T]
    records: list[CallRecord]
    cached: bool


def outcome(fault: Fault | None, reading: Reading[object] | None, refusal: str | None = None) -> CallOutcome:
    """The outcome of one attempt: from its fault when it failed, a refusal when the provider withheld the
    answer, else from the caller's reading."""
    if fault is Fault.RATE_LIMITED:
        return CallOutcome.RATE_LIMITED
    if fault is Fault.TIMEOUT:
        return CallOutcome.TIMEOUT
    if fault is not None:
        return CallOutcome.ERROR
    if refusal is not None:
        return CallOutcome.REFUSED
    if reading is not None and reading.unreadable is not None:
        return CallOutcome.UNPARSEABLE
    return CallOutcome.OK


def _now() -> datetime:
    """``created_at`` of a call: naive UTC, as the ``calls`` table stores it."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True, slots=True, eq=False)
class Request(Generic[T]):
    """One model call, built once and handed from step to step of the call path (as httpx's send path hands
    its Request): what is sent (``messages``, ``params``, and ``facts`` for stand-in models), to whom
    (``provider``, under ``limiter``), how the answer is read (``read``), where it belongs (``tag``) and the
    number of its first attempt; and, made from those, its identity (``request_json``, ``key``), its name
    and the one timestamp every record of it shares. Making one raises :class:`KeyInPrompt` when the
    messages hold a key."""

    provider: Provider
    limiter: EndpointLimiter
    messages: list[Message]
    params: SamplingParams
    tag: CallTag
    first_attempt: int
    facts: PromptFacts | None
    read: Callable[[str], Reading[T]]
    cache: CacheHints | None = None  # where the prompt's reusable prefixes end; not part of the identity
    name: str = field(init=False)  # "provider/model"
    tier: ServiceTier | None = field(init=False)  # the tier it is bought at; None: nothing is bought (offline)
    request_json: str = field(init=False)
    key: str = field(init=False)
    created_at: datetime = field(init=False)

    def __post_init__(self) -> None:
        provider, messages, params = self.provider, self.messages, self.params
        name = f"{provider.name}/{provider.model}"
        # Record what is really sent: a provider may not accept some sampling parameters.
        unsupported: frozenset[str] = getattr(provider, "unsupported_params", frozenset())
        all_params = params.as_dict()
        sent = {k: v for k, v in all_params.items() if k not in unsupported}
        sample = self.tag.sample.as_dict()
        request_json = json.dumps({"messages": messages, "params": sent, "sample": sample}, ensure_ascii=False)
        if (variable := key_in(request_json)) is not None:
            raise KeyInPrompt(
                f"{name}: the prompt holds the key in {variable}, so it was not sent and is not stored. Something "
                "copied the key into the prompt: check this player's prompt templates (template_dir) and persona "
                "for a key pasted into them or a file they include"
            )
        key = cache_key(provider.name, provider.model, provider.endpoint.base_url, messages, all_params, sample)
        # Not part of the identity: an answer is the same draw at any tier (and a cache hit costs nothing).
        tier = None if getattr(provider, "offline", False) else provider.service_tier
        for attribute, value in (
            ("name", name),
            ("tier", tier),
            ("request_json", request_json),
            ("key", key),
            ("created_at", _now()),
        ):
            object.__setattr__(self, attribute, value)

    def record(
        self,
        attempt: int,
        *,
        fault: Fault | None = None,
        error: str | None = None,
        text: str | None = None,
        reading: Reading[object] | None = None,
        duration_ms: float | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cost_usd: float | None = None,
        cached: bool = False,
        refusal: str | None = None,
        cached_input_tokens: int | None = None,
        cache_write_tokens: int | None = None,
    ) -> CallRecord:
        """The ``calls`` row of one attempt (every row of a request is made here), its texts scrubbed of keys;
        ``refusal`` (see :func:`refusal_reason`) for an answer the provider withheld.

        ``request_json`` holds no key whole, or the request would have been refused when it was made; it is
        stored as sent, since resume finds answers by it (and scanning every prompt for pieces of keys
        would cost more than the rest of a mock call)."""
        if reading is not None and reading.unreadable is not None:
            error = reading.unreadable
        t = self.tag
        return CallRecord(
            game_id=t.game_id,
            round=t.round,
            player=t.player,
            attempt=attempt,
            provider=self.provider.name,
            model=self.provider.model,
            request_json=self.request_json,
            response_text=None if text is None else scrub(text),
            action=reading.action if reading is not None else None,
            reader=reading.reader if reading is not None and reading.action is not None else None,
            outcome=outcome(fault, reading, refusal),
            error=None if error is None else scrub(error),
            duration_ms=duration_ms,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost_usd,
            cached=cached,
            created_at=self.created_at,
            purpose=t.purpose,
            option_order=t.option_order,
            answer_format=t.answer_format,
            cached_input_tokens=cached_input_tokens,
            cache_write_tokens=cache_write_tokens,
            prompt_layout=t.prompt_layout,
            service_tier=None if cached or self.tier is None else self.tier.value,
        )
