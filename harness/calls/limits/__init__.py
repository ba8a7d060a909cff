"""Per-endpoint rate limiting: concurrency, requests/min and tokens/min at once, adaptive on 429.

One :class:`EndpointLimiter` per endpoint, handed out by :class:`LimiterRegistry` to every game
of the process; the call path waits in it, agents never sleep. The modules, one concept each:

* :mod:`harness.calls.limits.settings`: :class:`LimitSettings` (what the user configures) and its bounds.
* :mod:`harness.calls.limits.pacing`: requests/min and tokens/min (GCRA and a rolling-minute token ledger).
* :mod:`harness.calls.limits.adaptation`: what a 429 changes (a stray one: nothing; the limit reached: a pause
  and a learned rate that climbs back).
* :mod:`harness.calls.limits.endpoint`: :class:`EndpointLimiter`, the FIFO line that admits a request
  when all of these allow it, and its counters for the live display.
* :mod:`harness.calls.limits.registry`: :class:`LimiterRegistry`, one limiter per endpoint (provider, normalised
  URL, key), and which limits apply when agents on one endpoint disagree.
"""

from typing import TYPE_CHECKING

from harness.util.lazy import lazy_exports

if TYPE_CHECKING:
    from harness.calls.limits.adaptation import MAX_PAUSE_S
    from harness.calls.limits.endpoint import Clock, EndpointLimiter, LimiterClosed, LimiterSnapshot, Permit
    from harness.calls.limits.registry import LimiterRegistry
    from harness.calls.limits.settings import MAX_CONCURRENCY, MAX_RPM, MAX_TPM, MIN_RPM, MIN_TPM, LimitSettings

# Loaded on first use (see harness.util.lazy): the CLI reads the bounds of limits.settings without the limiters.
__getattr__ = lazy_exports(
    __name__,
    {
        "MAX_PAUSE_S": "adaptation",
        **dict.fromkeys(("Clock", "EndpointLimiter", "LimiterClosed", "LimiterSnapshot", "Permit"), "endpoint"),
        "LimiterRegistry": "registry",
        **dict.fromkeys(("MAX_CONCURRENCY", "MAX_RPM", "MAX_TPM", "MIN_RPM", "MIN_TPM", "LimitSettings"), "settings"),
    },
)

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_PAUSE_S",
    "MAX_RPM",
    "MAX_TPM",
    "MIN_RPM",
    "MIN_TPM",
    "Clock",
    "EndpointLimiter",
    "LimitSettings",
    "LimiterClosed",
    "LimiterRegistry",
    "LimiterSnapshot",
    "Permit",
]
