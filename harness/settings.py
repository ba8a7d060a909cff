"""Engine settings a run takes from its surroundings: where the response cache lives, retry bounds.

Shared by the CLI and the dashboard, so a run started from either behaves the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from harness.calls import RetrySettings
from harness.errors import ConfigError
from harness.pricing import DEFAULT_PRICES
from harness.runner import EngineOptions


def cache_path(results: Path, no_cache: bool) -> Path | None:
    """The shared response cache: $PDBENCH_CACHE, or <results>/.cache/responses.sqlite."""
    if no_cache:
        return None
    return Path(os.environ.get("PDBENCH_CACHE") or results / ".cache" / "responses.sqlite")


def engine_options(results: Path, *, no_cache: bool = False, max_cost: float | None = None,
                   prices: Path | None = None) -> EngineOptions:  # fmt: skip
    return EngineOptions(
        cache_path=cache_path(results, no_cache),
        prices=(prices, DEFAULT_PRICES) if prices else (DEFAULT_PRICES,),
        max_cost=max_cost,
        retry=retry_settings(os.environ),
    )


def retry_settings(environ: Mapping[str, str]) -> RetrySettings:
    """Retry bounds from PDBENCH_MAX_ATTEMPTS, PDBENCH_RETRY_SECONDS, PDBENCH_TIMEOUT, PDBENCH_BACKOFF."""
    names = {"PDBENCH_MAX_ATTEMPTS": "max_attempts", "PDBENCH_RETRY_SECONDS": "max_seconds",
             "PDBENCH_TIMEOUT": "timeout", "PDBENCH_BACKOFF": "backoff_initial"}  # fmt: skip
    values = {field: environ[var] for var, field in names.items() if environ.get(var)}
    try:
        return RetrySettings.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(
            f"invalid retry settings in the environment: {exc.errors()[0]['msg']} ({', '.join(names)})"
        ) from None
