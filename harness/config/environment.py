"""The ``PDBENCH_*`` environment variables, read through pydantic-settings.

Kept apart from :mod:`harness.config.run_settings` and imported only when a variable is read: pydantic-settings
costs about 0.1 s of CPU to import, which ``pdbench --help`` should not pay.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

# Upper bounds of the retry settings read from the environment, in seconds: an infinite timeout would let a
# dead server stall a run for ever.
MAX_SECONDS = {"RETRY_SECONDS": 86_400.0, "TIMEOUT": 3_600.0, "BACKOFF": 3_600.0}


class _Environment(BaseSettings):
    """``PDBENCH_*`` variables, read from the environment each time an instance is made (the CLI loads
    ``./.env`` into the environment first, variables already set winning). An empty variable counts as
    unset, so ``PDBENCH_RESULTS=`` in a script falls back to the default."""

    model_config = SettingsConfigDict(env_prefix="PDBENCH_", case_sensitive=True, env_ignore_empty=True, extra="ignore")


class PathSettings(_Environment):
    """Where results and the response cache go, when no option says."""

    RESULTS: str | None = None
    CACHE: str | None = None


class RetryEnvironment(_Environment):
    """The retry bounds of every model call; each is bounded, so no value can make a run wait for ever
    (nan and infinity are out of range too)."""

    MAX_ATTEMPTS: int | None = None
    RETRY_SECONDS: float | None = Field(None, ge=0, le=MAX_SECONDS["RETRY_SECONDS"])
    TIMEOUT: float | None = Field(None, ge=0, le=MAX_SECONDS["TIMEOUT"])
    BACKOFF: float | None = Field(None, ge=0, le=MAX_SECONDS["BACKOFF"])


class BatchEnvironment(_Environment):
    """How batch mode gathers and polls: ``BATCH_GATHER``, the quiet seconds after the last request joined before
    a batch is submitted; ``BATCH_POLL``, the seconds before the first poll of a batch (each later wait half as
    long again, up to five minutes). Tests and local servers that answer at once set them low."""

    BATCH_GATHER: float | None = Field(None, ge=0, le=600.0)
    BATCH_POLL: float | None = Field(None, ge=0, le=3_600.0)
