"""How a call is bought: the provider's service tier, and how long a prompt-cache write lasts.

Both decide a call's price (:mod:`harness.calls.pricing` prices a call at its tier) and what is sent to the
provider, so they live here, below the call path, where providers and callers alike can name them.
"""

from __future__ import annotations

from enum import StrEnum


class ServiceTier(StrEnum):
    """The price tier a call is bought at."""

    STANDARD = "standard"
    """Synchronous, at the list price."""
    FLEX = "flex"
    """OpenAI's ``service_tier="flex"``: synchronous, slower, at about half the price; only some models offer it."""
    BATCH = "batch"
    """A provider batch (OpenAI Batch API, Anthropic Message Batches): answered within 24 h, at half the price."""


class CacheTtl(StrEnum):
    """How long an Anthropic prompt-cache write lasts (its ``cache_control.ttl``): a longer life costs more
    to write. OpenAI's cache has no such choice and writes for free."""

    FIVE_MINUTES = "5m"
    ONE_HOUR = "1h"
