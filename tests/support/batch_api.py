"""Both providers' batch APIs for the loopback server (:mod:`tests.support.llm_server`), as the official SDKs call them.

OpenAI (``AsyncOpenAI(base_url=server.openai_base_url)``): ``files.create(purpose="batch")``, ``files.retrieve``,
``files.content``, ``files.delete``; ``batches.create / retrieve / list / cancel`` on ``/v1/chat/completions``.
Anthropic (``AsyncAnthropic(base_url=server.anthropic_base_url)``): ``messages.batches.create / retrieve / list /
results / cancel / delete``. Every item is answered by the code that answers the synchronous endpoint
(:meth:`FakeLLM.answer`: the responder, structured replies, prompt-cache accounting), so a batch item's answer equals
what ``/v1/chat/completions`` or ``/v1/messages`` gives for the same body. Batches and files live in the server's
memory: a client killed and restarted finds them there. Batch requests are logged like the others (auth checked,
``RecordedRequest.path`` says which) but never rate limited nor given ``fail_next`` faults.

Progress: a batch advances one step per retrieve of it (listing does not advance it). ``batch_polls`` (a setting,
default 2) is how many retrieves still see it unfinished; the next one sees it ended. OpenAI: created
``validating``, then ``in_progress`` (the last unfinished retrieve ``finalizing`` when ``batch_polls >= 2``), then
``completed``; Anthropic: ``in_progress``, then ``ended``. ``batch_polls=0``: ended at creation. Items are answered in
request order as it advances (about ``k / batch_polls`` of them at the k-th retrieve), so a cancel keeps those.
Results (the OpenAI output and error files, Anthropic's results) come in a shuffled order, the same on every
download, never request order (two items or more): match them by ``custom_id``.

Scripting (FakeLLM / FakeLLMProcess methods; ``/_control`` actions of the same names), each for the NEXT batch a
provider creates, consumed by it; ``reset()`` forgets them with every batch, file and counter::

    server.configure(batch_polls=0)                                 # every batch ends at creation
    server.fail_batch_items("openai", {0: "error", 2: "expired"})   # items 0 and 2 of the next OpenAI batch
    server.next_batch_outcome("anthropic", "expired")               # the next Anthropic batch: half expired
    assert server.batch_stats("openai").batches == 1 and server.batches[0].status == "completed"

* ``fail_batch_items(provider, {position: kind})``, positions 0-based in request order (beyond the batch: ignored):
  ``"error"``: OpenAI: a line in the error file ``{"id", "custom_id", "response": {"status_code": 500, "request_id",
  "body": {"error": {"message", "type": "server_error", "param": null, "code": null}}}, "error": null}``; Anthropic:
  ``{"custom_id", "result": {"type": "errored", "error": {"type": "error", "error": {"type": "api_error",
  "message"}}}}``. ``"expired"``: OpenAI: an error-file line ``{"id", "custom_id", "response": null, "error":
  {"code": "batch_expired", "message"}}``; Anthropic: ``{"custom_id", "result": {"type": "expired"}}``. The batch
  itself still ends ``completed`` / ``ended``.
* ``next_batch_outcome(provider, outcome)``: ``"failed"``: OpenAI: validation fails (status ``failed``,
  ``errors.data == [{"code": "token_limit_exceeded", "message", "line": null, "param": null}]``, no files, request
  counts 0); Anthropic: the create call is answered 400 ``invalid_request_error`` (item scripting stays queued).
  ``"expired"``: the first ``n // 2`` items are answered, the rest expire (lines as above); OpenAI status
  ``expired``, Anthropic ``ended``.
* Counters: ``batch_stats(provider) -> BatchStats(batches, items_answered, files_uploaded, retrieves)``
  (``items_answered``: items the endpoint answered 200); ``batches -> [BatchView(provider, id, status, items,
  retrieves)]``, oldest first, status in the provider's spelling.

Also: a request body the endpoint refuses (no model, ...) makes its item's error line (status 400) /
``errored`` ``invalid_request_error``; a cancelled batch (OpenAI ``cancelling`` then ``cancelled`` at the next
retrieve; Anthropic ``canceling`` then ``ended``) keeps the items answered so far and reports the rest as OpenAI
error lines with code ``batch_cancelled`` / Anthropic ``canceled``. A bad OpenAI input file (no lines, a line not
JSON, no ``custom_id``, a repeated one, ``method`` not POST, ``url`` not the batch's endpoint, no ``body``, two
models) fails the batch at its first retrieve with ``errors.data`` ``[{code, message, line, param}]`` (lines from
1); a missing or non-``batch`` input file, another endpoint or window is a 400 at create. Anthropic: a
``custom_id`` not matching ``^[a-zA-Z0-9_-]{1,64}$`` or repeated is a 400 at create.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import random
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from enum import StrEnum
from typing import Any, Protocol

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

OPENAI, ANTHROPIC = "openai", "anthropic"
ENDPOINT = "/v1/chat/completions"  # the one batch endpoint this server serves
_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_DAY_S = 24 * 3600
_PURPOSES = frozenset({"assistants", "batch", "fine-tune", "vision", "user_data"})


class ItemFault(StrEnum):
    """What ``fail_batch_items`` makes of one item."""

    ERROR = "error"
    EXPIRED = "expired"


class Outcome(StrEnum):
    """What ``next_batch_outcome`` makes of a whole batch."""

    FAILED = "failed"
    EXPIRED = "expired"


class Phase(StrEnum):
    """Where a batch is, spelled as OpenAI's status (Anthropic's spelling: :meth:`Batch.status`)."""

    VALIDATING = "validating"
    IN_PROGRESS = "in_progress"
    FINALIZING = "finalizing"
    CANCELLING = "cancelling"
    COMPLETED = "completed"
    FAILED = "failed"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


_ENDED = frozenset({Phase.COMPLETED, Phase.FAILED, Phase.EXPIRED, Phase.CANCELLED})


class Fate(StrEnum):
    """How one item ended: answered (200, or the error status the endpoint gave), expired, or cancelled unanswered."""

    ANSWERED = "answered"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class ApiError(Exception):
    """A request the batch API refuses: the server answers it in the provider's error shape."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class Host(Protocol):
    """What the batch API needs of the fake server (:class:`tests.support.llm_server.FakeLLM`)."""

    @property
    def batch_polls(self) -> int: ...

    def answer(self, provider: str, body: Any, request_id: str) -> tuple[int, dict[str, Any], str | None]: ...

    def error_body(self, provider: str, status: int, message: str) -> dict[str, Any]: ...


Serve = Callable[[str, Request, Any, Callable[[], Response]], Awaitable[Response]]
"""``(provider, request, body to log, reply) -> response``: the host's logging and auth around a batch route."""


@dataclasses.dataclass(frozen=True)
class ItemResult:
    fate: Fate
    request_id: str
    status: int = 0  # answered: the endpoint's status
    body: dict[str, Any] | None = None  # answered: the endpoint's JSON


@dataclasses.dataclass
class Item:
    custom_id: str
    body: Any
    fault: ItemFault | None = None
    result: ItemResult | None = None


@dataclasses.dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def json(self) -> dict[str, Any]:
        return {"id": self.id, "object": "file", "bytes": len(self.data), "created_at": self.created_at,
                "filename": self.filename, "purpose": self.purpose, "status": "processed", "expires_at": None,
                "status_details": None}  # fmt: skip


@dataclasses.dataclass
class Batch:
    provider: str
    id: str
    items: list[Item]
    polls: int  # retrieves that still see it unfinished
    cap: int  # items answered before it ends (fewer than all when scripted to expire)
    created_at: int
    phase: Phase
    metadata: dict[str, Any] | None = None
    input_file_id: str = ""
    model: str | None = None
    errors: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # OpenAI validation errors
    steps: int = 0  # retrieves that advanced it while in progress (its schedule)
    retrieves: int = 0  # every retrieve of it
    stamps: dict[str, int] = dataclasses.field(default_factory=dict)  # "<phase>_at" -> unix time
    output_file_id: str | None = None
    error_file_id: str | None = None
    results_url: str | None = None  # Anthropic, once ended

    @property
    def ended(self) -> bool:
        return self.phase in _ENDED

    @property
    def status(self) -> str:
        """The status in the provider's spelling."""
        if self.provider == OPENAI:
            return self.phase.value
        return "ended" if self.ended else "canceling" if self.phase is Phase.CANCELLING else "in_progress"

    def results(self) -> list[Item]:
        """The finished items in the order the results give them: shuffled by the batch id, never request order."""
        order = [item for item in self.items if item.result is not None]
        random.Random(self.id).shuffle(order)
        done = [item for item in self.items if item.result is not None]
        return order[1:] + order[:1] if len(order) > 1 and order == done else order


@dataclasses.dataclass
class BatchStats:
    """One provider's batch counters since the last reset."""

    batches: int = 0  # created
    items_answered: int = 0  # answered 200 by the endpoint
    files_uploaded: int = 0
    retrieves: int = 0


@dataclasses.dataclass(frozen=True)
class BatchView:
    """A batch as a test sees it."""

    provider: str
    id: str
    status: str
    items: int
    retrieves: int


def _now() -> int:
    return int(time.time())


def _rfc3339(unix: int | None) -> str | None:
    if unix is None:
        return None
    return datetime.datetime.fromtimestamp(unix, datetime.UTC).isoformat().replace("+00:00", "Z")


def _rid() -> str:
    return uuid.uuid4().hex[:24]


def _check_provider(provider: str) -> None:
    if provider not in (OPENAI, ANTHROPIC):
        raise ValueError(f"provider must be {OPENAI!r} or {ANTHROPIC!r}, not {provider!r}")


class BatchStore:
    """Every batch and file, the scripting queued for the next batches, and the counters. Thread-safe: tests script
    and read it from their thread while the server's loop serves; the host's ``answer`` is called under its lock."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self._lock = threading.RLock()
        self.reset()

    def reset(self) -> None:
        """Forget every batch, file, queued script and counter."""
        with self._lock:
            self._batches: dict[str, Batch] = {}
            self._files: dict[str, StoredFile] = {}
            self._faults: dict[str, dict[int, ItemFault]] = {}
            self._outcomes: dict[str, Outcome] = {}
            self._stats = {OPENAI: BatchStats(), ANTHROPIC: BatchStats()}

    # ----- scripting and views

    def fail_items(self, provider: str, items: Mapping[int, str]) -> None:
        """Script item faults for ``provider``'s next batch (see the module docstring)."""
        _check_provider(provider)
        faults = {int(position): ItemFault(kind) for position, kind in items.items()}
        if any(position < 0 for position in faults):
            raise ValueError("item positions are 0-based and >= 0")
        with self._lock:
            self._faults[provider] = faults

    def next_outcome(self, provider: str, outcome: str) -> None:
        """Script the outcome of ``provider``'s next batch (see the module docstring)."""
        _check_provider(provider)
        with self._lock:
            self._outcomes[provider] = Outcome(outcome)

    def stats(self, provider: str) -> BatchStats:
        _check_provider(provider)
        with self._lock:
            return dataclasses.replace(self._stats[provider])

    def views(self) -> list[BatchView]:
        with self._lock:
            return [BatchView(b.provider, b.id, b.status, len(b.items), b.retrieves) for b in self._batches.values()]

    # ----- files (OpenAI)

    def upload(self, filename: str, purpose: str, data: bytes) -> dict[str, Any]:
        if purpose not in _PURPOSES:
            raise ApiError(400, f"Invalid purpose {purpose!r}: expected one of {sorted(_PURPOSES)}.")
        with self._lock:
            stored = StoredFile(f"file-{_rid()}", filename, purpose, data, _now())
            self._files[stored.id] = stored
            self._stats[OPENAI].files_uploaded += 1
            return stored.json()

    def file(self, file_id: str) -> StoredFile:
        with self._lock:
            if file_id not in self._files:
                raise ApiError(404, f"No such File object: {file_id}")
            return self._files[file_id]

    def delete_file(self, file_id: str) -> dict[str, Any]:
        with self._lock:
            self.file(file_id)
            del self._files[file_id]
            return {"id": file_id, "object": "file", "deleted": True}

    def _write_file(self, filename: str, lines: list[dict[str, Any]]) -> str:
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        stored = StoredFile(f"file-{_rid()}", filename, "batch_output", data, _now())
        self._files[stored.id] = stored
        return stored.id

    # ----- batches, both providers

    def _batch(self, provider: str, batch_id: str) -> Batch:
        batch = self._batches.get(batch_id)
        if batch is None or batch.provider != provider:
            raise ApiError(404, f"No such batch: {batch_id}")
        return batch

    def _new(self, provider: str, items: list[Item], errors: list[dict[str, Any]], **fields: Any) -> Batch:
        """Register a batch with the scripting queued for it (a batch whose file failed validation keeps its errors
        and has no items); ended at once when ``batch_polls`` is 0."""
        faults = self._faults.pop(provider, {})
        outcome = self._outcomes.pop(provider, None)
        for position, fault in faults.items():
            if position < len(items):
                items[position].fault = fault
        prefix = "batch_" if provider == OPENAI else "msgbatch_"
        phase = Phase.VALIDATING if provider == OPENAI else Phase.IN_PROGRESS
        cap = len(items) // 2 if outcome is Outcome.EXPIRED else len(items)
        polls = max(int(self._host.batch_polls), 0)
        batch = Batch(provider, f"{prefix}{_rid()}", items, polls, cap, _now(), phase, errors=errors, **fields)
        if outcome is Outcome.FAILED and not errors:
            model = batch.model or "the model"
            message = f"Enqueued token limit reached for {model} in organization org-test (scripted)."
            batch.errors = [{"code": "token_limit_exceeded", "message": message, "line": None, "param": None}]
        if batch.errors:
            batch.items, batch.cap = [], 0
        self._batches[batch.id] = batch
        self._stats[provider].batches += 1
        if batch.polls == 0:
            self._advance(batch)
        return batch

    def retrieve(self, provider: str, batch_id: str) -> dict[str, Any]:
        """The batch, advanced one step (the module docstring)."""
        with self._lock:
            batch = self._batch(provider, batch_id)
            self._stats[provider].retrieves += 1
            batch.retrieves += 1
            self._advance(batch)
            return self._render(batch)

    def cancel(self, provider: str, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._batch(provider, batch_id)
            if batch.ended or batch.phase is Phase.CANCELLING:
                raise ApiError(400, f"Cannot cancel a batch with status {batch.status!r}.")
            self._enter(batch, Phase.CANCELLING)
            return self._render(batch)

    def list(self, provider: str, limit: int, after: str | None, before: str | None = None) -> dict[str, Any]:
        """A page of ``provider``'s batches, newest first, after (or before) the batch of that id."""
        with self._lock:
            newest = [b for b in reversed(self._batches.values()) if b.provider == provider]
            ids = [b.id for b in newest]
            if after is not None:
                newest = newest[ids.index(after) + 1 :] if after in ids else []
                chosen, more = newest[:limit], len(newest) > limit
            elif before is not None:
                newest = newest[: ids.index(before)] if before in ids else []
                chosen, more = newest[-limit:], len(newest) > limit
            else:
                chosen, more = newest[:limit], len(newest) > limit
            page = [self._render(b) for b in chosen]
            first, last = (page[0]["id"], page[-1]["id"]) if page else (None, None)
            if provider == OPENAI:
                return {"object": "list", "data": page, "first_id": first, "last_id": last, "has_more": more}
            return {"data": page, "has_more": more, "first_id": first, "last_id": last}

    def _enter(self, batch: Batch, phase: Phase) -> None:
        batch.phase = phase
        batch.stamps.setdefault(f"{phase.value}_at", _now())

    def _advance(self, batch: Batch) -> None:
        """One step: cancelling -> cancelled; a failed validation -> failed; else process items on the schedule."""
        if batch.ended:
            return
        if batch.phase is Phase.CANCELLING:
            self._end(batch, Phase.CANCELLED)
            return
        if batch.errors:
            self._end(batch, Phase.FAILED)
            return
        batch.steps += 1
        if batch.steps > batch.polls:
            self._process(batch, batch.cap)
            self._end(batch, Phase.EXPIRED if batch.cap < len(batch.items) else Phase.COMPLETED)
            return
        step, polls = batch.steps, batch.polls
        self._enter(batch, Phase.IN_PROGRESS)
        if step == polls and polls >= 2:
            self._enter(batch, Phase.FINALIZING)
        self._process(batch, batch.cap * step // polls)

    def _process(self, batch: Batch, upto: int) -> None:
        """Answer the first ``upto`` items (those not answered yet), in request order."""
        for item in batch.items[:upto]:
            if item.result is not None:
                continue
            rid = _rid()
            if item.fault is ItemFault.EXPIRED:
                item.result = ItemResult(Fate.EXPIRED, rid)
            elif item.fault is ItemFault.ERROR:
                error = self._host.error_body(batch.provider, 500, "Scripted item failure (fail_batch_items).")
                item.result = ItemResult(Fate.ANSWERED, rid, 500, error)
            else:
                status, body, _text = self._host.answer(batch.provider, item.body, rid)
                item.result = ItemResult(Fate.ANSWERED, rid, status, body)
                self._stats[batch.provider].items_answered += status == 200

    def _end(self, batch: Batch, phase: Phase) -> None:
        if phase is Phase.FAILED:
            self._enter(batch, phase)
            return
        if batch.provider == OPENAI and batch.phase is not Phase.CANCELLING:
            self._enter(batch, Phase.IN_PROGRESS)
            self._enter(batch, Phase.FINALIZING)
        fate = Fate.CANCELLED if phase is Phase.CANCELLED else Fate.EXPIRED
        for item in batch.items:
            if item.result is None:
                item.result = ItemResult(fate, _rid())
        self._enter(batch, phase)
        if batch.provider == OPENAI:
            output: list[dict[str, Any]] = []
            errors: list[dict[str, Any]] = []
            for item in batch.results():
                line = _openai_line(item)
                (output if line["error"] is None and line["response"]["status_code"] == 200 else errors).append(line)
            if output:
                batch.output_file_id = self._write_file(f"{batch.id}_output.jsonl", output)
            if errors:
                batch.error_file_id = self._write_file(f"{batch.id}_error.jsonl", errors)

    def _render(self, batch: Batch) -> dict[str, Any]:
        return _openai_batch(batch) if batch.provider == OPENAI else _anthropic_batch(batch)

    # ----- OpenAI

    def create_openai(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ApiError(400, "The request body must be a JSON object.")
        if body.get("endpoint") != ENDPOINT:
            raise ApiError(400, f"Invalid 'endpoint': {body.get('endpoint')!r}; this server batches only {ENDPOINT}.")
        if body.get("completion_window") != "24h":
            raise ApiError(400, f"Invalid 'completion_window': {body.get('completion_window')!r}; expected '24h'.")
        metadata = body.get("metadata")
        if metadata is not None and not (isinstance(metadata, dict) and len(metadata) <= 16):
            raise ApiError(400, "Invalid 'metadata': an object of at most 16 string pairs.")
        with self._lock:
            source = self._files.get(str(body.get("input_file_id")))
            if source is None:
                raise ApiError(400, f"Invalid 'input_file_id': no such file {body.get('input_file_id')!r}.")
            if source.purpose != "batch":
                raise ApiError(400, f"Invalid 'input_file_id': the file's purpose is {source.purpose!r}, not 'batch'.")
            items, errors, model = _parse_openai_file(source.data)
            batch = self._new(OPENAI, items, errors, metadata=metadata, input_file_id=source.id, model=model)
            return self._render(batch)

    # ----- Anthropic

    def create_anthropic(self, body: Any, base_url: str) -> dict[str, Any]:
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            raise ApiError(400, "requests: a non-empty list of {custom_id, params} is required.")
        seen: set[str] = set()
        items = []
        for i, request in enumerate(requests):
            custom_id = request.get("custom_id") if isinstance(request, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                raise ApiError(400, f"requests.{i}.custom_id: {custom_id!r} does not match '^[a-zA-Z0-9_-]{{1,64}}$'.")
            if custom_id in seen:
                raise ApiError(400, f"requests.{i}.custom_id: {custom_id!r} is used twice; custom_ids must be unique.")
            if not isinstance(request.get("params"), dict):
                raise ApiError(400, f"requests.{i}.params: an object of Messages API parameters is required.")
            seen.add(custom_id)
            items.append(Item(custom_id, request["params"]))
        with self._lock:
            if self._outcomes.get(ANTHROPIC) is Outcome.FAILED:
                del self._outcomes[ANTHROPIC]
                raise ApiError(400, "The batch was refused (next_batch_outcome: failed).")
            batch = self._new(ANTHROPIC, items, [], results_url=base_url.rstrip("/"))
            return self._render(batch)

    def results(self, batch_id: str) -> bytes:
        with self._lock:
            batch = self._batch(ANTHROPIC, batch_id)
            if not batch.ended:
                raise ApiError(404, f"The results of {batch_id} are not available until it has ended.")
            return "".join(json.dumps(_anthropic_line(item)) + "\n" for item in batch.results()).encode()

    def delete(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._batch(ANTHROPIC, batch_id)
            if not batch.ended:
                raise ApiError(400, "Message Batches can only be deleted once they have finished processing.")
            del self._batches[batch_id]
            return {"id": batch_id, "type": "message_batch_deleted"}


# --------------------------------------------------------------------------- wire formats


def _parse_openai_file(data: bytes) -> tuple[list[Item], list[dict[str, Any]], str | None]:
    """An input file's items, its validation errors (OpenAI's ``errors.data``), and its model."""
    errors: list[dict[str, Any]] = []
    items: list[Item] = []
    models: set[str] = set()

    def error(code: str, message: str, line: int | None, param: str | None = None) -> None:
        errors.append({"code": code, "message": message, "line": line, "param": param})

    for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            line = None
        if not isinstance(line, dict):
            error("invalid_json_line", "This line is not parseable as valid JSON.", number)
            continue
        custom_id, body = line.get("custom_id"), line.get("body")
        if not isinstance(custom_id, str) or not custom_id:
            error("missing_required_parameter", "Missing required parameter: 'custom_id'.", number, "custom_id")
        elif custom_id in {item.custom_id for item in items}:
            message = f"The custom_id {custom_id!r} is a duplicate of another request's; custom_ids must be unique."
            error("duplicate_custom_id", message, number, "custom_id")
        elif line.get("method") != "POST":
            error("invalid_method", f"Invalid 'method': {line.get('method')!r}; expected 'POST'.", number, "method")
        elif line.get("url") != ENDPOINT:
            message = f"Invalid 'url': {line.get('url')!r}; this batch's endpoint is {ENDPOINT}."
            error("mismatched_endpoint", message, number, "url")
        elif not isinstance(body, dict):
            error("missing_required_parameter", "Missing required parameter: 'body'.", number, "body")
        else:
            models.add(str(body.get("model")))
            items.append(Item(custom_id, body))
            if len(models) > 1:
                message = f"The model {body.get('model')!r} differs from the model of the earlier requests."
                error("mismatched_model", message, number, "body.model")
    if not items and not errors:
        error("empty_file", "The input file has no requests.", None)
    return items, errors, (min(models) if models else None)


def _openai_line(item: Item) -> dict[str, Any]:
    result = item.result
    assert result is not None
    line: dict[str, Any] = {"id": f"batch_req_{result.request_id}", "custom_id": item.custom_id}
    if result.fate is Fate.ANSWERED:
        response = {"status_code": result.status, "request_id": f"req_{result.request_id}", "body": result.body}
        return {**line, "response": response, "error": None}
    if result.fate is Fate.EXPIRED:
        message = "This request could not be executed before the completion window expired."
        error = {"code": "batch_expired", "message": message}
    else:
        error = {"code": "batch_cancelled", "message": "This request was not executed: the batch was cancelled."}
    return {**line, "response": None, "error": error}


def _anthropic_line(item: Item) -> dict[str, Any]:
    result = item.result
    assert result is not None
    if result.fate is Fate.ANSWERED:
        outcome = (
            {"type": "succeeded", "message": result.body}
            if result.status == 200
            else {"type": "errored", "error": result.body}
        )
    else:
        outcome = {"type": "expired" if result.fate is Fate.EXPIRED else "canceled"}
    return {"custom_id": item.custom_id, "result": outcome}


def _openai_batch(batch: Batch) -> dict[str, Any]:
    """The batch as OpenAI's Batch object."""
    done = [item.result for item in batch.items if item.result is not None]
    answered = [r for r in done if r.fate is Fate.ANSWERED and r.status == 200]
    usages = [r.body.get("usage") or {} for r in answered if r.body is not None]
    tokens_in = sum(u.get("prompt_tokens", 0) for u in usages)
    tokens_out = sum(u.get("completion_tokens", 0) for u in usages)
    cached = sum((u.get("prompt_tokens_details") or {}).get("cached_tokens", 0) for u in usages)
    stamp = batch.stamps.get
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": ENDPOINT,
        "model": batch.model,
        "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
        "input_file_id": batch.input_file_id,
        "completion_window": "24h",
        "status": batch.status,
        "output_file_id": batch.output_file_id,
        "error_file_id": batch.error_file_id,
        "created_at": batch.created_at,
        "in_progress_at": stamp("in_progress_at"),
        "expires_at": batch.created_at + _DAY_S,
        "finalizing_at": stamp("finalizing_at"),
        "completed_at": stamp("completed_at"),
        "failed_at": stamp("failed_at"),
        "expired_at": stamp("expired_at"),
        "cancelling_at": stamp("cancelling_at"),
        "cancelled_at": stamp("cancelled_at"),
        "request_counts": {"total": len(batch.items), "completed": len(answered), "failed": len(done) - len(answered)},
        "usage": {
            "input_tokens": tokens_in,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": tokens_out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens_in + tokens_out,
        },
        "metadata": batch.metadata,
    }


def _anthropic_batch(batch: Batch) -> dict[str, Any]:
    """The batch as Anthropic's MessageBatch object (request counts stay ``processing`` until it ends)."""
    counts = {"processing": len(batch.items), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
    if batch.ended:
        counts["processing"] = 0
        for item in batch.items:
            assert item.result is not None
            line = _anthropic_line(item)["result"]["type"]
            counts[line] += 1
    ended = batch.stamps.get(f"{batch.phase.value}_at") if batch.ended else None
    return {
        "id": batch.id,
        "type": "message_batch",
        "processing_status": batch.status,
        "request_counts": counts,
        "created_at": _rfc3339(batch.created_at),
        "ended_at": _rfc3339(ended),
        "expires_at": _rfc3339(batch.created_at + _DAY_S),
        "archived_at": None,
        "cancel_initiated_at": _rfc3339(batch.stamps.get("cancelling_at")),
        "results_url": f"{batch.results_url}/v1/messages/batches/{batch.id}/results" if batch.ended else None,
    }


# --------------------------------------------------------------------------- routes


async def _body(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _limit(request: Request, most: int) -> int:
    try:
        limit = int(request.query_params.get("limit", 20))
    except ValueError:
        raise ApiError(400, "limit must be an integer.") from None
    if not 1 <= limit <= most:
        raise ApiError(400, f"limit must be between 1 and {most}.")
    return limit


def batch_routes(store: BatchStore, serve: Serve) -> list[Route]:
    """The batch endpoints of both providers, each served through ``serve`` (the host's log and auth)."""

    def json_reply(make: Callable[[], dict[str, Any]]) -> Callable[[], Response]:
        return lambda: JSONResponse(make())

    async def upload(request: Request) -> Response:
        try:
            form = await request.form()
        except Exception as exc:  # a malformed multipart body
            return await serve(OPENAI, request, "", _refuse(f"The upload is not a valid multipart form: {exc}."))
        upload, purpose = form.get("file"), str(form.get("purpose", ""))
        if not isinstance(upload, UploadFile):
            refusal = _refuse("Missing required parameter: 'file' (multipart/form-data).")
            return await serve(OPENAI, request, {"purpose": purpose}, refusal)
        data = await upload.read()
        filename = upload.filename or "upload.jsonl"
        logged = {"purpose": purpose, "filename": filename, "bytes": len(data)}
        return await serve(OPENAI, request, logged, json_reply(lambda: store.upload(filename, purpose, data)))

    async def file_get(request: Request) -> Response:
        file_id = request.path_params["file_id"]
        return await serve(OPENAI, request, await _body(request), json_reply(lambda: store.file(file_id).json()))

    async def file_delete(request: Request) -> Response:
        file_id = request.path_params["file_id"]
        return await serve(OPENAI, request, await _body(request), json_reply(lambda: store.delete_file(file_id)))

    async def file_content(request: Request) -> Response:
        file_id = request.path_params["file_id"]

        def reply() -> Response:
            return Response(store.file(file_id).data, media_type="application/octet-stream")

        return await serve(OPENAI, request, await _body(request), reply)

    async def openai_create(request: Request) -> Response:
        body = await _body(request)
        return await serve(OPENAI, request, body, json_reply(lambda: store.create_openai(body)))

    async def openai_list(request: Request) -> Response:
        after = request.query_params.get("after")
        reply = json_reply(lambda: store.list(OPENAI, _limit(request, 100), after))
        return await serve(OPENAI, request, await _body(request), reply)

    async def anthropic_create(request: Request) -> Response:
        body = await _body(request)
        base = str(request.base_url)
        return await serve(ANTHROPIC, request, body, json_reply(lambda: store.create_anthropic(body, base)))

    async def anthropic_list(request: Request) -> Response:
        after, before = request.query_params.get("after_id"), request.query_params.get("before_id")
        reply = json_reply(lambda: store.list(ANTHROPIC, _limit(request, 1000), after, before))
        return await serve(ANTHROPIC, request, await _body(request), reply)

    def on_batch(provider: str, action: Callable[[str], dict[str, Any]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            batch_id = request.path_params["batch_id"]
            return await serve(provider, request, await _body(request), json_reply(lambda: action(batch_id)))

        return endpoint

    async def anthropic_results(request: Request) -> Response:
        batch_id = request.path_params["batch_id"]

        def reply() -> Response:
            return Response(store.results(batch_id), media_type="application/x-jsonl")

        return await serve(ANTHROPIC, request, await _body(request), reply)

    def retrieve(provider: str) -> Callable[[str], dict[str, Any]]:
        return lambda batch_id: store.retrieve(provider, batch_id)

    def cancel(provider: str) -> Callable[[str], dict[str, Any]]:
        return lambda batch_id: store.cancel(provider, batch_id)

    return [
        Route("/v1/files", upload, methods=["POST"]),
        Route("/v1/files/{file_id}", file_get, methods=["GET"]),
        Route("/v1/files/{file_id}", file_delete, methods=["DELETE"]),
        Route("/v1/files/{file_id}/content", file_content, methods=["GET"]),
        Route("/v1/batches", openai_create, methods=["POST"]),
        Route("/v1/batches", openai_list, methods=["GET"]),
        Route("/v1/batches/{batch_id}", on_batch(OPENAI, retrieve(OPENAI)), methods=["GET"]),
        Route("/v1/batches/{batch_id}/cancel", on_batch(OPENAI, cancel(OPENAI)), methods=["POST"]),
        Route("/v1/messages/batches", anthropic_create, methods=["POST"]),
        Route("/v1/messages/batches", anthropic_list, methods=["GET"]),
        Route("/v1/messages/batches/{batch_id}", on_batch(ANTHROPIC, retrieve(ANTHROPIC)), methods=["GET"]),
        Route("/v1/messages/batches/{batch_id}", on_batch(ANTHROPIC, store.delete), methods=["DELETE"]),
        Route("/v1/messages/batches/{batch_id}/results", anthropic_results, methods=["GET"]),
        Route("/v1/messages/batches/{batch_id}/cancel", on_batch(ANTHROPIC, cancel(ANTHROPIC)), methods=["POST"]),
    ]


def _refuse(message: str) -> Callable[[], Response]:
    """A reply that refuses the request with a 400."""

    def reply() -> Response:
        raise ApiError(400, message)

    return reply
