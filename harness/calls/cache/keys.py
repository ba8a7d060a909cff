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
from typing import Any


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
