"""Answers already paid for: where the call path finds them before it sends, and where it keeps them.

* the shared response cache: answers are cached as soon as they arrive (committed before the call
  returns), with a ledger entry holding their ``calls`` row until the results file has it, so a
  crashed run that is resumed never pays twice for an answer. A cache that cannot be read is a miss,
  one that vanished or broke is replaced by a fresh one, a full disk stops the run;
* memory, when there is no cache (``--no-cache``, or a cache that failed): bounded, oldest first;
* the run's own results file, on resume (``recorded``), for answers a lost cache no longer has;
* claims on requests in flight, so that two processes asking the same wait for one answer.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from harness.calls.cache.cache import ResponseCache
from harness.calls.cache.claims import Claim
from harness.calls.cache.file import set_aside
from harness.calls.cache.ledger import LedgerEntry
from harness.calls.cache.responses import CachedResponse
from harness.calls.record import Answer, CallRecord
from harness.calls.request import Request, Stopped
from harness.errors import CacheLost, DiskFull, StoreError
from harness.providers.base import Completion
from harness.states import CallOutcome

log = logging.getLogger("pdbench.calls")

MAX_CACHE_RENEWALS = 3  # fresh caches one request tries before it goes on without the cache
ANSWERED_IN_MEMORY = 100_000
"""Answers a cacheless run remembers (about 17 MB); an identical request older than that is paid again."""


class KnownAnswers:
    """The answers of a run's requests that need not be paid for again (see the module docstring)."""

    def __init__(
        self,
        cache: ResponseCache | None,
        *,
        ledger_run: str | None,
        recorded: dict[tuple[str, str, str], Answer],
        on_disk_full: Callable[[str], None],
        should_stop: Callable[[], bool],
    ) -> None:
        self.cache = cache
        # Whether this run caches at all; ``cache`` itself is briefly None while a broken cache is replaced.
        self.uses_cache = cache is not None
        self.ledger_run = ledger_run
        self.recorded = recorded
        self._on_disk_full = on_disk_full
        self._should_stop = should_stop
        self._renewing = anyio.Lock()
        self._answered: OrderedDict[str, Answer] = OrderedDict()
        self._warned: set[str] = set()

    def _warn_once(self, what: str, message: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            log.warning(message)

    def find(self, req: Request[Any]) -> Answer | None:
        """The answer to a request if this run knows it without its cache: from memory (a run without a
        cache, or whose cache failed) or from the results file being resumed. The cache is asked by
        :meth:`claim`, with the claim on sending the request."""
        if (answered := self._answered.get(req.key)) is not None:
            return answered
        if self.recorded:
            return self.recorded.get((req.provider.name, req.provider.model, req.request_json))
        return None

    async def keep(
        self, req: Request[Any], completion: Completion, record: CallRecord, refusal: str | None = None
    ) -> None:
        """Keep a paid answer: in the cache with its ledger entry (``record``), else in memory. A refusal
        (``refusal``: why the provider withheld the answer) is kept as one, in the cache's ``raw``."""
        answer = Answer(completion.text, refusal)
        if not self.uses_cache:
            self._remember(req.key, answer)
            return
        response = CachedResponse(
            text=completion.text,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            model=completion.model,
            provider=req.provider.name,
            created_at=datetime.now(UTC),
            raw=stored_extras(completion, refusal),
        )
        await self._cache_put(req.key, response, record, answer)

    def _remember(self, key: str, answer: Answer) -> None:
        self._answered[key] = answer
        if len(self._answered) > ANSWERED_IN_MEMORY:
            self._answered.popitem(last=False)

    async def claim(self, req: Request[Any], lease: float) -> Answer | None:
        """The answer to a request if this run knows it already, else the claim on sending it. Returns the
        answer (from the shared cache, from :meth:`find`, or from another process that was sending the same
        request), or None when this process is to send.

        The cache is asked for the answer and, when it has none, for the claim, in one step; an answer
        found by :meth:`find` ends the claim just made. A claim keeps another process asking the same
        from buying it too: that process waits for this answer (polling the cache). A claim lasts
        ``lease`` seconds (the request's whole budget and a margin) and ends with the answer or the
        sender's failure (:meth:`release`); the claim of a process that died on this machine is taken
        over at once (see :meth:`ResponseCache.aclaim`), one of another machine lapses at the end of its
        lease. A cache that cannot be read is a miss (with one warning), never a failed run."""
        key = req.key
        delay = 0.01
        for _ in range(MAX_CACHE_RENEWALS + 1):
            cache = await self._current_cache()
            if cache is None:
                break
            try:
                claim, stored = await cache.aanswer_or_claim(key, lease)
            except CacheLost as exc:
                await self._renew_cache(cache, exc)
                continue
            except StoreError as exc:
                self._warn_once("claim", f"requests in flight cannot be shared with other processes: {exc}")
                break
            if stored is not None:
                return cached_answer(stored)
            if (known := self.find(req)) is not None:
                if claim is Claim.CLAIMED:
                    await self.release(key)
                return known
            while claim is Claim.HELD:
                if self._should_stop():
                    raise Stopped("the run was stopped while another process was answering this request")
                await anyio.sleep(delay)
                delay = min(delay * 2, 0.25)
                try:
                    claim = await cache.aclaim(key, lease)
                except StoreError:
                    break  # the cache broke meanwhile: the outer loop renews it, or this process sends
            if claim is Claim.CLAIMED:
                return None
            if claim is Claim.ANSWERED:
                # Stored but unreadable here (a damaged row): send rather than wait for ever.
                hit = await self._cache_get(key)
                return cached_answer(hit) if hit is not None else None
        return self.find(req)

    async def release(self, key: str) -> None:
        """Give up a claim without an answer (the sender failed): another process may send. Never fails."""
        cache = self.cache
        if cache is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(cache.release, key)
            except Exception as exc:  # the claim lapses with its lease all the same
                log.debug("a claim could not be released: %s", exc)

    async def _cache_get(self, key: str) -> CachedResponse | None:
        """A cache that cannot be read is a miss (with one warning), never a failed run; a cache that
        vanished or broke is replaced by a fresh one (see :meth:`_renew_cache`)."""
        for _ in range(MAX_CACHE_RENEWALS + 1):
            cache = await self._current_cache()
            if cache is None:
                return None
            try:
                return await cache.aget(key)
            except CacheLost as exc:
                await self._renew_cache(cache, exc)
            except StoreError as exc:
                if self.cache is cache:
                    self._warn_once(
                        "get", f"the response cache could not be read, so answers are requested again: {exc}"
                    )
                    return None
        return None

    async def _cache_put(self, key: str, response: CachedResponse, record: CallRecord, answer: Answer) -> None:
        """Store a paid answer, with its ledger entry (the calls row it belongs in) in the same transaction.

        A cache that vanished or broke is replaced by a fresh one and the answer written there; a full disk
        stops the run (the answer is kept in memory for this run); any other failure loses nothing recorded
        (the call is still in ``calls``), only the caching."""
        ledger = LedgerEntry(self.ledger_run, ledger_json(record), call_id(record)) if self.ledger_run else None
        for _ in range(MAX_CACHE_RENEWALS + 1):
            cache = await self._current_cache()
            if cache is None:
                break
            try:
                await cache.aput(key, response, ledger)
                return
            except CacheLost as exc:
                await self._renew_cache(cache, exc)
            except DiskFull as exc:
                self._remember(key, answer)
                self._on_disk_full(str(exc))
                return
            except StoreError as exc:
                if self.cache is cache:
                    self._warn_once(
                        "put", f"the response cache could not be written; answers are recorded but not cached: {exc}"
                    )
                    break
        self._remember(key, answer)

    async def _current_cache(self) -> ResponseCache | None:
        """The cache in use, once any renewal under way has finished (None: the run goes without one)."""
        if self._renewing.locked():
            async with self._renewing:
                pass
        return self.cache

    def forget_recorded(self, records: list[CallRecord]) -> None:
        """The results file now holds ``records``: drop their ledger entries, so the ledger holds only the
        paid calls not yet written (blocking; the writer calls it from its thread after each batch)."""
        cache = self.cache
        ids = [call_id(r) for r in records if not r.cached and r.response_text is not None]
        if cache is None or self.ledger_run is None or not ids:
            return
        try:
            cache.forget_ledger(self.ledger_run, ids)
        except StoreError as exc:  # harmless: a resume skips entries the results file already holds
            self._warn_once("ledger", f"the cache's ledger could not be trimmed: {exc}")

    async def _renew_cache(self, broken: ResponseCache, exc: CacheLost) -> None:
        """The cache file vanished, was replaced or broke mid-run: say so at once and go on with a fresh
        cache at the same path (a corrupt file is moved aside first). Answers already recorded stay in the
        run's results file, and a resume takes them from there. If no fresh cache can be made, the run goes
        on without one (a full disk stops it)."""
        async with self._renewing:
            if self.cache is not broken:
                return  # another call renewed it already
            self.cache = None  # calls meanwhile go without a cache rather than to the broken one
            try:
                fresh = await anyio.to_thread.run_sync(_fresh_cache, broken.path, exc.vanished)
            except DiskFull as full:
                self._on_disk_full(str(full))
                return
            except StoreError as failed:
                log.warning("%s No fresh cache could be made (%s); the run goes on without one.", exc, failed)
                return
            self.cache = fresh
        log.warning(
            "%s PDBench goes on with a fresh cache at %s; answers recorded so far are kept in the run's "
            "results file, and `pdbench resume` takes them from there.",
            exc,
            broken.path,
        )


REFUSAL = "refusal"
"""The key of a withheld answer's reason in the cache's ``raw`` extras."""


def stored_extras(completion: Completion, refusal: str | None) -> dict[str, Any] | None:
    """What the cache keeps of an answer beside its text and tokens (its ``raw``): why the provider withheld it
    (``refusal``), and the input tokens it read from and wrote to its prompt cache when it said so. Those are
    kept for the record only: an answer taken from the cache again costs nothing and reads no provider cache,
    so its ``calls`` row has none (see :meth:`~harness.calls.path.CallPath._from_known`)."""
    extras: dict[str, Any] = {} if refusal is None else {REFUSAL: refusal}
    for name in ("cached_input_tokens", "cache_write_tokens"):
        if (value := getattr(completion, name)) is not None:
            extras[name] = value
    return extras or None


def cached_answer(stored: CachedResponse) -> Answer:
    """A stored answer as the call path takes it again: a refusal stays a refusal."""
    refusal = stored.raw.get(REFUSAL) if stored.raw else None
    return Answer(stored.text, refusal if isinstance(refusal, str) else None)


def _fresh_cache(path: Path, vanished: bool) -> ResponseCache:
    """A new cache at ``path``: a file still there (corrupt, not vanished) is moved aside first."""
    if not vanished and path.exists():
        set_aside(path)
    return ResponseCache.open_or_renew(path)


def call_id(record: CallRecord) -> str:
    """A call's identity within its run: game, round, seat, purpose and attempt."""
    return f"{record.game_id}:{record.round}:{record.player}:{record.purpose}:{record.attempt}"


def ledger_json(record: CallRecord) -> str:
    """A calls row as the ledger keeps it (see :class:`~harness.calls.cache.ledger.LedgerEntry`)."""
    row = {f.name: getattr(record, f.name) for f in fields(record)}  # flat values: no deep copy as asdict makes
    row["created_at"] = record.created_at.isoformat()
    return json.dumps(row)


def record_from_ledger(text: str) -> CallRecord:
    """The calls row of a ledger entry."""
    row = json.loads(text)
    row["created_at"] = datetime.fromisoformat(row["created_at"])
    row["outcome"] = CallOutcome(row["outcome"])
    return CallRecord(**row)
