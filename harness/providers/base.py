"""The provider contract, in the style of Inspect AI: ``generate`` plus ``should_retry``.

A provider turns chat messages into a :class:`Completion` and, when a request fails, tells
the call path whether that failure is worth another attempt (:class:`RetryDecision`) and
how long the server asked it to wait. It never sleeps or retries itself: the SDKs' own
retries are switched off so that the harness owns every attempt and records it.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol
from urllib.parse import urlsplit

from harness.providers.ratelimit_headers import RateLimitHeaders, parse_rate_limit_headers
from harness.providers.structured import ReplySchema
from harness.providers.tiers import CacheTtl, ServiceTier

Message = dict[str, str]

URL_EXAMPLE = "http://127.0.0.1:8000/v1"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a base URL, or None if it can: checked wherever a base URL comes from (the
    command line, an experiment file, the environment, the dashboard) before any run starts, since the SDKs
    find out only when the first request is sent, and then fail the game with a traceback's words."""
    if not url.startswith(("http://", "https://")):
        return "it does not start with http:// or https://"
    if any(c.isspace() or not c.isprintable() for c in url):
        return "it holds spaces or control characters"
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"it cannot be read ({exc})"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return "its port is not a number from 1 to 65535"
    if not parts.hostname:
        return "it names no host"
    return None


# Transient statuses worth another attempt; every other 4xx is the caller's mistake.
RETRYABLE_STATUS = frozenset({408, 409, 429, 529})  # and every 5xx
# The key or the account is refused: every request with that key would fail the same way.
AUTH_STATUS = frozenset({401, 403})


class FailureKind(StrEnum):
    """Why a request, and with it its game, failed; ``games.failure`` stores it, and it decides what
    ``pdbench resume`` does with the game."""

    RETRYABLE = "retryable"
    """A transient cause outlasted the retries (an outage, 5xx, 429s, timeouts): resume replays the game."""
    AUTHENTICATION = "authentication"
    """The provider refused the key or the access (401, 403): fix the key, and resume replays the game."""
    PERMANENT = "permanent"
    """The request itself was refused (another 4xx, a local error) or the model never gave a readable move
    with ``on_failure: fail``: asking again gives the same, so only ``resume --retry-failed`` replays it."""


@dataclass(frozen=True, slots=True)
class SamplingParams:
    """What shapes the answer besides the messages; part of the cache key. ``reply``: the structured reply
    asked for (see :mod:`harness.providers.structured`), None for a free-text one (then it is neither sent nor
    keyed, so free requests keep the cache keys they always had)."""

    temperature: float | None = None
    max_tokens: int = 256
    top_p: float | None = None
    seed: int | None = None
    reply: ReplySchema | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            k: v
            for k, v in (
                ("temperature", self.temperature),
                ("max_tokens", self.max_tokens),
                ("top_p", self.top_p),
                ("seed", self.seed),
                ("reply", None if self.reply is None else self.reply.as_dict()),
            )
            if v is not None
        }


@dataclass(frozen=True, slots=True)
class Sample:
    """Which draw of the model a request is: every seat of every game is its own draw.

    Two requests with the same messages and parameters but another condition, replicate or seat
    must be answered independently (by the provider, the cache and in-flight sharing alike), or
    two seats of a self-play game, or a model's round 1 against each opponent, would share one
    answer. The run id is deliberately not part of it: the same experiment run again, under any
    run id, is the same set of draws, so it is answered from the cache and a resume pays nothing twice.
    """

    condition: str
    replicate: int
    seat: str

    def as_dict(self) -> dict[str, Any]:
        return {"condition": self.condition, "replicate": self.replicate, "seat": self.seat}


@dataclass(frozen=True, slots=True)
class QuestionFacts:
    """A comprehension question as a stand-in model needs it: its kind and the answer that is right."""

    kind: str  # payoff | horizon | last_move
    expected: str  # canonical: "8,0" (your points, theirs), "10" (rounds) or "0.95" (probability), "C" or "D"
    probability: bool = False  # a horizon question whose answer is a probability (geometric), not rounds (fixed)


@dataclass(frozen=True, slots=True)
class PromptFacts:
    """What a prompt tells the model, in a structured form, for stand-in models only.

    A real model reads the prompt; the offline mock cannot, and must not guess from the templates'
    wording (rewording ``prompts/round.j2`` would silently change ``mock/tft``). So each request
    carries these facts beside the messages: the labels, the order the options were shown in, the
    reply format asked for, the rounds the prompt shows (the player's moves and the other's, as
    played, oldest first) and, for a comprehension question, what is asked and its right answer.
    They restate the messages and add nothing a model could not read from them, so they are not
    part of the cache key. Real providers (openai, anthropic) ignore them: nothing of them is sent.
    """

    cooperate: str
    defect: str
    option_order: str  # CD | DC: the option shown first, then the other
    answer_format: str  # free | json | label
    own_moves: tuple[str, ...]
    opponent_moves: tuple[str, ...]
    question: QuestionFacts | None = None

    def label(self, action: str) -> str:
        return self.cooperate if action == "C" else self.defect


@dataclass(frozen=True, slots=True)
class CacheHints:
    """Where a prompt's reusable prefixes end, for the providers whose prompt caching must be told.

    Each round's prompt repeats the last one's and adds to it (see ``prompts/round.j2``), so the provider can
    read everything but the newest lines from its cache. OpenAI caches such prefixes by itself and only
    routes by ``key`` (its ``prompt_cache_key``: one per game and seat, so that one game's requests reach
    the machine that holds its prefix); Anthropic caches only up to the ``cache_control`` breakpoints it is
    given, so ``breaks`` says where, as (index into the messages, character offset into that message's
    content) pairs in increasing order: the end of the rules, then the end of each round of the history.
    Like :class:`PromptFacts`, hints restate nothing and change no answer: they are not part of the cache key.
    """

    key: str | None = None
    breaks: tuple[tuple[int, int], ...] = ()
    ttl: CacheTtl = CacheTtl.FIVE_MINUTES


@dataclass(frozen=True, slots=True)
class Completion:
    """The model's answer. ``refusal`` says why the provider withheld it (its content filter: OpenAI's
    ``finish_reason: content_filter`` or ``message.refusal``, Anthropic's ``stop_reason: refusal``), None
    when it answered: a refusal is an outcome of its own (``calls.outcome = 'refused'``), not an empty
    answer, and ``text`` holds whatever came with it.

    ``input_tokens`` counts every input token, whether read from the provider's prompt cache or not (OpenAI's
    ``prompt_tokens``; Anthropic's ``input_tokens`` plus its cache reads and writes, which it reports apart),
    so token counts mean the same across providers and runs. ``cached_input_tokens`` are those of them read
    from the provider's prompt cache (OpenAI ``prompt_tokens_details.cached_tokens``, Anthropic
    ``cache_read_input_tokens``) and ``cache_write_tokens`` those written to it (Anthropic
    ``cache_creation_input_tokens``; OpenAI writes its cache for free and reports none); None when the
    provider said nothing of its cache."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    model: str
    finish_reason: str | None = None
    refusal: str | None = None
    cached_input_tokens: int | None = None
    cache_write_tokens: int | None = None


class MalformedResponse(Exception):
    """A 2xx answer whose body is not the API's JSON: corrupted on the way, an HTML page from a proxy
    or captive portal, JSON of another shape, or an answer without the answer (no ``choices``, an empty
    list of them, null content with no refusal to explain it). Worth another attempt, like an answer cut
    short (which the SDKs report as a lost connection): the request was fine, its answer was damaged.
    Never the model's empty answer: that would be cached for good and played as a fallback move."""


def well_formed(completion: Completion) -> Completion:
    """``completion`` if its fields have the types the API promises (token counts that are whole
    floats, as some compatible servers send, become ints). The SDKs build their response objects
    without validating them, so a body of the wrong shape would otherwise reach the game as a number
    where the text belongs, or fail there as a bug instead of being asked again."""
    tokens = (
        completion.input_tokens,
        completion.output_tokens,
        completion.cached_input_tokens,
        completion.cache_write_tokens,
    )
    if not (
        isinstance(completion.text, str)
        and isinstance(completion.model, str)
        and all(t is None or _whole_count(t) for t in tokens)
        and (completion.finish_reason is None or isinstance(completion.finish_reason, str))
        and (completion.refusal is None or isinstance(completion.refusal, str))
    ):
        raise MalformedResponse(f"the answer has fields of the wrong type: {completion!r}"[:300])
    if any(type(t) is float for t in tokens):
        whole = [None if t is None else int(t) for t in tokens]
        return replace(
            completion,
            input_tokens=whole[0],
            output_tokens=whole[1],
            cached_input_tokens=whole[2],
            cache_write_tokens=whole[3],
        )
    return completion


def _whole_count(value: object) -> bool:
    """A token count: a whole number >= 0 (an int, or a float such as 12.0); never a bool or a string."""
    whole = type(value) is int or (type(value) is float and value.is_integer())
    return whole and value >= 0  # type: ignore[operator]


def shape_error(response: object, error: Exception) -> MalformedResponse:
    """The MalformedResponse for a response a provider could not read (``error`` says where)."""
    if isinstance(response, str):  # what the SDKs return for a body that is not declared as JSON
        return MalformedResponse(f"the body is not JSON: {response[:120]!r}")
    return MalformedResponse(f"the JSON is not the API's answer ({type(response).__name__}: {error})"[:300])


class Fault(StrEnum):
    """What went wrong with one attempt, as the provider classifies it. The call path retries the first
    three kinds (within its bounds) and never the last two; the fault alone decides the attempt's
    ``calls.outcome`` and, should it be the request's last, its :class:`FailureKind`."""

    RATE_LIMITED = "rate_limited"
    """429: the endpoint's limit was reached; retried, and the endpoint slows down (see harness.calls.limits)."""
    TIMEOUT = "timeout"
    """No answer in time (the SDK's timeout or the call path's deadline); retried."""
    TRANSIENT = "transient"
    """408, 409, 5xx, 529, a lost connection, a malformed answer: the request was fine; retried."""
    AUTHENTICATION = "authentication"
    """401, 403: the key or the access was refused; every request with that key would fail the same way."""
    REJECTED = "rejected"
    """Any other 4xx, or a local error: asking again would give the same."""

    @property
    def retryable(self) -> bool:
        return self in _RETRIED

    @property
    def failure(self) -> FailureKind:
        """What kind of failure this is, should it end the request."""
        if self is Fault.AUTHENTICATION:
            return FailureKind.AUTHENTICATION
        if self is Fault.REJECTED:
            return FailureKind.PERMANENT
        return FailureKind.RETRYABLE


_RETRIED = frozenset({Fault.RATE_LIMITED, Fault.TIMEOUT, Fault.TRANSIENT})


@dataclass(frozen=True, slots=True)
class RetryDecision:
    """A provider's reading of one failed attempt: what went wrong, in words for the record (``reason``,
    never parsed), and how long the server asked to wait. Whether to try again within the request's
    bounds is the call path's to decide."""

    fault: Fault
    reason: str
    retry_after: float | None = None
    limits: RateLimitHeaders | None = None
    """What the answer's rate-limit headers said (a 429's), for the limiter to tell a spent budget from an overload."""
    no_capacity: bool = False
    """A 429 that says the provider has no capacity for the tier asked (OpenAI flex's "resource unavailable"),
    not that this endpoint sent too much: retried like any 429, but it tells the limiter nothing of the rate."""

    @property
    def retry(self) -> bool:
        """Whether this fault is worth another attempt at all."""
        return self.fault.retryable

    @property
    def rate_limited(self) -> bool:
        return self.fault is Fault.RATE_LIMITED


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where requests go; the limiter key. ``key_id`` is a short hash, never the key itself."""

    provider: str
    base_url: str | None
    key_id: str | None = field(default=None)


class Provider(Protocol):
    """One model at one endpoint."""

    name: str
    model: str
    endpoint: Endpoint
    service_tier: ServiceTier
    """The tier its requests are bought at (recorded and priced per call; not part of the cache key)."""

    async def generate(
        self,
        messages: list[Message],
        params: SamplingParams,
        timeout: float,
        facts: PromptFacts | None = None,
        *,
        cache: CacheHints | None = None,
    ) -> Completion:
        """The model's answer to ``messages``. ``facts`` is for stand-in models (see PromptFacts);
        a provider that sends requests to a real model ignores it. ``cache`` tells a provider whose prompt
        caching needs it where the reusable prefixes end (see CacheHints); the others ignore it."""
        ...

    def should_retry(self, error: BaseException) -> RetryDecision: ...

    async def aclose(self) -> None: ...


def retry_after_seconds(headers: Mapping[str, str] | None, body: object = None) -> float | None:
    """The wait a server asked for: ``retry-after-ms``, ``retry-after`` (seconds or an HTTP date),
    or a ``retry_after``/``retry-after`` field in a JSON error body."""
    if headers:
        lower = {k.lower(): v for k, v in headers.items()}
        if (ms := lower.get("retry-after-ms")) is not None:
            try:
                seconds = float(ms) / 1000.0
            except ValueError:
                seconds = math.nan
            if math.isfinite(seconds):
                return max(0.0, seconds)
        if (value := lower.get("retry-after")) is not None:
            try:
                seconds = float(value)
            except ValueError:
                try:
                    seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
                except (TypeError, ValueError, IndexError, OverflowError):
                    seconds = math.nan  # unreadable: ignore it
            if math.isfinite(seconds):
                return max(0.0, seconds)
    return _retry_after_in_body(body)


def _retry_after_in_body(body: object) -> float | None:
    if isinstance(body, (str, bytes)):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    if isinstance(body, dict):
        for key in ("retry_after", "retry-after", "retryAfter"):
            value = body.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                return max(0.0, float(value))
        for nested in body.values():
            if isinstance(nested, dict) and (found := _retry_after_in_body(nested)) is not None:
                return found
    return None


def status_fault(status: int) -> Fault:
    """429 is a rate limit, 408, 409, 5xx and 529 are transient, 401 and 403 refuse the key, any other status
    refuses the request."""
    if status == 429:
        return Fault.RATE_LIMITED
    if status in RETRYABLE_STATUS or 500 <= status < 600:
        return Fault.TRANSIENT
    if status in AUTH_STATUS:
        return Fault.AUTHENTICATION
    return Fault.REJECTED


def decide_status(status: int, headers: Mapping[str, str] | None, body: object, message: str) -> RetryDecision:
    """The decision for an HTTP error status (see :func:`status_fault`), with the server's requested wait."""
    fault = status_fault(status)
    rate_limited = fault is Fault.RATE_LIMITED
    return RetryDecision(
        fault=fault,
        reason=f"HTTP {status}: {message}"[:500],
        retry_after=retry_after_seconds(headers, body) if fault.retryable else None,
        limits=parse_rate_limit_headers(headers) if rate_limited else None,
        no_capacity=rate_limited and resource_unavailable(body, message),
    )


RESOURCE_UNAVAILABLE = "resource_unavailable"
"""The ``error.code`` of OpenAI's 429 to a flex request it has no capacity for."""


def resource_unavailable(body: object, message: str) -> bool:
    """Whether a 429 says the provider has no capacity for the request's tier (OpenAI flex: ``code:
    resource_unavailable``, or a message saying "resource unavailable"), in any case, not that a limit was hit."""
    error = body.get("error", body) if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    said = error.get("message") if isinstance(error, dict) else None
    if isinstance(code, str) and code.lower() == RESOURCE_UNAVAILABLE:
        return True
    words = RESOURCE_UNAVAILABLE.replace("_", " ")
    return any(isinstance(text, str) and words in text.lower() for text in (said, message))


def estimate_tokens(messages: list[Message]) -> int:
    """A cheap upper-ish estimate for the tokens-per-minute limiter (about 4 characters a token)."""
    return sum(len(m.get("content", "")) // 4 + 4 for m in messages) + 2


def key_id(api_key: str | None) -> str | None:
    """A short SHA-256 prefix: tells endpoints with different keys apart without storing a key."""
    return hashlib.sha256(api_key.encode("utf-8")).hexdigest()[:12] if api_key else None


# Handed to an SDK for a keyless client, only so that it does not look for a key in the environment;
# the header it would make of it is left out (see keyless_headers).
KEYLESS_PLACEHOLDER = "keyless"


def keyless_headers(
    credential_headers: Iterable[str], custom_headers_env: str, omit: object, environ: Mapping[str, str] = os.environ
) -> dict[str, object]:
    """``default_headers`` that leave every credential out of a keyless client's requests.

    ``omit`` is the SDK's ``Omit()``: given as a default header's value it removes that header. Left out:
    ``credential_headers`` (the key's), and each header the SDK would add from ``custom_headers_env``
    (``OPENAI_CUSTOM_HEADERS``: ``Name: value`` lines), which may carry a gateway's credentials."""
    names = list(credential_headers)
    for line in (environ.get(custom_headers_env) or "").split("\n"):
        name, colon, _ = line.partition(":")
        if colon and name.strip():
            names.append(name.strip())
    return dict.fromkeys(names, omit)


def status_message(body: object, fallback: str) -> str:
    """The server's own words (``error.message``) rather than the SDK's dump of the whole body."""
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str) and message:
            return message
        if isinstance(error, str) and error:
            return error
    return fallback


def local_decision(error: BaseException, scrub: Callable[[str], str] = str) -> RetryDecision:
    """``should_retry`` for an error raised on this side of the wire: a deadline (``TimeoutError``, as the
    call path imposes one) is retried, anything else (a bug, a bad argument) is not."""
    if isinstance(error, TimeoutError):
        return RetryDecision(Fault.TIMEOUT, "timeout")
    return RetryDecision(Fault.REJECTED, scrub(f"{type(error).__name__}: {error}")[:500])
