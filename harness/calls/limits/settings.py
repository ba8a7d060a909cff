"""The limits of one endpoint as the user configures them, and the bounds that keep any setting runnable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from harness.util.bounds import MAX_CONCURRENCY as MAX_CONCURRENCY
from harness.util.bounds import MAX_RPM as MAX_RPM
from harness.util.bounds import MAX_TPM as MAX_TPM
from harness.util.bounds import MIN_RPM as MIN_RPM
from harness.util.bounds import MIN_TPM as MIN_TPM

WINDOW_S = 60.0  # providers state limits per minute; a rolling minute is the strictest reading


class LimitSettings(BaseModel):
    """The limits of one endpoint. ``None`` means unlimited in that dimension."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # Bounded so that no setting can stall a run: at 0.1 rpm requests are 10 minutes apart, and at 100
    # tpm a request waits (its tokens) * 60 / 100 s: slow, but it starts.
    concurrency: int | None = Field(8, ge=1, le=MAX_CONCURRENCY, description="max requests in flight")
    rpm: float | None = Field(None, ge=MIN_RPM, le=MAX_RPM, description="max requests started per minute")
    tpm: float | None = Field(None, ge=MIN_TPM, le=MAX_TPM, description="max tokens (input + output) per minute")
