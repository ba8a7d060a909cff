"""Anthropic's Message Batches for ``anthropic/<model>`` at ``service_tier: batch``.

Each item's ``params`` are the Messages request :meth:`AnthropicProvider.request_body` builds for ``generate``
(prompt-cache breakpoints included: batches read and write the prompt cache too). A message batch carries no
metadata, so a batch whose id was lost (the process died between creating it and storing its id) is recognised
by when it was created and how many items it holds; its results, once it has ended, hold the custom ids, which
the call path checks against its own before it takes any answer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

import pydantic
from anthropic.types import Message as AnthropicMessage

from harness.providers.base import (
    CacheHints,
    Completion,
    Fault,
    MalformedResponse,
    Message,
    RetryDecision,
    SamplingParams,
)
from harness.providers.batch import REQUEST_TIMEOUT_S, BatchState, BatchStatus, CannotTell, ItemOutcome

if TYPE_CHECKING:
    import anthropic

CLOCK_SKEW_S = 60.0
"""How far this machine's clock and the provider's may differ, when a lost batch is looked for by its time."""

_ERROR_FAULTS = {
    "invalid_request_error": Fault.REJECTED,
    "not_found_error": Fault.REJECTED,
    "authentication_error": Fault.AUTHENTICATION,
    "permission_error": Fault.AUTHENTICATION,
    "billing_error": Fault.AUTHENTICATION,
    "rate_limit_error": Fault.RATE_LIMITED,
}
"""An errored item's fault by its error type; any other (api_error, overloaded_error, timeout_error) is transient."""


class MessagesTranslation(Protocol):
    """What :class:`~harness.providers.anthropic.AnthropicProvider` lends a batch: its request and its reading."""

    def request_body(
        self, messages: list[Message], params: SamplingParams, cache: CacheHints | None
    ) -> dict[str, Any]: ...

    def read_response(self, response: Any, params: SamplingParams) -> Completion: ...


class AnthropicBatch:
    """One model's Message Batches (see the module docstring)."""

    max_items = 100_000

    def __init__(
        self, provider: MessagesTranslation, client: anthropic.AsyncAnthropic, headers: dict[str, object]
    ) -> None:
        self._provider = provider
        self._client = client
        self._headers: Any = headers or None  # a keyless client's credential headers, left out of every request

    def item(self, custom_id: str, messages: list[Message], params: SamplingParams, cache: CacheHints | None) -> Any:
        return {"custom_id": custom_id, "params": self._provider.request_body(messages, params, cache)}

    async def submit(self, items: list[Any], submission: str) -> str:
        batch = await self._client.messages.batches.create(
            requests=items, extra_headers=self._headers, timeout=REQUEST_TIMEOUT_S
        )
        return batch.id

    async def find(self, submission: str, created_after: float, items: int, known: frozenset[str]) -> str | None:
        try:
            found = await self._candidates(created_after, items, known)
        except Exception as exc:  # the provider did not answer: it cannot say
            raise CannotTell(f"Anthropic's batch list could not be read ({type(exc).__name__}: {exc})") from exc
        if len(found) > 1:
            raise CannotTell(f"{len(found)} batches created then hold {items} items ({', '.join(found)})")
        return found[0] if found else None

    async def _candidates(self, created_after: float, items: int, known: frozenset[str]) -> list[str]:
        """The batches not stored for another submission, created from a little before the submission was stored
        (clocks differ) to the end of its create call's time, with as many items."""
        found = []
        async for batch in self._client.messages.batches.list(
            limit=100, extra_headers=self._headers, timeout=REQUEST_TIMEOUT_S
        ):
            created = batch.created_at.timestamp()
            if created < created_after - CLOCK_SKEW_S:  # newest first: older ones cannot be it
                break
            counts = batch.request_counts
            total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
            if created <= created_after + REQUEST_TIMEOUT_S + CLOCK_SKEW_S and total == items and batch.id not in known:
                found.append(batch.id)
        return found

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._client.messages.batches.retrieve(
            batch_id, extra_headers=self._headers, timeout=REQUEST_TIMEOUT_S
        )
        counts = batch.request_counts
        done = counts.succeeded + counts.errored + counts.canceled + counts.expired
        state = BatchState.ENDED if batch.processing_status == "ended" else BatchState.PENDING
        return BatchStatus(state, done, done + counts.processing, batch.processing_status)

    async def results(self, batch_id: str) -> dict[str, str]:
        decoder = await self._client.messages.batches.results(
            batch_id, extra_headers=self._headers, timeout=REQUEST_TIMEOUT_S
        )
        return {result.custom_id: result.model_dump_json() async for result in decoder}

    def read(self, raw: str, params: SamplingParams) -> ItemOutcome:
        try:
            result = json.loads(raw)["result"]
            kind = result["type"]
        except (ValueError, KeyError, TypeError) as exc:
            return ItemOutcome(None, RetryDecision(Fault.TRANSIENT, f"malformed batch result: {exc}"[:500]))
        if kind == "succeeded":
            try:
                answer = AnthropicMessage.model_validate(result.get("message"))
                return ItemOutcome(self._provider.read_response(answer, params))
            except (MalformedResponse, pydantic.ValidationError) as exc:
                return ItemOutcome(None, RetryDecision(Fault.TRANSIENT, f"malformed answer: {exc}"[:500]))
        if kind == "errored":
            error = (result.get("error") or {}).get("error") or {}
            error_type = str(error.get("type") or "api_error")
            message = str(error.get("message") or "no message")
            fault = _ERROR_FAULTS.get(error_type, Fault.TRANSIENT)
            return ItemOutcome(None, RetryDecision(fault, f"the batch item failed ({error_type}: {message})"[:500]))
        # expired or canceled: the request itself was fine, so a later batch asks it.
        return ItemOutcome(None, RetryDecision(Fault.TRANSIENT, f"the batch did not answer this item ({kind})"))
