"""OpenAI's Batch API for ``openai/<model>`` at ``service_tier: batch``: items as JSONL lines in an uploaded file.

Each line holds the Chat Completions body :meth:`OpenAIProvider.request_body` builds for ``generate``. The batch
carries this side's name for it in its metadata (``pdbench_submission``), so that a batch whose id was lost (the
process died between creating it and storing its id) is found again rather than bought twice. Its results are two
files: answers in the output file, items that failed or that the batch never reached (it expired, was cancelled)
in the error file; both are read, line by line, by custom id.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import pydantic
from openai.types.chat import ChatCompletion

from harness.providers.base import (
    CacheHints,
    Completion,
    Fault,
    MalformedResponse,
    Message,
    RetryDecision,
    SamplingParams,
    decide_status,
    status_message,
)
from harness.providers.batch import REQUEST_TIMEOUT_S, BatchState, BatchStatus, CannotTell, ItemOutcome

if TYPE_CHECKING:
    import openai

ENDPOINT: Final[Literal["/v1/chat/completions"]] = "/v1/chat/completions"
METADATA_KEY = "pdbench_submission"
LOOK_BACK_S = 120.0
"""How much earlier than the stored submission time a lost batch may say it was created (clocks differ)."""

TOKEN_LIMIT = "token_limit_exceeded"
"""The error code of a batch failed at the enqueued-token limit ("try again once some batches have completed")."""
_ENDED = frozenset({"completed", "expired", "cancelled"})


class ChatTranslation(Protocol):
    """What :class:`~harness.providers.openai.OpenAIProvider` lends a batch: its request body and its reading."""

    def request_body(
        self, messages: list[Message], params: SamplingParams, cache: CacheHints | None
    ) -> dict[str, Any]: ...

    def read_response(self, response: Any) -> Completion: ...


class OpenAIBatch:
    """One model's Batch API (see the module docstring)."""

    max_items = 50_000

    def __init__(self, provider: ChatTranslation, client: openai.AsyncOpenAI, headers: dict[str, object]) -> None:
        self._provider = provider
        self._client = client
        self._headers: Any = headers or None  # a keyless client's credential headers, left out of every request

    def item(self, custom_id: str, messages: list[Message], params: SamplingParams, cache: CacheHints | None) -> Any:
        body = self._provider.request_body(messages, params, cache)
        body.pop("service_tier", None)  # a batch is its own tier
        return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}

    async def submit(self, items: list[Any], submission: str) -> str:
        lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items).encode()
        uploaded = await self._client.files.create(
            file=(f"pdbench-{submission}.jsonl", lines, "application/jsonl"),
            purpose="batch",
            extra_headers=self._headers,
            timeout=REQUEST_TIMEOUT_S,
        )
        batch = await self._client.batches.create(
            input_file_id=uploaded.id,
            endpoint=ENDPOINT,
            completion_window="24h",
            metadata={METADATA_KEY: submission},
            extra_headers=self._headers,
            timeout=REQUEST_TIMEOUT_S,
        )
        return batch.id

    async def find(self, submission: str, created_after: float, items: int, known: frozenset[str]) -> str | None:
        try:
            return await self._find(submission, created_after)
        except Exception as exc:  # the provider did not answer: it cannot say
            raise CannotTell(f"OpenAI's batch list could not be read ({type(exc).__name__}: {exc})") from exc

    async def _find(self, submission: str, created_after: float) -> str | None:
        async for batch in self._client.batches.list(limit=100, extra_headers=self._headers, timeout=REQUEST_TIMEOUT_S):
            if (batch.metadata or {}).get(METADATA_KEY) == submission:
                return batch.id
            if batch.created_at < created_after - LOOK_BACK_S:  # newest first: older ones cannot be it
                return None
        return None

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._client.batches.retrieve(batch_id, extra_headers=self._headers, timeout=REQUEST_TIMEOUT_S)
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts is not None else 0
        total = counts.total if counts is not None else 0
        if batch.status in _ENDED:
            return BatchStatus(BatchState.ENDED, done, total, batch.status)
        if batch.status != "failed":  # validating, in progress, finalizing, cancelling, or a status new to this code
            return BatchStatus(BatchState.PENDING, done, total, batch.status)
        errors = list(batch.errors.data or []) if batch.errors is not None else []
        detail = "; ".join(m for e in errors if (m := e.message or e.code or "")) or "no reason given"
        # The enqueued-token limit passes as other batches end: the batch may be sent again, later.
        limited = any(e.code == TOKEN_LIMIT for e in errors)
        fault = Fault.RATE_LIMITED if limited else Fault.REJECTED
        return BatchStatus(BatchState.FAILED, done, total, f"{batch.status}: {detail}", fault)

    async def results(self, batch_id: str) -> dict[str, str]:
        batch = await self._client.batches.retrieve(batch_id, extra_headers=self._headers, timeout=REQUEST_TIMEOUT_S)
        found: dict[str, str] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await self._client.files.content(file_id, extra_headers=self._headers, timeout=REQUEST_TIMEOUT_S)
            for line in content.text.splitlines():
                if line.strip():
                    custom_id = json.loads(line).get("custom_id")
                    if isinstance(custom_id, str):
                        found[custom_id] = line
        return found

    def read(self, raw: str, params: SamplingParams) -> ItemOutcome:
        try:
            line = json.loads(raw)
            response, error = line.get("response"), line.get("error")
        except (ValueError, AttributeError) as exc:
            return ItemOutcome(None, RetryDecision(Fault.TRANSIENT, f"malformed batch result: {exc}"[:500]))
        if isinstance(response, dict) and response.get("status_code") == 200:
            try:
                return ItemOutcome(self._provider.read_response(ChatCompletion.model_validate(response.get("body"))))
            except (MalformedResponse, pydantic.ValidationError) as exc:
                return ItemOutcome(None, RetryDecision(Fault.TRANSIENT, f"malformed answer: {exc}"[:500]))
        if isinstance(response, dict) and isinstance(status := response.get("status_code"), int):
            body = response.get("body")
            return ItemOutcome(None, decide_status(status, None, body, status_message(body, f"HTTP {status}")))
        said = error if isinstance(error, dict) else {}
        code, message = said.get("code") or "no code", said.get("message") or "no message"
        # batch_expired, batch_cancelled or a server's fault: the request itself was fine, so a later batch asks it.
        reason = f"the batch did not answer this item ({code}: {message})"
        return ItemOutcome(None, RetryDecision(Fault.TRANSIENT, reason[:500]))
