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

# Upper bounds of the retry settings read from the environment, in seconds: an infinite timeout would let a
# dead server stall a run for ever.
MAX_SECONDS = {"max_seconds": 86_400.0, "timeout": 3_600.0, "backoff_initial": 3_600.0}


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
    for var, field in names.items():
        if field in values and field in MAX_SECONDS:
            try:
                seconds = float(values[field])
            except ValueError:
                continue  # the model's own message says it is not a number
            if not 0 <= seconds <= MAX_SECONDS[field]:  # also refuses nan and inf, which would wait for ever
                raise ConfigError(
                    f"{var}={values[field]} in the environment is out of range: give a number of seconds from 0 "
                    f"to {MAX_SECONDS[field]:,.0f}"
                )
    try:
        return RetrySettings.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(
            f"invalid retry settings in the environment: {exc.errors()[0]['msg']} ({', '.join(names)})"
        ) from None
