"""The key a response is cached under: what determines the distribution an answer is drawn from.

The key (:func:`cache_key`) is the SHA-256 of a canonical JSON of provider, model, base URL,
messages, parameters and sample identity — the things that determine the distribution an answer
is drawn from, and which draw it is. The API key is not an input: who pays does not change the
answer, and a secret must never reach a file. The sample identity (condition, replicate, seat;
:class:`~harness.providers.base.Sample`) makes every seat of every game its own draw: two seats
that see the same prompt (round 1 of self-play) or one model facing several opponents get
independent answers rather than one answer replayed; it holds no run id, so the same experiment
run again is answered from the cache.
"""

from __future__ import annotations

import hashlib
import json
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def canonical_json(value: Any) -> str:
    """The canonical JSON the cache key hashes: sorted keys, no spaces, UTF-8 text, no NaN or infinity."""
    return _CANONICAL(value)


def cache_key(
    provider: str,
    model: str,
    base_url: str | None,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    sample: dict[str, Any],
) -> str:
    """SHA-256 hex of the canonical JSON of exactly these fields (sorted keys, no spaces).

    A trailing ``/`` of the base URL is dropped (it names the same server). Parameters must
    be JSON values; a non-finite float is refused, since JSON has no spelling for it.
    """
    document = {
        "provider": provider,
        "model": model,
        "base_url": base_url.rstrip("/") if base_url else None,
        "messages": messages,
        "params": params,
        "sample": sample,
    }
    try:
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache key: messages and params must be plain JSON values ({exc})") from exc
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def cache_key_parts(
    provider: str, model: str, base_url: str | None, params: dict[str, Any], sample: dict[str, Any]
) -> tuple[str, str]:
    """The canonical document of :func:`cache_key` around its messages, as ``(head, tail)``.

    ``cache_key(...) == cache_key_join(head, canonical_json(messages), tail)``: a caller that
    makes many requests with the same provider, model, parameters and sample identity builds these
    once, and a caller that has the messages as canonical JSON already does not encode them again.
    """
    try:
        return (
            f'{{"base_url":{_CANONICAL(base_url.rstrip("/") if base_url else None)},"messages":',
            f',"model":{_CANONICAL(model)},"params":{_CANONICAL(params)},"provider":{_CANONICAL(provider)},'
            f'"sample":{_CANONICAL(sample)}}}',
        )  # the keys in sorted order, as json.dumps(sort_keys=True) writes them
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cache key: messages and params must be plain JSON values ({exc})") from exc


def cache_key_join(head: str, messages_json: str, tail: str) -> str:
    """The key from :func:`cache_key_parts` and the messages as ``canonical_json(messages)``."""
    return hashlib.sha256(f"{head}{messages_json}{tail}".encode()).hexdigest()


_JSON_STRINGS: dict[str, str] = {}


def json_string(text: str) -> str:
    """``text`` as a JSON string literal, exactly as ``json.dumps(text, ensure_ascii=False)`` writes it.

    For ASCII text without DEL that is also what ``ensure_ascii=True`` writes. The strings of the
    latest requests are remembered: a request's messages are encoded for its record and cache key,
    and again by a provider that hashes them (the mock), and a system prompt recurs all game long.
    """
    try:
        return _JSON_STRINGS[text]
    except KeyError:
        pass
    # The ASCII escaper gives the same bytes for ASCII text without DEL, and is about twice as fast.
    literal: str = encode_basestring_ascii(text) if text.isascii() and "\x7f" not in text else encode_basestring(text)
    if len(_JSON_STRINGS) >= 256:
        _JSON_STRINGS.clear()
    _JSON_STRINGS[text] = literal
    return literal
