"""What a provider's rate-limit headers say: the limit, what is left of it, and when it resets.

OpenAI (and most OpenAI-compatible servers) send ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``,
the reset as a duration (``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``); Anthropic sends
``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``, the reset as
an RFC 3339 time. Both state limits per minute. A 429 carries them, so the limiter can tell at once
whether a refusal means the account's limit was reached (nothing remaining) rather than an overload,
and what the limit is, instead of guessing it from a minute of refusals (see :mod:`harness.calls.limits`).
Unreadable values are ignored, never raised: a header is a hint, not a contract.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

_NUMBER = r"(\d+(?:\.\d+)?)"
_DURATION = re.compile(rf"(?:{_NUMBER}d)?(?:{_NUMBER}h)?(?:{_NUMBER}m(?!s))?(?:{_NUMBER}s)?(?:{_NUMBER}ms)?")


@dataclass(frozen=True, slots=True)
class RateLimitHeaders:
    """The rate-limit state one answer reported; ``None`` where the server said nothing (readable)."""

    requests_limit: float | None = None  # requests per minute
    requests_remaining: float | None = None
    requests_reset_s: float | None = None  # seconds until the request budget is full again
    tokens_limit: float | None = None  # tokens per minute
    tokens_remaining: float | None = None
    tokens_reset_s: float | None = None

    @property
    def exhausted(self) -> bool:
        """Whether the server says a budget is spent: the refusal is the account's limit, not an overload."""
        return self.requests_remaining == 0 or self.tokens_remaining == 0

    @property
    def reset_s(self) -> float | None:
        """When the spent budget is back: the longest reset of a budget that is spent, else None."""
        waits = [
            reset
            for remaining, reset in (
                (self.requests_remaining, self.requests_reset_s),
                (self.tokens_remaining, self.tokens_reset_s),
            )
            if remaining == 0 and reset is not None
        ]
        return max(waits) if waits else None

    @property
    def empty(self) -> bool:
        return self == RateLimitHeaders()


def parse_rate_limit_headers(headers: Mapping[str, str] | None, now: float | None = None) -> RateLimitHeaders | None:
    """The rate-limit headers of one answer, OpenAI's or Anthropic's; None if it sent none that could be read.

    ``now`` is the wall-clock time (``time.time()``) that Anthropic's reset times are measured from."""
    if not headers:
        return None
    h = {k.lower(): v for k, v in headers.items()}
    wall = time.time() if now is None else now
    state = RateLimitHeaders(
        requests_limit=_number(h.get("x-ratelimit-limit-requests") or h.get("anthropic-ratelimit-requests-limit")),
        requests_remaining=_number(
            h.get("x-ratelimit-remaining-requests") or h.get("anthropic-ratelimit-requests-remaining")
        ),
        requests_reset_s=_first(
            _duration(h.get("x-ratelimit-reset-requests")), _until(h.get("anthropic-ratelimit-requests-reset"), wall)
        ),
        tokens_limit=_number(h.get("x-ratelimit-limit-tokens") or h.get("anthropic-ratelimit-tokens-limit")),
        tokens_remaining=_lowest(
            h.get("x-ratelimit-remaining-tokens"),
            h.get("anthropic-ratelimit-tokens-remaining"),
            h.get("anthropic-ratelimit-input-tokens-remaining"),
            h.get("anthropic-ratelimit-output-tokens-remaining"),
        ),
        tokens_reset_s=_first(
            _duration(h.get("x-ratelimit-reset-tokens")),
            _latest(
                wall,
                h.get("anthropic-ratelimit-tokens-reset"),
                h.get("anthropic-ratelimit-input-tokens-reset"),
                h.get("anthropic-ratelimit-output-tokens-reset"),
            ),
        ),
    )
    return None if state.empty else state


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def _number(text: str | None) -> float | None:
    """A count >= 0, or None if absent or unreadable."""
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _lowest(*texts: str | None) -> float | None:
    values = [v for v in map(_number, texts) if v is not None]
    return min(values) if values else None


def _duration(text: str | None) -> float | None:
    """OpenAI's reset: ``1s``, ``6m0s``, ``20ms``, ``1h2m3.5s``, ``1d2h``, or plain seconds; None if unreadable."""
    if text is None:
        return None
    text = text.strip()
    if (plain := _number(text)) is not None:
        return plain
    match = _DURATION.fullmatch(text)
    if not text or match is None or not any(match.groups()):
        return None
    days, hours, minutes, seconds, millis = (float(g) if g else 0.0 for g in match.groups())
    return days * 86400 + hours * 3600 + minutes * 60 + seconds + millis / 1000


def _until(text: str | None, now: float) -> float | None:
    """Anthropic's reset, an RFC 3339 time, as seconds from ``now`` (0 if past); None if unreadable."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return max(0.0, moment.timestamp() - now)


def _latest(now: float, *texts: str | None) -> float | None:
    values = [v for v in (_until(t, now) for t in texts) if v is not None]
    return max(values) if values else None
