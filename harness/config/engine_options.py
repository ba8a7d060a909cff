"""How a run makes its model calls (cache, prices, budget, retries, parallelism): chosen by the CLI or the
dashboard from flags and the environment, read by the engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.calls.batch import BatchSettings
from harness.calls.path import RetrySettings
from harness.calls.pricing import DEFAULT_PRICES

if TYPE_CHECKING:
    import httpx2


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """How model calls are made: cache, prices, budget, retries, parallelism (ignored by strategy-only runs)."""

    cache_path: Path | None = None  # None: no cache (--no-cache)
    prices: tuple[Path, ...] = (DEFAULT_PRICES,)
    max_cost: float | None = None
    retry: RetrySettings = field(default_factory=RetrySettings)
    workers: int = 64  # at most this many games in flight, whatever the endpoints could serve
    batch: BatchSettings = field(default_factory=BatchSettings)  # when batches are submitted and polled
    http_client: httpx2.AsyncClient | None = None  # tests inject a transport-level client
