"""A loopback OpenAI- and Anthropic-compatible server for integration tests and benchmarks.

Why a real server: the ``openai`` 3.x and ``anthropic`` 2.x SDKs are built on httpx2, which
``respx`` cannot intercept, and no test may reach a real provider. A server on 127.0.0.1 exercises
both SDKs exactly as production does (headers, error classes, ``retry-after``, timeouts) and lets
a test script the failures a rate limiter and a retry policy must survive: 429s from a rolling
requests-per-minute window (or with any Retry-After), 500s, Anthropic's 529, answers that never
arrive in time, and 200s whose body is not the API's JSON (corrupted, or a proxy's HTML page). With
``prompt_cache=True`` it accounts for prompt caching as each provider does (:mod:`tests.support.prompt_cache`).
Both providers' batch APIs (OpenAI files and batches, Anthropic Message Batches) are served too, with their
scripting: :mod:`tests.support.batch_api`.

In-process (uvicorn on a background thread)::

    with FakeLLMServer(latency_ms=5, rpm_limit=60) as server:
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test")
        server.fail_next("openai", [429, 500, "timeout"])
        ...
        assert server.count(provider="openai", status=200) == 1

As a separate process (benchmarks; no shared event loop or GIL with the harness)::

    python -m tests.support.llm_server --port 0 --latency-ms 50 --rpm-limit 500
    # first line on stdout: LISTENING http://127.0.0.1:PORT

or ``with FakeLLMProcess(latency_ms=50) as proc: ...``, which drives the same settings, scripted
failures and request log through the server's small ``/_control`` HTTP API.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime
import itertools
import json
import math
import queue
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import FrameType
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.batch_api import ApiError, BatchStats, BatchStore, BatchView, batch_routes
from tests.support.prompt_cache import AnthropicCache, OpenAICache

HOST = "127.0.0.1"  # never anything else: this server has no business being reachable off-machine
PROVIDERS = ("openai", "anthropic")
DEFAULT_REPLY = "I will cooperate this round. Final answer: C"
GARBAGE_REPLY = "Hmm, let me think about this a little longer."  # no C/D letter and no move word
_AUTH_HEADERS = frozenset({"authorization", "x-api-key", "proxy-authorization", "api-key"})
_REQUEST_ID_HEADER = {"openai": "x-request-id", "anthropic": "request-id"}
_OPENAI_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}

Responder = Callable[[str, dict[str, Any]], str]
"""``(provider, request_json) -> answer text``; called on the server's event loop, so keep it quick."""
Failure = int | str
"""A scripted failure: an HTTP status (400-599) answered once, or one of :data:`FAULTS`."""
FAULTS = ("timeout", "corrupt", "html", "no_choices", "empty_choices", "null_content", "refusal", "unavailable")
"""Scripted faults besides a status: ``timeout`` holds the answer back ``timeout_s``; ``corrupt`` answers
200 with the completion's JSON corrupted (the colon after its first key replaced, so it is never valid
JSON, with an honest content-length: the body arrives whole, unlike a dropped connection); ``html``
answers 200 with an HTML page, as a captive portal or a misconfigured proxy does. Valid JSON without
the answer in it: ``no_choices`` leaves OpenAI's ``choices`` (Anthropic's ``content``) out,
``empty_choices`` sends ``choices: []``, ``null_content`` a message whose content is null (finish reason
``stop``; Anthropic: ``content: null``). ``refusal`` is the provider's content filter withholding the
answer: OpenAI's null content with ``finish_reason: content_filter``, Anthropic's ``stop_reason: refusal``
with no text. ``unavailable`` is OpenAI's 429 to a flex request it has no capacity for (``code:
resource_unavailable``, no Retry-After), on any request."""
_ANSWERLESS = frozenset(FAULTS[3:7])


# --------------------------------------------------------------------------- responders


def always(text: str) -> Responder:
    """Answer ``text`` every time: a fixed behaviour such as an always-defecting model."""

    def respond(provider: str, request: dict[str, Any]) -> str:
        return text

    return respond


def sequence(texts: Sequence[str]) -> Responder:
    """Answer ``texts`` in order and then cycle, so a test can script a game's moves exactly."""
    if not texts:
        raise ValueError("sequence() needs at least one text")
    lock = threading.Lock()
    items = itertools.cycle(list(texts))

    def respond(provider: str, request: dict[str, Any]) -> str:
        with lock:
            return next(items)

    return respond


def garbage_then(n: int, then: str | Responder = DEFAULT_REPLY) -> Responder:
    """Answer ``n`` unparseable replies, then ``then``: drives the harness's re-ask path."""
    after = always(then) if isinstance(then, str) else then
    lock = threading.Lock()
    left = n

    def respond(provider: str, request: dict[str, Any]) -> str:
        nonlocal left
        with lock:
            if left > 0:
                left -= 1
                return GARBAGE_REPLY
        return after(provider, request)

    return respond


def reply_schema(provider: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks the reply to follow: OpenAI's ``response_format`` (``json_schema``), or the
    input schema of the one tool an Anthropic request forces (``tool_choice: {type: tool}``); None for free text."""
    if provider == "openai":
        fmt = request.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            schema = fmt.get("json_schema", {}).get("schema")
            return schema if isinstance(schema, dict) else None
        return None
    choice = request.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool":
        for tool in request.get("tools") or []:
            if isinstance(tool, dict) and tool.get("name") == choice.get("name"):
                schema = tool.get("input_schema")
                return schema if isinstance(schema, dict) else None
    return None


def constrained(
    option: int | Callable[[list[str]], str], reasoning: str = "Their last move decides mine."
) -> Responder:
    """Answer as a constrained decoder would: the JSON object of the request's schema, whose ``action`` is the
    schema's enum value ``option`` (0: the first label, 1: the second; or a function of the enum that returns the
    action), with ``reasoning`` first when the schema has it. A request without a schema gets the free default."""

    def respond(provider: str, request: dict[str, Any]) -> str:
        schema = reply_schema(provider, request)
        if schema is None:
            return DEFAULT_REPLY
        properties = schema.get("properties", {})
        labels = list(properties.get("action", {}).get("enum", []))
        reply: dict[str, Any] = {"reasoning": reasoning} if "reasoning" in properties else {}
        reply["action"] = labels[option] if isinstance(option, int) else option(labels)
        return json.dumps(reply)

    return respond


def is_probe(request: dict[str, Any]) -> bool:
    """Whether a request is the check a run sends before it plays (:mod:`harness.engine.structured_probe`), not a
    move: responders that script a game's replies let it through."""
    from harness.engine.structured_probe import PROBE_PROMPT

    marker = PROBE_PROMPT.partition("{")[0]
    return any(marker in str(m.get("content")) for m in request.get("messages") or [] if isinstance(m, dict))


default_responder: Responder = always(DEFAULT_REPLY)
"""Always cooperates, with free text around the letter, the way chatty models answer."""


def build_responder(replies: Sequence[str] = (), garbage_first: int = 0) -> Responder:
    """Turn CLI/control-API options into a responder (callables cannot cross a process boundary)."""
    responder = default_responder if not replies else always(replies[0]) if len(replies) == 1 else sequence(replies)
    return garbage_then(garbage_first, responder) if garbage_first else responder


# --------------------------------------------------------------------------- configuration and records


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """The server's behaviour. Frozen so a runtime change swaps the whole object atomically and a
    request in flight always sees one consistent configuration."""

    responder: Responder = default_responder
    latency_ms: float = 0.0  # added to every admitted request (async sleep)
    rpm_limit: int | None = None  # per provider, over a rolling window of admitted request starts
    rate_window_s: float = 60.0  # the rolling window; shorten it to test recovery quickly
    error_rate: float = 0.0  # share of admitted requests answered with a random 500
    seed: int = 0  # seeds error_rate's draws, so a flaky run can be replayed
    timeout_s: float = 30.0  # how long a scripted "timeout" holds its answer back
    retry_after_s: float = 1.0  # retry-after sent with scripted (not rpm-limit) 429s
    stray_429_rate: float = 0.0  # share of admitted requests refused at once with a 429 (retry_after_s): overload
    ratelimit_headers: bool = False  # send the provider's rate-limit headers (limit, remaining, reset) of rpm_limit
    require_key: bool = True  # False: answer requests without a key too, as local servers (vLLM, Ollama) do
    structured: bool = True  # False: refuse a JSON-schema response_format / a forced tool with a 400, as old servers do
    # Prompt caching as each provider accounts for it (tests.support.prompt_cache); off: usage as always, no cache.
    prompt_cache: bool = False
    openai_cache_min: int = 1024  # OpenAI caches prefixes of at least this many tokens ...
    openai_cache_step: int = 128  # ... in steps of this many
    anthropic_cache_min: int = 1024  # Anthropic writes a breakpoint's prefix of at least this many tokens
    anthropic_lookback: int = 20  # block boundaries before a breakpoint where Anthropic looks for a hit
    flex_unavailable_rate: float = 0.0  # share of OpenAI flex requests answered 429 resource unavailable (seeded)
    batch_polls: int = 2  # retrieves of a batch that still see it unfinished; 0: ended at creation (batch_api)

    def __post_init__(self) -> None:
        if not callable(self.responder):
            raise ValueError("responder must be a callable (provider, request_json) -> str")
        if self.latency_ms < 0:
            raise ValueError("latency_ms must be >= 0")
        if self.rpm_limit is not None and self.rpm_limit < 1:
            raise ValueError("rpm_limit must be >= 1, or None for no limit")
        if not 0.0 <= self.error_rate <= 1.0:
            raise ValueError("error_rate must be between 0 and 1")
        if not 0.0 <= self.stray_429_rate <= 1.0:
            raise ValueError("stray_429_rate must be between 0 and 1")
        if not 0.0 <= self.flex_unavailable_rate <= 1.0:
            raise ValueError("flex_unavailable_rate must be between 0 and 1")
        if self.batch_polls < 0:
            raise ValueError("batch_polls must be >= 0")
        if min(self.rate_window_s, self.timeout_s, self.retry_after_s) <= 0:
            raise ValueError("rate_window_s, timeout_s and retry_after_s must be > 0")
        if (
            min(self.openai_cache_min, self.openai_cache_step, self.anthropic_cache_min) < 1
            or self.anthropic_lookback < 0
        ):
            raise ValueError("the cache minimums and step must be >= 1, the lookback >= 0")

    def to_json(self) -> dict[str, Any]:
        """Every setting but the responder, which is code, for the control API."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "responder"}


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it. The credential's value is never kept, only its presence."""

    provider: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON, or the raw text when it was not JSON
    time: float  # wall clock at arrival
    has_auth: bool
    status: int | None = None  # None while the answer is pending, or if it was never sent
    fault: str | None = None  # auth, invalid, rate_limit, stray, scripted, random, timeout, corrupt, html, responder
    response_text: str | None = None
    retry_after: float | None = None  # the wait a 429 asked for


class _Setting:
    """Exposes one ServerConfig field as a read/write attribute of FakeLLM, changed atomically."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: FakeLLM | None, objtype: type | None = None) -> Any:
        return self if obj is None else getattr(obj.config, self.name)

    def __set__(self, obj: FakeLLM, value: Any) -> None:
        obj.configure(**{self.name: value})


# --------------------------------------------------------------------------- behaviour and memory


class FakeLLM:
    """The fake provider's behaviour and request log, independent of how it is served.

    Every public method is thread-safe: tests change settings and read the log from their own
    thread while the server's event loop handles requests.
    """

    responder = _Setting()
    latency_ms = _Setting()
    rpm_limit = _Setting()
    stray_429_rate = _Setting()
    ratelimit_headers = _Setting()
    rate_window_s = _Setting()
    error_rate = _Setting()
    timeout_s = _Setting()
    retry_after_s = _Setting()
    require_key = _Setting()
    prompt_cache = _Setting()
    flex_unavailable_rate = _Setting()
    batch_polls = _Setting()

    def __init__(self, config: ServerConfig | None = None, **changes: Any) -> None:
        self._lock = threading.Lock()
        self._config = dataclasses.replace(config or ServerConfig(), **changes)
        self._rng = random.Random(self._config.seed)
        self._records: list[RecordedRequest] = []
        self._generation = 0  # bumped by reset(), so a straggler cannot overwrite a newer record
        self._failures: dict[str, deque[Failure]] = {p: deque() for p in PROVIDERS}
        self._windows: dict[str, deque[float]] = {p: deque() for p in PROVIDERS}
        self._openai_cache = OpenAICache()
        self._anthropic_cache = AnthropicCache()
        self.batch_store = BatchStore(self)
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # ----- control

    @property
    def config(self) -> ServerConfig:
        """The current configuration (an immutable snapshot)."""
        return self._config

    def configure(self, **changes: Any) -> None:
        """Change settings at runtime; a new ``seed`` restarts the error_rate draws."""
        with self._lock:
            self._config = dataclasses.replace(self._config, **changes)
            if "seed" in changes:
                self._rng = random.Random(self._config.seed)

    def fail_next(self, provider: str, failures: Iterable[Failure]) -> None:
        """Queue failures for ``provider``'s next admitted requests, one each, in order."""
        if provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {PROVIDERS}, not {provider!r}")
        items = list(failures)
        for item in items:
            if item not in FAULTS and not (isinstance(item, int) and 400 <= item <= 599):
                raise ValueError(f"a failure is an HTTP status 400-599 or one of {FAULTS}, not {item!r}")
        with self._lock:
            self._failures[provider].extend(items)

    def reset(self) -> None:
        """Forget requests, queued failures, rate windows, cached prompts, and batches, files and their scripting;
        reseed; settings are kept."""
        self.batch_store.reset()  # not under self._lock: the store calls answer(), which takes it
        with self._lock:
            self._records.clear()
            self._openai_cache, self._anthropic_cache = OpenAICache(), AnthropicCache()
            self._generation += 1
            for pending in (*self._failures.values(), *self._windows.values()):
                pending.clear()
            self._rng = random.Random(self._config.seed)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request so far, oldest first."""
        with self._lock:
            return list(self._records)

    def count(self, provider: str | None = None, status: int | None = None) -> int:
        """How many requests match; ``None`` matches anything."""
        return sum(
            1
            for r in self.requests
            if (provider is None or r.provider == provider) and (status is None or r.status == status)
        )

    @property
    def rate_limited_count(self) -> int:
        """How many requests were answered 429 (rpm limit or scripted), all providers."""
        return self.count(status=429)

    def fail_batch_items(self, provider: str, items: Mapping[int, str]) -> None:
        """Make items of ``provider``'s next batch fail: ``{position: "error" | "expired"}`` (batch_api)."""
        self.batch_store.fail_items(provider, items)

    def next_batch_outcome(self, provider: str, outcome: str) -> None:
        """Make ``provider``'s next batch ``"failed"`` or ``"expired"`` (batch_api)."""
        self.batch_store.next_outcome(provider, outcome)

    def batch_stats(self, provider: str) -> BatchStats:
        """``provider``'s batch counters: batches created, items answered, files uploaded, retrieves."""
        return self.batch_store.stats(provider)

    @property
    def batches(self) -> list[BatchView]:
        """Every batch, oldest first: provider, id, status (the provider's spelling), items, retrieves."""
        return self.batch_store.views()

    # ----- serving

    def started_serving(self) -> None:
        """Called on the serving loop at startup, so stop_serving() can wake sleepers from any thread."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()

    def stop_serving(self) -> None:
        """Wake every sleeping request, so a scripted 30 s timeout never holds up shutdown."""
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)

    async def _sleep(self, seconds: float) -> bool:
        """Sleep ``seconds``; True if cut short because the server is stopping."""
        if seconds <= 0 or self._stop is None:
            return False
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def _admit(self, provider: str, cfg: ServerConfig) -> float | None:
        """Count a request start in the rolling window; seconds to wait instead if it is full."""
        now = time.monotonic()
        window = self._windows[provider]
        while window and window[0] <= now - cfg.rate_window_s:
            window.popleft()
        if cfg.rpm_limit is not None and len(window) >= cfg.rpm_limit:
            return window[0] + cfg.rate_window_s - now
        window.append(now)
        return None

    def _limit_headers(self, provider: str, cfg: ServerConfig) -> dict[str, str]:
        """The rate-limit headers of the rpm window as it stands (after this request's admission), in the
        provider's own spelling; none unless ``ratelimit_headers`` and ``rpm_limit`` are set."""
        if not cfg.ratelimit_headers or cfg.rpm_limit is None:
            return {}
        window = self._windows[provider]
        remaining = max(cfg.rpm_limit - len(window), 0)
        reset = window[0] + cfg.rate_window_s - time.monotonic() if window else 0.0
        if provider == "anthropic":
            at = datetime.datetime.fromtimestamp(time.time() + reset, datetime.UTC).isoformat().replace("+00:00", "Z")
            return {"anthropic-ratelimit-requests-limit": str(cfg.rpm_limit),
                    "anthropic-ratelimit-requests-remaining": str(remaining),
                    "anthropic-ratelimit-requests-reset": at}  # fmt: skip
        return {"x-ratelimit-limit-requests": str(cfg.rpm_limit), "x-ratelimit-remaining-requests": str(remaining),
                "x-ratelimit-reset-requests": f"{max(reset, 0.0):.3f}s"}  # fmt: skip

    def _update(self, ticket: tuple[int, int], **changes: Any) -> None:
        with self._lock:
            generation, index = ticket
            if generation == self._generation:
                self._records[index] = dataclasses.replace(self._records[index], **changes)

    def _log(self, provider: str, request: Request, body: Any) -> tuple[tuple[int, int], str]:
        """Record a request as it arrives: (its ticket for :meth:`_update`, its API key)."""
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _AUTH_HEADERS}
        key = _api_key(request)
        record = RecordedRequest(provider, request.url.path, headers, body, time.time(), has_auth=bool(key))
        with self._lock:
            self._records.append(record)
            return (self._generation, len(self._records) - 1), key

    async def serve(self, provider: str, request: Request, body: Any, reply: Callable[[], Response]) -> Response:
        """Answer a batch-API request (:mod:`tests.support.batch_api`) with ``reply()``: logged (with ``body``) and
        auth-checked as the others, but never rate limited (batch APIs have their own limits) nor given scripted
        faults; an ApiError it raises is answered in the provider's error shape."""
        ticket, key = self._log(provider, request, body)
        fault: str | None = None
        response: Response
        if not key and self._config.require_key:
            message = "Missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`."
            response, fault = error_response(provider, 401, message), "auth"
        else:
            try:
                response = reply()
            except ApiError as exc:
                response, fault = error_response(provider, exc.status, exc.message), "invalid"
        response.headers[_REQUEST_ID_HEADER[provider]] = f"req_{uuid.uuid4().hex[:24]}"
        self._update(ticket, status=response.status_code, fault=fault)
        return response

    def answer(self, provider: str, body: Any, request_id: str) -> tuple[int, dict[str, Any], str | None]:
        """(status, JSON, answer text) the synchronous endpoint gives ``body`` once admitted and with no fault
        scripted: a 400 for a request the API would refuse, else the responder's answer (prompt caching counted when
        on). Batch items are answered here, so they equal the synchronous answers."""
        cfg = self._config
        problem = _invalid(provider, body) or _unstructured(provider, body, cfg)
        if problem:
            return 400, error_json(provider, 400, problem), None
        return self._reply(provider, body, request_id, cfg)

    @staticmethod
    def error_body(provider: str, status: int, message: str) -> dict[str, Any]:
        """An error's JSON in the provider's shape (for batch result lines)."""
        return error_json(provider, status, message)

    def _reply(
        self, provider: str, body: dict[str, Any], request_id: str, cfg: ServerConfig
    ) -> tuple[int, dict[str, Any], str | None]:
        """The responder's answer to a valid request, or a 500 if it raises (a test bug: the answer says so)."""
        try:
            text = cfg.responder(provider, body)
        except Exception as exc:
            return 500, error_json(provider, 500, f"The responder raised {exc!r}."), None
        usage = self._cached_usage(provider, body, cfg) if cfg.prompt_cache else None
        return 200, completion_json(provider, body, text, request_id, usage), text

    async def handle(self, provider: str, request: Request) -> Response:
        """Answer one API request: auth, rate window, validation, scripted faults, then the reply."""
        cfg = self._config
        raw = await request.body()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        ticket, key = self._log(provider, request, body)
        request_id = uuid.uuid4().hex[:24]

        def finish(response: Response, fault: str | None = None, text: str | None = None) -> Response:
            response.headers[_REQUEST_ID_HEADER[provider]] = f"req_{request_id}"
            self._update(ticket, status=response.status_code, fault=fault, response_text=text)
            return response

        if not key and cfg.require_key:
            message = "Missing API key: send `Authorization: Bearer <key>` or `x-api-key: <key>`."
            return finish(error_response(provider, 401, message), "auth")
        with self._lock:
            wait = self._admit(provider, cfg)
            limits = self._limit_headers(provider, cfg)
        if wait is not None:
            message = f"Rate limit reached: {cfg.rpm_limit} requests per {cfg.rate_window_s:g} s."
            self._update(ticket, retry_after=wait)
            return finish(rate_limited_response(provider, wait, message, limits), "rate_limit")
        if cfg.stray_429_rate:
            with self._lock:
                stray = self._rng.random() < cfg.stray_429_rate
            if stray:
                message = "The server is overloaded (stray_429_rate)."
                self._update(ticket, retry_after=cfg.retry_after_s)
                return finish(rate_limited_response(provider, cfg.retry_after_s, message), "stray")
        problem = _invalid(provider, body) or _unstructured(provider, body, cfg)
        if problem:
            return finish(error_response(provider, 400, problem), "invalid")
        with self._lock:
            failure: Failure | None = self._failures[provider].popleft() if self._failures[provider] else None
            if failure is None and cfg.error_rate and self._rng.random() < cfg.error_rate:
                failure = "random"
            flex = provider == "openai" and body.get("service_tier") == "flex"
            if failure is None and flex and cfg.flex_unavailable_rate:
                failure = "unavailable" if self._rng.random() < cfg.flex_unavailable_rate else None
        if failure == "unavailable":
            return finish(unavailable_response(provider), "unavailable")

        fault = None
        if failure == "timeout":
            fault = "timeout"
            self._update(ticket, fault=fault)  # visible while the answer is held back
            if await self._sleep(cfg.timeout_s):
                return finish(error_response(provider, 503, "The fake server is shutting down."), fault)
        elif await self._sleep(cfg.latency_ms / 1000):
            return finish(error_response(provider, 503, "The fake server is shutting down."), "shutdown")
        if failure == "random":
            return finish(error_response(provider, 500, "Random failure (error_rate)."), "random")
        if failure == 429:
            message = "Scripted rate limit."
            return finish(rate_limited_response(provider, cfg.retry_after_s, message), "scripted")
        if isinstance(failure, int):
            return finish(error_response(provider, failure, f"Scripted failure {failure}."), "scripted")
        if failure == "corrupt":
            whole = json.dumps(completion_json(provider, body, DEFAULT_REPLY, request_id)).encode()
            return finish(Response(whole.replace(b'":', b'"#', 1), media_type="application/json"), "corrupt")
        if failure == "html":
            page = "<html><body><h1>Sign in to continue</h1></body></html>"
            return finish(Response(page, media_type="text/html"), "html")
        if failure in _ANSWERLESS:
            return finish(JSONResponse(answerless_json(provider, body, str(failure), request_id)), str(failure))
        status, reply, text = self._reply(provider, body, request_id, cfg)
        return finish(JSONResponse(reply, status_code=status), fault if status == 200 else "responder", text)

    def _cached_usage(self, provider: str, body: dict[str, Any], cfg: ServerConfig) -> dict[str, Any]:
        """The input usage of an answered request under the provider's prompt caching (``prompt_cache``),
        which remembers it (see :mod:`tests.support.prompt_cache`)."""
        with self._lock:
            if provider == "openai":
                cache = self._openai_cache
                cache.minimum, cache.step = cfg.openai_cache_min, cfg.openai_cache_step
                prompt, cached = cache.usage(body)
                return {"prompt_tokens": prompt, "prompt_tokens_details": {"cached_tokens": cached}}
            anthropic = self._anthropic_cache
            anthropic.minimum, anthropic.lookback = cfg.anthropic_cache_min, cfg.anthropic_lookback
            return anthropic.usage(body)


# --------------------------------------------------------------------------- wire formats


def _api_key(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return request.headers.get("x-api-key", "").strip()


def _invalid(provider: str, body: Any) -> str | None:
    """What the real API would reject with a 400, so harness bugs fail here and not in production."""
    if not isinstance(body, dict):
        return "The request body must be a JSON object."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "`model` is required."
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        return "`messages` must be a non-empty list."
    if provider == "anthropic" and not isinstance(body.get("max_tokens"), int):
        return "`max_tokens` is required."
    if body.get("stream"):
        return "This fake server does not stream; call without `stream=True`."
    return None


def _unstructured(provider: str, body: dict[str, Any], cfg: ServerConfig) -> str | None:
    """The 400 of a server that cannot constrain its reply to a schema (``structured=False``), or of a malformed
    request for one (a schema that is no object, a tool_choice naming no tool)."""
    asked = body.get("response_format") if provider == "openai" else body.get("tool_choice")
    if asked is None:
        return None
    if not cfg.structured:
        what = "response_format" if provider == "openai" else "tools"
        return f"This server does not support `{what}` (no constrained output)."
    if reply_schema(provider, body) is None:
        return "The structured output request names no JSON schema."
    return None


def _text_of(content: Any) -> str:
    """Text of a message content: a string, or a list of parts/blocks with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def estimate_tokens(text: str) -> int:
    """About four characters per token, rounded up: good enough for cost and tokens/min tests."""
    return (len(text) + 3) // 4


def completion_json(
    provider: str, body: dict[str, Any], text: str, request_id: str, cached: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A successful answer in the provider's shape, with usage estimated from the text; ``cached``: the input
    usage under prompt caching instead (:meth:`FakeLLM._cached_usage`)."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    parts = [_text_of(body.get("system")), *(_text_of(m.get("content")) for m in messages)]
    prompt = "\n".join(part for part in parts if part)
    prompt_tokens, completion_tokens = estimate_tokens(prompt), estimate_tokens(text)
    if cached is not None and provider == "openai":
        prompt_tokens = cached["prompt_tokens"]
    if provider == "openai":
        return {
            "id": f"chatcmpl-{request_id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                **({"prompt_tokens_details": cached["prompt_tokens_details"]} if cached is not None else {}),
            },
            "service_tier": body.get("service_tier") or "default",  # the tier that served it, as OpenAI says
        }
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    stop_reason = "end_turn"
    if reply_schema(provider, body) is not None:
        try:
            arguments = json.loads(text)
        except ValueError:
            arguments = None
        if isinstance(arguments, dict):  # the forced tool's call; text that is no object stays text (a violation)
            tool = body["tool_choice"]["name"]
            content, stop_reason = (
                [{"type": "tool_use", "id": f"toolu_{request_id}", "name": tool, "input": arguments}],
                "tool_use",
            )
    return {
        "id": f"msg_{request_id}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens, **(cached or {})},
    }


def answerless_json(provider: str, body: dict[str, Any], fault: str, request_id: str) -> dict[str, Any]:
    """A 200 in the provider's shape without the answer in it (see :data:`FAULTS`)."""
    reply = completion_json(provider, body, "", request_id)
    if provider == "openai":
        choice = reply["choices"][0]
        if fault == "no_choices":
            del reply["choices"]
        elif fault == "empty_choices":
            reply["choices"] = []
        else:
            choice["message"]["content"] = None
            choice["finish_reason"] = "content_filter" if fault == "refusal" else "stop"
    elif fault == "no_choices":
        del reply["content"]
    elif fault == "refusal":
        reply.update(content=[], stop_reason="refusal")
    else:  # empty_choices, null_content: Anthropic has one list of blocks, null here
        reply["content"] = None
    return reply


def error_response(
    provider: str,
    status: int,
    message: str,
    *,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> JSONResponse:
    """An error in the provider's JSON shape, so the SDK raises the same class as in production."""
    return JSONResponse(error_json(provider, status, message, extra), status_code=status, headers=headers)


def error_json(provider: str, status: int, message: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The body of :func:`error_response`."""
    if provider == "openai":
        kind, code = _OPENAI_ERRORS.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
        error = {"message": message, "type": kind, "param": None, "code": code}
        return {"error": {**error, **(extra or {})}}
    kind = _ANTHROPIC_ERRORS.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message, **(extra or {})}}


def unavailable_response(provider: str) -> JSONResponse:
    """OpenAI's 429 to a flex request it has no capacity for: ``code: resource_unavailable``, and no wait asked."""
    message = "Resource unavailable: the flex tier has no capacity for this request right now. Please retry later."
    response = error_response(provider, 429, message)
    if provider == "openai":
        body = json.loads(bytes(response.body))
        body["error"].update(type="resource_unavailable", code="resource_unavailable")
        response = JSONResponse(body, status_code=429)
    return response


def rate_limited_response(
    provider: str, wait_s: float, message: str, limits: dict[str, str] | None = None
) -> JSONResponse:
    """A 429 whose wait is in ``retry-after`` (whole seconds, rounded up), ``retry-after-ms`` (what
    both SDKs prefer) and the body's ``retry_after``, for clients that read any one of them; with the
    rate-limit headers ``limits`` if given."""
    headers = {"retry-after": str(max(1, math.ceil(wait_s))), "retry-after-ms": str(max(1, math.ceil(wait_s * 1000)))}
    headers.update(limits or {})
    text = f"{message} Please try again in {wait_s:.3f}s."
    return error_response(provider, 429, text, headers=headers, extra={"retry_after": round(wait_s, 3)})


# --------------------------------------------------------------------------- the app and its control API


def create_app(fake: FakeLLM) -> Starlette:
    """The ASGI app: both providers' endpoints plus ``/_control`` (no auth, never recorded)."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        fake.started_serving()
        yield

    async def openai(request: Request) -> Response:
        return await fake.handle("openai", request)

    async def anthropic(request: Request) -> Response:
        return await fake.handle("anthropic", request)

    async def control(request: Request) -> Response:
        action = request.path_params["action"]
        try:
            payload = await request.json() if request.method == "POST" else {}
            if action == "config" and request.method == "POST":
                if "replies" in payload or "garbage_first" in payload:
                    payload["responder"] = build_responder(payload.pop("replies", ()), payload.pop("garbage_first", 0))
                fake.configure(**payload)
            elif action == "fail_next":
                fake.fail_next(payload["provider"], payload["failures"])
            elif action == "reset":
                fake.reset()
            elif action == "fail_batch_items":
                fake.fail_batch_items(payload["provider"], {int(k): v for k, v in payload["items"].items()})
            elif action == "next_batch_outcome":
                fake.next_batch_outcome(payload["provider"], payload["outcome"])
            elif action == "batches":
                return JSONResponse([dataclasses.asdict(b) for b in fake.batches])
            elif action == "batch_stats":
                return JSONResponse(dataclasses.asdict(fake.batch_stats(request.query_params["provider"])))
            elif action == "requests":
                return JSONResponse([dataclasses.asdict(r) for r in fake.requests])
            elif action == "count":
                status = request.query_params.get("status")
                provider = request.query_params.get("provider")
                return JSONResponse({"count": fake.count(provider, int(status) if status else None)})
            elif action != "config":
                return JSONResponse({"error": f"unknown control action {action!r}"}, status_code=404)
        except (ValueError, TypeError, KeyError) as exc:
            return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=400)
        return JSONResponse({"config": fake.config.to_json()})

    routes = [
        Route("/v1/chat/completions", openai, methods=["POST"]),
        Route("/v1/messages", anthropic, methods=["POST"]),
        *batch_routes(fake.batch_store, fake.serve),
        Route("/_control/{action}", control, methods=["GET", "POST"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


class _Uvicorn(uvicorn.Server):
    """uvicorn that also wakes the fake's sleeping requests when a signal asks it to exit."""

    def __init__(self, fake: FakeLLM) -> None:
        config = uvicorn.Config(
            create_app(fake),
            host=HOST,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,  # a backstop: stop_serving() normally ends sleeps at once
        )
        super().__init__(config)
        self.fake = fake

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.fake.stop_serving()
        super().handle_exit(sig, frame)


def _listen(port: int) -> socket.socket:
    """Bind and listen on 127.0.0.1 before uvicorn starts, so the port is known (0 picks a free
    one) and a client that connects early waits in the backlog instead of being refused."""
    # An explicit IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it every answer waits ~40 ms on Nagle + delayed ACK (10x slower benchmarks).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(2048)
    return sock


class _Endpoints:
    """The base URLs both SDKs want: OpenAI's includes ``/v1``, Anthropic's does not."""

    base_url: str

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url


class FakeLLMServer(FakeLLM, _Endpoints):
    """FakeLLM served by uvicorn on a background thread: ``with FakeLLMServer(...) as server:``."""

    def __init__(self, config: ServerConfig | None = None, *, port: int = 0, **changes: Any) -> None:
        super().__init__(config, **changes)
        self._requested_port = port
        self._server: _Uvicorn | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.base_url = ""

    def start(self, timeout_s: float = 10.0) -> Self:
        """Start serving and return once uvicorn accepts requests."""
        sock = _listen(self._requested_port)
        self.port = sock.getsockname()[1]
        self.base_url = f"http://{HOST}:{self.port}"
        self._server = server = _Uvicorn(self)
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="fake-llm", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the fake LLM server did not start; see uvicorn's log above")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving: wake sleeping requests, then let uvicorn shut down and join its thread."""
        if self._server is None or self._thread is None:
            return
        self.stop_serving()
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------- the subprocess mode


_REPO_ROOT = Path(__file__).resolve().parents[2]


class FakeLLMProcess(_Endpoints):
    """The same server in a child process (the CLI), driven over ``/_control``.

    Options are the CLI's, in Python spelling: ``FakeLLMProcess(latency_ms=50, rpm_limit=500,
    replies=["C", "D"], garbage_first=1)``. Responders cannot cross processes; use ``replies``.
    """

    def __init__(self, *, port: int = 0, replies: Sequence[str] = (), **options: float | None) -> None:
        self._args = ["--port", str(port)]
        for text in replies:
            self._args += ["--reply", text]
        for name, value in options.items():
            if value is not None:
                self._args += [f"--{name.replace('_', '-')}", str(value)]
        self._proc: subprocess.Popen[str] | None = None
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: no proxy
        self.base_url = ""

    def start(self, timeout_s: float = 15.0) -> Self:
        """Start the child and wait for its ``LISTENING`` line."""
        command = [sys.executable, "-m", "tests.support.llm_server", *self._args]
        self._proc = proc = subprocess.Popen(command, cwd=_REPO_ROOT, stdout=subprocess.PIPE, text=True)
        lines: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
        try:
            line = lines.get(timeout=timeout_s)
        except queue.Empty:
            line = ""
        if not line.startswith("LISTENING "):
            self.stop()
            raise RuntimeError(f"the fake LLM server process did not start (first line {line!r}); see its stderr")
        self.base_url = line.split()[1]
        return self

    def stop(self) -> None:
        """SIGTERM (uvicorn shuts down gracefully), then SIGKILL if it lingers."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    @property
    def returncode(self) -> int | None:
        """The child's exit code; None while it runs (or before start)."""
        return None if self._proc is None else self._proc.poll()

    def _call(self, action: str, payload: dict[str, Any] | None = None, query: str = "") -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(
            f"{self.base_url}/_control/{action}{query}", data=data, headers={"content-type": "application/json"}
        )
        with self._opener.open(request, timeout=10) as response:
            return json.loads(response.read())

    def configure(self, **changes: Any) -> None:
        """Change settings (as in ServerConfig, plus ``replies`` and ``garbage_first``)."""
        self._call("config", changes)

    def fail_next(self, provider: str, failures: Iterable[Failure]) -> None:
        """Queue scripted failures, as FakeLLM.fail_next."""
        self._call("fail_next", {"provider": provider, "failures": list(failures)})

    def reset(self) -> None:
        """Forget requests, queued failures and rate windows."""
        self._call("reset", {})

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The request log, as RecordedRequest dicts."""
        return self._call("requests")

    def count(self, provider: str | None = None, status: int | None = None) -> int:
        """How many requests match; ``None`` matches anything."""
        query = "&".join(f"{k}={v}" for k, v in (("provider", provider), ("status", status)) if v is not None)
        return self._call("count", query=f"?{query}" if query else "")["count"]

    @property
    def rate_limited_count(self) -> int:
        """How many requests were answered 429."""
        return self.count(status=429)

    def fail_batch_items(self, provider: str, items: Mapping[int, str]) -> None:
        """As FakeLLM.fail_batch_items."""
        self._call("fail_batch_items", {"provider": provider, "items": {str(k): v for k, v in items.items()}})

    def next_batch_outcome(self, provider: str, outcome: str) -> None:
        """As FakeLLM.next_batch_outcome."""
        self._call("next_batch_outcome", {"provider": provider, "outcome": outcome})

    def batch_stats(self, provider: str) -> BatchStats:
        """As FakeLLM.batch_stats."""
        return BatchStats(**self._call("batch_stats", query=f"?provider={provider}"))

    @property
    def batches(self) -> list[BatchView]:
        """As FakeLLM.batches."""
        return [BatchView(**b) for b in self._call("batches")]

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until SIGINT/SIGTERM; the first stdout line says where."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.llm_server",
        description="Fake OpenAI/Anthropic API on 127.0.0.1 for tests and benchmarks.",
        epilog="example: python -m tests.support.llm_server --port 0 --latency-ms 50 --rpm-limit 500",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every admitted request")
    parser.add_argument("--rpm-limit", type=int, default=None, help="requests per window, per provider")
    parser.add_argument("--rate-window-s", type=float, default=60.0, help="the rolling window (default 60)")
    parser.add_argument("--error-rate", type=float, default=0.0, help="share of requests answered 500")
    parser.add_argument("--seed", type=int, default=0, help="seed for --error-rate")
    parser.add_argument("--timeout-s", type=float, default=30.0, help="how long a scripted timeout waits")
    parser.add_argument("--retry-after-s", type=float, default=1.0, help="retry-after of scripted and stray 429s")
    parser.add_argument("--stray-429-rate", type=float, default=0.0, help="share of requests refused 429 at random")
    parser.add_argument("--ratelimit-headers", action="store_true", help="send rate-limit headers of --rpm-limit")
    parser.add_argument("--prompt-cache", action="store_true", help="account for prompt caching as each provider does")
    parser.add_argument("--batch-polls", type=int, default=2, help="retrieves that see a batch unfinished (default 2)")
    parser.add_argument("--reply", action="append", default=[], help="answer text; repeat to cycle through several")
    parser.add_argument("--garbage-first", type=int, default=0, help="unparseable answers before the real ones")
    args = parser.parse_args(argv)
    config = ServerConfig(
        responder=build_responder(args.reply, args.garbage_first),
        latency_ms=args.latency_ms,
        rpm_limit=args.rpm_limit,
        rate_window_s=args.rate_window_s,
        error_rate=args.error_rate,
        seed=args.seed,
        timeout_s=args.timeout_s,
        retry_after_s=args.retry_after_s,
        stray_429_rate=args.stray_429_rate,
        ratelimit_headers=args.ratelimit_headers,
        prompt_cache=args.prompt_cache,
        batch_polls=args.batch_polls,
    )
    sock = _listen(args.port)
    print(f"LISTENING http://{HOST}:{sock.getsockname()[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises Ctrl-C after shutting down
        _Uvicorn(FakeLLM(config)).run(sockets=[sock])


if __name__ == "__main__":
    main()


@contextlib.contextmanager
def served_to_the_cli(monkeypatch: Any, *, timeout_s: float = 2.0, **options: Any) -> Iterator[FakeLLMServer]:
    """A FakeLLMServer that ``pdbench`` run in-process (or its children) talks to: test keys, both base URLs
    pointed at it, short backoff and per-attempt timeout (``monkeypatch``: pytest's fixture)."""
    with FakeLLMServer(**options) as srv:
        yield serve_to_the_cli(monkeypatch, srv, timeout_s=timeout_s)


def serve_to_the_cli(monkeypatch: Any, srv: FakeLLMServer, *, timeout_s: float = 2.0) -> FakeLLMServer:
    """Point ``pdbench`` at a running ``srv`` (the module's shared one: stopping uvicorn costs 0.2 s a test), as
    :func:`served_to_the_cli` does for a server of its own."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-key-1234")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-secret-5678")
    monkeypatch.setenv("PDBENCH_BACKOFF", "0.01")
    monkeypatch.setenv("PDBENCH_TIMEOUT", f"{timeout_s:g}")
    monkeypatch.setenv("OPENAI_BASE_URL", srv.openai_base_url)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.anthropic_base_url)
    return srv
