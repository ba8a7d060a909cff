"""The batch contract: what the call path needs of a provider's batch API (OpenAI Batch, Anthropic Message Batches).

A batch is bought at half the price and answered within 24 hours, so its protocol is not ``generate``'s: the
items of many requests are submitted at once (:meth:`BatchApi.submit`), the batch is polled
(:meth:`BatchApi.status`) until it has ended, and its results are fetched (:meth:`BatchApi.results`) as one raw
JSON text per item, kept as they came (the call path stores them until each answer is recorded, so a run killed
after the batch ended still finds them) and read into a :class:`~harness.providers.base.Completion` or a failure
(:meth:`BatchApi.read`). Each provider translates an item's request exactly as ``generate`` would send it, so a
batch answer is the answer to the same request, and is cached and priced like one.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from harness.providers.base import CacheHints, Completion, Fault, Message, RetryDecision, SamplingParams

REQUEST_TIMEOUT_S = 300.0
"""The most one request of a batch API (an upload, a create, a poll, a download of results) may take: a stop waits
for a submission in flight, so it must end."""


class BatchState(StrEnum):
    """Where a submitted batch is, in the provider's lifecycle reduced to what the call path acts on."""

    PENDING = "pending"
    """Validating, in progress, finalizing or being cancelled: poll again later."""
    ENDED = "ended"
    """Ended (completed, expired or cancelled): its results can be fetched, item by item (an item the batch
    never reached says so in its own result)."""
    FAILED = "failed"
    """Refused as a whole (its file did not validate): no item was answered; :attr:`BatchStatus.detail` says why."""


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """One poll's reading of a batch: its state, how many items have an outcome of the ``total``, and the
    provider's own words for where it is (``in_progress``, ``finalizing``, or the errors of a failed one).
    ``fault`` says what a failed batch's failure is: the request refused for good (``REJECTED``), or a limit that
    passes (``RATE_LIMITED``: OpenAI's enqueued-token limit, which asks to try again once other batches end)."""

    state: BatchState
    done: int
    total: int
    detail: str
    fault: Fault = Fault.REJECTED


class CannotTell(Exception):
    """The provider cannot say now whether a submission was created (it failed to answer, or more than one batch
    could be it): its stored row is kept and asked about again, never sent again in the meantime."""


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """One item's result, read: the answer, or why there is none (a fault the call path retries or not, as for
    a failed synchronous attempt: an item that expired or met a server error goes into a later batch)."""

    completion: Completion | None
    failure: RetryDecision | None = None


class BatchApi(Protocol):
    """One model's batch endpoint (see the module docstring)."""

    max_items: int
    """The most items one batch may hold."""

    def item(self, custom_id: str, messages: list[Message], params: SamplingParams, cache: CacheHints | None) -> Any:
        """The JSON of one item: the request ``generate`` would send, under ``custom_id``."""
        ...

    async def submit(self, items: list[Any], submission: str) -> str:
        """Submit ``items`` as one batch; its id. ``submission`` (this side's name for it) is attached where the
        API allows (OpenAI's metadata), so that :meth:`find` can recognise it."""
        ...

    async def find(self, submission: str, created_after: float, items: int, known: frozenset[str]) -> str | None:
        """The id of a batch submitted as ``submission`` (at or after ``created_after``, Unix seconds, with
        ``items`` items) whose id was never stored (the process died between submitting and storing), or None when
        the provider has no such batch. ``known``: the ids stored for other submissions, never it. Raises
        :class:`CannotTell` when the provider cannot say (it failed to answer, or two batches could be it)."""
        ...

    async def status(self, batch_id: str) -> BatchStatus:
        """Where the batch is."""
        ...

    async def results(self, batch_id: str) -> dict[str, str]:
        """An ended batch's results: each item's raw JSON text by its custom id (in no particular order)."""
        ...

    def read(self, raw: str, params: SamplingParams) -> ItemOutcome:
        """One item's raw result, read as ``generate`` reads the answer to a request with ``params`` (or the fault
        that left it unanswered)."""
        ...
