"""One limiter per endpoint, shared by every game of the process.

Providers limit an API key (an organisation) on a server, not a game: fifty games sharing one
key share one budget. An endpoint is told apart by its provider, base URL and a short SHA-256
of the key (:func:`harness.providers.base.key_id`); the key itself is never kept.
"""

from __future__ import annotations

import time

from harness.limits.endpoint import Clock, EndpointLimiter
from harness.limits.settings import LimitSettings
from harness.providers.base import key_id

EndpointKey = tuple[str, str | None, str | None]  # provider, base URL, key id


class LimiterRegistry:
    """One limiter per endpoint (provider, base URL, key id), shared by every game.

    The first ``get`` of an endpoint fixes its settings; later calls with other settings get
    the same limiter, since two budgets for one endpoint would together exceed it.
    """

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._limiters: dict[EndpointKey, EndpointLimiter] = {}

    def get(self, provider: str, base_url: str | None, api_key: str | None, settings: LimitSettings) -> EndpointLimiter:
        """The limiter of this endpoint, created on first use."""
        key = (provider, base_url.rstrip("/") if base_url else None, key_id(api_key))
        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = self._limiters[key] = EndpointLimiter(settings, clock=self._clock)
        return limiter

    def limiters(self) -> dict[EndpointKey, EndpointLimiter]:
        """Every endpoint's limiter, keyed by (provider, base URL, key id), for displays."""
        return dict(self._limiters)
