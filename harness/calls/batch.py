"""Batch mode: the requests of every game in flight go to the provider as one batch per round, at half the price.

Games play in lock step without being told to: each game asks for its next move and waits, and a request bought
at ``service_tier: batch`` joins its endpoint's queue (:class:`Batches`) instead of being sent. Once no new request
has joined for ``gather_s`` (every game in flight is waiting: strategies answer at once, so a round's requests
arrive within milliseconds), the queue is submitted as one batch; the batch is polled with backoff until it has
ended, and each request gets its item's answer, which the call path then reads, prices (at batch prices), caches
and records like any answer (the same sample identity and cache key: an answer is never bought twice). Re-asks
and comprehension questions are requests like the others and ride in the next batch.

Nothing is lost to a kill: the submission is stored in the response cache before it is sent, its id when the
provider gives it, and its results when it ends (:mod:`harness.calls.cache.batches`). A request of a resumed
run finds its item there and waits for that batch (or takes its stored result) instead of joining a new one; a
submission whose id was never stored is looked for at the provider first. An item that failed (a server
error, the batch expired before reaching it) is a failed attempt like a synchronous one: retried, within the
request's bounds, in a later batch.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from harness.calls.cache.batches import BatchItem
from harness.calls.cache.cache import ResponseCache
from harness.providers.base import Completion, Fault, Provider, RetryDecision, SamplingParams
from harness.providers.batch import BatchApi, BatchState, CannotTell

MIN_POLL_S = 0.05
"""The least wait between two polls of a batch once the first came back unfinished (even with PDBENCH_BATCH_POLL=0)."""
GATHER_S = 2.0
"""How long a queue waits, after the last request joined it, before it is submitted."""
POLL_FIRST_S = 5.0
POLL_MAX_S = 300.0


@dataclass(frozen=True, slots=True)
class BatchSettings:
    """When a batch is submitted and how often it is polled: ``gather_s`` of quiet after the last request joined;
    the first poll ``poll_first_s`` after submitting, each next wait half as long again, up to ``poll_max_s``."""

    gather_s: float = GATHER_S
    poll_first_s: float = POLL_FIRST_S
    poll_max_s: float = POLL_MAX_S


@dataclass(slots=True)
class BatchCounters:
    """What the live display shows of the batches: submitted (this session, resumed ones included), in
    progress, ended, failed as a whole, and the time the run has waited with at least one batch out."""

    submitted: int = 0
    ended: int = 0
    failed: int = 0
    items: int = 0
    waited_s: float = 0.0
    out_since: float | None = None

    @property
    def in_progress(self) -> int:
        return self.submitted - self.ended - self.failed

    def waited(self, now: float | None = None) -> float:
        """Seconds waited so far, the current wait included."""
        current = 0.0 if self.out_since is None else (time.monotonic() if now is None else now) - self.out_since
        return self.waited_s + current

    def sent(self, items: int) -> None:
        if self.in_progress == 0:
            self.out_since = time.monotonic()
        self.submitted += 1
        self.items += items

    def finished(self, failed: bool) -> None:
        if failed:
            self.failed += 1
        else:
            self.ended += 1
        if self.in_progress == 0 and self.out_since is not None:
            self.waited_s += time.monotonic() - self.out_since
            self.out_since = None


class BatchItemFailed(Exception):
    """A request's batch item has no answer (``decision`` says why, as for a failed synchronous attempt)."""

    def __init__(self, decision: RetryDecision) -> None:
        super().__init__(decision.reason)
        self.decision = decision


class BatchStopped(Exception):
    """The run was asked to stop while the request waited for its batch: its batch, stored, waits for a resume."""


@dataclass(slots=True)
class _Submission:
    """One batch: this side's name, the provider's id once known, and its results (or failure) once ended."""

    name: str
    items: int
    created: float  # Unix seconds when it was stored
    batch_id: str | None = None
    results: dict[str, str] | None = None
    failure: RetryDecision | None = None
    wait_s: float = POLL_FIRST_S
    polling: anyio.Lock = field(default_factory=anyio.Lock)

    @property
    def over(self) -> bool:
        return self.results is not None or self.failure is not None


@dataclass(slots=True)
class _Entry:
    """A request waiting in a queue to be submitted."""

    key: str
    item: Any
    submission: _Submission | None = None
    failure: RetryDecision | None = None


@dataclass(slots=True)
class _Queue:
    """One endpoint and model's requests waiting to be submitted."""

    api: BatchApi
    provider: Provider
    endpoint: str
    entries: list[_Entry] = field(default_factory=list)
    last_joined: float = 0.0
    flushing: anyio.Lock = field(default_factory=anyio.Lock)


def endpoint_name(provider: Provider) -> str:
    """Whose batch a submission is: provider, base URL, key id and model (never the key)."""
    e = provider.endpoint
    return f"{e.provider} {e.base_url or '-'} {e.key_id or '-'} {provider.model}"


class Batches:
    """Every batch of a run (see the module docstring)."""

    def __init__(
        self,
        cache: ResponseCache,
        settings: BatchSettings,
        should_stop: Callable[[], bool],
        sleep: Callable[[float], Awaitable[None]],
    ) -> None:
        self.cache = cache
        self.settings = settings
        self.counters = BatchCounters()
        self._should_stop = should_stop
        self._sleep = sleep
        self._queues: dict[str, _Queue] = {}
        self._submissions: dict[str, _Submission] = {}

    async def answer(
        self, provider: Provider, key: str, item: Callable[[BatchApi], Any], params: SamplingParams
    ) -> Completion:
        """The answer to request ``key`` from its batch item (``item`` builds the item for the endpoint's API), read
        as ``generate`` reads one for ``params``. Raises :class:`BatchItemFailed` (a failed attempt, retried in a
        later batch) or :class:`BatchStopped`."""
        queue = self._queue(provider)
        found = await anyio.to_thread.run_sync(self.cache.batch_item, key)
        if found is not None and found.result is not None:
            raw = found.result
        elif found is not None and (submission := await self._adopt(queue, found)) is not None:
            raw = await self._result(queue, submission, found.custom_id, key)
        else:
            submission = await self._enqueue(queue, key, item(queue.api))
            raw = await self._result(queue, submission, key, key)
        outcome = queue.api.read(raw, params)
        if outcome.completion is None:
            assert outcome.failure is not None
            await anyio.to_thread.run_sync(self.cache.forget_batch_items, [key])  # asked again, in a later batch
            raise BatchItemFailed(outcome.failure)
        return outcome.completion

    async def collected(self, key: str) -> None:
        """Request ``key``'s answer is stored (with its ledger entry): its batch item is done with."""
        await anyio.to_thread.run_sync(self.cache.forget_batch_items, [key])

    def _queue(self, provider: Provider) -> _Queue:
        name = endpoint_name(provider)
        if (queue := self._queues.get(name)) is None:
            api: BatchApi = provider.batch_api()  # type: ignore[attr-defined]
            queue = self._queues[name] = _Queue(api, provider, name)
        return queue

    # ---- submitting -----------------------------------------------------------------------------------

    async def _enqueue(self, queue: _Queue, key: str, item: Any) -> _Submission:
        """Join the queue and wait until it is submitted (the first to wait submits it, once it is quiet)."""
        entry = _Entry(key, item)
        queue.entries.append(entry)
        queue.last_joined = time.monotonic()
        try:
            async with queue.flushing:
                if entry.submission is None and entry.failure is None:
                    await self._gather(queue)
                    taken = queue.entries[: queue.api.max_items]
                    del queue.entries[: len(taken)]
                    with anyio.CancelScope(shield=True):  # a submission is stored and sent whole, or not at all
                        await self._submit_or_fail(queue, taken)
        finally:
            if entry in queue.entries:  # cancelled or stopped before it was submitted
                queue.entries.remove(entry)
        if entry.failure is not None:
            raise BatchItemFailed(entry.failure)
        assert entry.submission is not None
        return entry.submission

    async def _submit_or_fail(self, queue: _Queue, entries: list[_Entry]) -> None:
        """:meth:`_submit`, and should storing fail (the cache's file locked or full), every entry taken fails
        with it, as a fault that passes: a submission stored before the failure is found again by its retry."""
        try:
            await self._submit(queue, entries)
        except Exception as exc:
            decision = RetryDecision(Fault.TRANSIENT, f"the batch could not be stored or sent: {exc}"[:500])
            for entry in entries:
                if entry.submission is None:
                    entry.failure = decision

    async def _gather(self, queue: _Queue) -> None:
        """Wait until no request has joined for ``gather_s`` (or the batch is full)."""
        while len(queue.entries) < queue.api.max_items:
            if self._should_stop():
                raise BatchStopped("the run was stopped before its batch was submitted")
            quiet = time.monotonic() - queue.last_joined
            if quiet >= self.settings.gather_s:
                return
            await anyio.sleep(self.settings.gather_s - quiet)

    async def _submit(self, queue: _Queue, entries: list[_Entry]) -> None:
        """Store the submission, send it, store its id; a refusal fails every entry with the provider's decision."""
        name = uuid.uuid4().hex
        submission = _Submission(name, len(entries), time.time(), wait_s=self.settings.poll_first_s)
        pairs = [(entry.key, entry.key) for entry in entries]
        await anyio.to_thread.run_sync(self.cache.add_batch, name, queue.endpoint, pairs)
        batch_id: str | None
        try:
            batch_id = await queue.api.submit([entry.item for entry in entries], name)
        except Exception as exc:
            decision = queue.provider.should_retry(exc)
            try:
                # The answer to a create may be lost after the batch was made: look for it before giving up on it.
                batch_id = await self._find(queue, submission) if decision.retry else None
            except CannotTell as unsure:  # kept stored: the retry looks for it again, and never sends it twice
                decision = RetryDecision(Fault.TRANSIENT, f"{decision.reason}; {unsure}"[:500])
            else:
                if batch_id is None:
                    await anyio.to_thread.run_sync(self.cache.forget_batch, name)
            if batch_id is None:
                for entry in entries:
                    entry.failure = decision
                return
        await anyio.to_thread.run_sync(self.cache.batch_sent, name, batch_id)
        submission.batch_id = batch_id
        self._submissions[name] = submission
        self.counters.sent(len(entries))
        for entry in entries:
            entry.submission = submission

    async def _find(self, queue: _Queue, submission: _Submission) -> str | None:
        """The id of ``submission`` at the provider if it was created, None if it was not; raises
        :class:`CannotTell` when the provider cannot say now (then nothing is forgotten or sent again)."""
        known = await anyio.to_thread.run_sync(self.cache.batch_ids)
        return await queue.api.find(submission.name, submission.created, submission.items, known)

    async def _adopt(self, queue: _Queue, found: BatchItem) -> _Submission | None:
        """The submission a stored item belongs to, picked up again (a resumed run); None if it was never created
        (then it is forgotten, and the request joins a new batch). Raises :class:`BatchItemFailed` (a fault that
        passes) when the provider cannot say whether it was created: the request asks again later."""
        if (submission := self._submissions.get(found.submission)) is not None:
            return submission
        submission = _Submission(
            found.submission, found.items, found.created_us / 1e6, found.batch_id, wait_s=self.settings.poll_first_s
        )
        self._submissions[found.submission] = submission
        async with submission.polling:
            if submission.batch_id is None:
                try:
                    submission.batch_id = await self._find(queue, submission)
                except CannotTell as unsure:
                    del self._submissions[found.submission]  # the next request asks the provider again
                    submission.failure = RetryDecision(Fault.TRANSIENT, f"its batch cannot be found now: {unsure}")
                    raise BatchItemFailed(submission.failure) from None
                if submission.batch_id is None:  # never created: its requests join a new batch
                    del self._submissions[found.submission]
                    submission.failure = RetryDecision(Fault.TRANSIENT, "its batch was never created")
                    await anyio.to_thread.run_sync(self.cache.forget_batch, found.submission)
                    return None
                await anyio.to_thread.run_sync(self.cache.batch_sent, found.submission, submission.batch_id)
            submission.wait_s = 0.0  # it may have ended while no process watched it: ask at once
            self.counters.sent(submission.items)
        return submission

    # ---- waiting --------------------------------------------------------------------------------------

    async def _result(self, queue: _Queue, submission: _Submission, custom_id: str, key: str) -> str:
        """The raw result of ``custom_id`` once ``submission`` has ended (one waiter polls at a time)."""
        while not submission.over:
            async with submission.polling:
                if not submission.over:
                    await self._poll(queue, submission)
        if submission.failure is not None:
            raise BatchItemFailed(submission.failure)
        assert submission.results is not None
        raw = submission.results.get(custom_id)
        if raw is None:
            await anyio.to_thread.run_sync(self.cache.forget_batch_items, [key])
            raise BatchItemFailed(RetryDecision(Fault.TRANSIENT, "the batch's results hold no answer for this request"))
        return raw

    async def _poll(self, queue: _Queue, submission: _Submission) -> None:
        """Wait, then ask where the batch is; fetch and store its results once it has ended."""
        if submission.wait_s > 0:
            await self._sleep(submission.wait_s)
        if self._should_stop():
            raise BatchStopped("the run was stopped while its batch was out; `pdbench resume` collects it")
        grown = max(submission.wait_s, self.settings.poll_first_s, MIN_POLL_S) * 1.5
        submission.wait_s = min(grown, max(self.settings.poll_max_s, MIN_POLL_S))
        assert submission.batch_id is not None
        try:
            status = await queue.api.status(submission.batch_id)
            if status.state is BatchState.PENDING:
                return
            if status.state is BatchState.FAILED:  # nothing in it was answered: it may be sent again if it passes
                # At a limit that passes (RATE_LIMITED), the retry backs off as from any 429 before sending it again.
                refused = f"the provider refused the batch ({status.detail})"[:500]
                self._fail(submission, RetryDecision(status.fault, refused))
                await anyio.to_thread.run_sync(self.cache.forget_batch, submission.name)
                return
            results = await queue.api.results(submission.batch_id)
        except Exception as exc:
            decision = queue.provider.should_retry(exc)
            if decision.retry:  # the batch is still out there: ask again later, never buy it again
                return
            self._fail(submission, decision)
            if decision.fault is Fault.REJECTED:  # the provider does not know it (404): it is gone
                await anyio.to_thread.run_sync(self.cache.forget_batch, submission.name)
            return
        await anyio.to_thread.run_sync(self.cache.batch_ended, submission.name, results)
        submission.results = results
        self.counters.finished(failed=False)

    def _fail(self, submission: _Submission, decision: RetryDecision) -> None:
        submission.failure = decision
        self.counters.finished(failed=True)
